"""Topology summary: counts by kind, link rates by kind, bisection bandwidth.

Bisection bandwidth here is the min cut (sum of ``rate_bps``) between the
first and second half of the endpoints in canonical order (GPUs server-major,
or hosts by name; with an odd count the second half has the extra one),
computed by max-flow; it is a half-by-rank cut, not the
minimum over all bisections (NP-hard in general), which for the regular
builders (leaf-spine, fat tree, GPU clusters) is the usual bisection. It is
skipped above :data:`BISECTION_MAX_EDGES` links to keep ``topo show`` instant.
"""
from __future__ import annotations

from collections import Counter

import networkx as nx

from ..units import format_rate, format_time_ns
from .domains import domain_summary
from .query import endpoints, natural_key, nic_kind_of

BISECTION_MAX_EDGES = 20_000


def bisection_bandwidth_bps(graph: nx.Graph) -> float | None:
    """Min-cut capacity (bit/s, one direction) between the two halves of the endpoints.

    >>> from netsim.topology.builders import leaf_spine
    >>> bisection_bandwidth_bps(leaf_spine(4, 2, 4, host_rate_bps=100e9, fabric_rate_bps=100e9)) / 1e9
    400.0
    """
    eps = endpoints(graph)
    if len(eps) < 2:
        return None
    half = len(eps) // 2
    h = nx.Graph()
    for u, v, r in graph.edges(data="rate_bps"):
        h.add_edge(u, v, capacity=float(r))
    src, dst = ("__bisect_src__", 0), ("__bisect_dst__", 0)
    for n in eps[:half]:
        h.add_edge(src, n)  # no capacity attribute: infinite
    for n in eps[half:]:   # an odd endpoint goes to the second half: every endpoint is on one side
        h.add_edge(n, dst)
    return float(nx.minimum_cut_value(h, src, dst))


def switch_levels(graph: nx.Graph) -> dict:
    """Tier of every network switch: 1 = next to a NIC or host (leaf/ToR/rail), 2 = next to a
    level-1 switch (spine, aggregation), …, by breadth-first search over switch-to-switch links."""
    level: dict = {}
    frontier = []
    for n, k in graph.nodes(data="kind"):
        if k == "switch" and any(graph.nodes[v].get("kind") != "switch" for v in graph[n]):
            level[n] = 1
            frontier.append(n)
    while frontier:
        nxt = []
        for u in frontier:
            for v in graph[u]:
                if graph.nodes[v].get("kind") == "switch" and v not in level:
                    level[v] = level[u] + 1
                    nxt.append(v)
        frontier = nxt
    return level


def oversubscription_by_tier(graph: nx.Graph) -> list[dict]:
    """Downlink : uplink capacity of the switches of each tier that has uplinks.

    A switch's downlinks go to nodes of a lower tier (NICs, hosts, GPUs are
    tier 0), its uplinks to a higher tier or across its own (a dumbbell's
    bottleneck, a gateway pair). 1.0 is non-blocking, 4.0 is 4:1 oversubscribed.

    Returns
    -------
    list of dict
        Per tier, lowest first: ``tier`` (the switches' ``tier`` attribute when
        they share one, else ``level N``), ``level``, ``switches`` (with uplinks),
        ``min_ratio``, ``max_ratio``.

    >>> from netsim.topology.builders import leaf_spine
    >>> [(t["tier"], t["max_ratio"]) for t in oversubscription_by_tier(leaf_spine(4, 2, 8, fabric_rate_bps=100e9))]
    [('leaf', 4.0)]
    """
    level = switch_levels(graph)
    ratios: dict[int, list] = {}
    tiers: dict[int, set] = {}
    for n, lv in level.items():
        down = up = 0.0
        for v in graph[n]:
            other = level.get(v, 0)
            rate = float(graph.edges[n, v]["rate_bps"])
            if other < lv:
                down += rate
            else:
                up += rate
        if up > 0 and down > 0:
            ratios.setdefault(lv, []).append(down / up)
            tiers.setdefault(lv, set()).add(graph.nodes[n].get("tier"))
    out = []
    for lv in sorted(ratios):
        names = tiers[lv]
        name = next(iter(names)) if len(names) == 1 and None not in names else f"level {lv}"
        out.append({"tier": str(name), "level": lv, "switches": len(ratios[lv]),
                    "min_ratio": min(ratios[lv]), "max_ratio": max(ratios[lv])})
    return out


def summary(graph: nx.Graph, bisection: bool = True) -> dict:
    """Counts by node kind, link counts/rates by link kind, NIC kinds, servers, bisection bandwidth.

    Returns
    -------
    dict
        ``nodes`` (total), ``links`` (total), ``node_kinds`` {kind: count},
        ``link_kinds`` {kind: {"count", "rates_bps" {rate: count}, "delays_ns" {delay: count}}},
        ``nic_kinds`` {nic_kind: count}, ``servers`` (count), ``gpu_forwarding`` (bool), ``clusters``,
        ``scaleup_domains`` {"count", "sizes" {GPUs: domains}, "names"} (see
        :mod:`.domains`), ``oversubscription`` (:func:`oversubscription_by_tier`), ``bisection_bps`` (float, or None with ``bisection_note``).
    """
    nk = Counter(k for _, k in graph.nodes(data="kind"))
    lk: dict = {}
    for _, _, a in graph.edges(data=True):
        d = lk.setdefault(a["kind"], {"count": 0, "rates_bps": Counter(), "delays_ns": Counter()})
        d["count"] += 1
        d["rates_bps"][float(a["rate_bps"])] += 1
        d["delays_ns"][a["delay_ns"]] += 1
    out = {
        "name": str(graph.graph.get("name", "")),
        "nodes": graph.number_of_nodes(),
        "links": graph.number_of_edges(),
        "node_kinds": dict(sorted(nk.items())),
        "link_kinds": {k: {"count": v["count"], "rates_bps": dict(sorted(v["rates_bps"].items())),
                           "delays_ns": dict(sorted(v["delays_ns"].items()))} for k, v in sorted(lk.items())},
        "nic_kinds": dict(sorted(Counter(a["nic_kind"] if "nic_kind" in a else f"{nic_kind_of(graph, n)} (unset)"
                                         for n, a in graph.nodes(data=True) if a.get("kind") == "nic").items())),
        "servers": len({a["server"] for _, a in graph.nodes(data=True) if "server" in a}),
        "gpu_forwarding": bool(graph.graph.get("gpu_forwarding", False)),
        "host_forwarding": bool(graph.graph.get("host_forwarding", False)),
        "clusters": sorted({str(a["cluster"]) for _, a in graph.nodes(data=True) if "cluster" in a},
                           key=natural_key),
        "scaleup_domains": domain_summary(graph),
        "oversubscription": oversubscription_by_tier(graph),
        "connected": nx.is_connected(graph) if graph.number_of_nodes() else False,
        "bisection_bps": None,
    }
    if not bisection:
        out["bisection_note"] = "not computed"
    elif graph.number_of_edges() > BISECTION_MAX_EDGES:
        out["bisection_note"] = f"skipped: more than {BISECTION_MAX_EDGES} links"
    else:
        out["bisection_bps"] = bisection_bandwidth_bps(graph)
        out["bisection_note"] = "min cut between first and second half of endpoints (rank order)"
    return out


def format_summary(s: dict) -> str:
    """Human-readable lines for ``netsim topo show``."""
    lines = [f"topology {s['name'] or '(unnamed)'}: {s['nodes']} nodes, {s['links']} links"
             + ("" if s["connected"] else " (NOT connected)")]
    lines.append("nodes: " + ", ".join(f"{k}={v}" for k, v in s["node_kinds"].items()))
    if s["servers"]:
        lines.append(f"servers: {s['servers']}" + (f" in clusters {', '.join(s['clusters'])}" if s["clusters"] else ""))
    dom = s.get("scaleup_domains") or {}
    if dom.get("count"):
        sizes = ", ".join(f"{c} x {n} GPU{'s' if n > 1 else ''}" for n, c in dom["sizes"].items())
        names = f": {', '.join(dom['names'])}" if dom.get("names") else ""
        lines.append(f"scale-up domains (GPUs joined by NVLink/NVSwitch/PCIe, no NIC): {dom['count']} "
                     f"({sizes}){names}" + ("; the server attributes group GPUs otherwise, and hierarchical "
                                             "collectives follow them" if dom.get("server_attr_differs") else ""))
    if s.get("gpu_forwarding"):
        lines.append("GPU forwarding: on (routes may transit GPUs; every backend relays through them)")
    if s.get("host_forwarding"):
        lines.append("host forwarding: on (routes may transit hosts: an ns-3 file without switches)")
    if s["nic_kinds"]:
        lines.append("nic kinds: " + ", ".join(f"{k}={v}" for k, v in s["nic_kinds"].items()))
    for kind, d in s["link_kinds"].items():
        rates = ", ".join(f"{format_rate(r)} x{c}" for r, c in d["rates_bps"].items())
        delays = ", ".join(f"{format_time_ns(t)} x{c}" for t, c in d["delays_ns"].items())
        lines.append(f"links {kind}: {d['count']} (rate {rates}; delay {delays})")
    for t in s.get("oversubscription") or []:
        lo, hi = t["min_ratio"], t["max_ratio"]
        ratio = f"{lo:.3g}:1" if abs(hi - lo) <= 1e-9 * hi else f"{lo:.3g}:1 to {hi:.3g}:1"
        lines.append(f"oversubscription {t['tier']} (downlink:uplink, {t['switches']} switches): {ratio}"
                     + (" (non-blocking)" if hi <= 1 + 1e-9 else ""))
    if s.get("bisection_bps") is not None:
        lines.append(f"bisection bandwidth: {format_rate(s['bisection_bps'])} ({s['bisection_note']})")
    elif s.get("bisection_note"):
        lines.append(f"bisection bandwidth: {s['bisection_note']}")
    return "\n".join(lines)
