"""Scale-up domains: the GPUs that reach each other without crossing a NIC.

A scale-up domain is a connected component of the graph restricted to
NVLink and PCIe links (:data:`SCALEUP_LINK_KINDS`) that do not touch a NIC
(NVLink may pass a node of kind ``switch``: an NVSwitch written as a plain
switch; PCIe may not, :data:`SCALE_OUT_NODE_KINDS`): GPUs joined through an
NVSwitch, directly by NVLink, or through PCIe switches and a CPU root
complex. One DGX-like server is one domain; an NVL72 rack (several NVSwitch
nodes joined by NVLink) is one domain of 72 GPUs; a GPU whose only way out is
its NIC is a domain of its own.

Grouping (:func:`domain_keys`): a node's explicit ``server`` attribute names
its group when present (the user said so); otherwise the derived domain
does. This is what hierarchical collectives use, and what ``netsim topo show``
lists.

Pure networkx, no SimPy. Left out: bandwidth inside a domain (a PCIe-only
domain counts as one as an NVSwitch domain does), multi-rail NVLink
partitions (an NVSwitch with a partition table), C2C links to a CPU.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

import networkx as nx

from .query import gpus, natural_key

#: link kinds that join a scale-up domain (``ethernet``/``infiniband`` are scale-out)
SCALEUP_LINK_KINDS = frozenset({"nvlink", "pcie"})
#: node kinds a scale-up domain never passes through over PCIe (leaving through them is scale-out);
#: NVLink links only ever exclude NICs
SCALE_OUT_NODE_KINDS = frozenset({"nic", "switch"})
#: domains listed by name in ``topo show`` when there are at most this many
NAMES_LISTED_MAX = 8


@dataclass(frozen=True)
class ScaleUpDomain:
    """One scale-up domain.

    Attributes
    ----------
    name : str
        The ``server`` attribute its GPUs share, or ``domain{i}`` (i in the
        order of each domain's first GPU in canonical rank order).
    gpus : tuple
        Its GPUs in canonical rank order (:func:`netsim.topology.gpus`).
    servers : tuple of str
        Distinct ``server`` attributes of its GPUs (empty when none carry one).
    """

    name: str
    gpus: tuple
    servers: tuple


def _scaleup_view(graph: nx.Graph) -> nx.Graph:
    """The subgraph of scale-up links: NVLink not touching a NIC, PCIe not touching a NIC or switch."""
    h = nx.Graph()
    kind = dict(graph.nodes(data="kind"))
    h.add_nodes_from(n for n, k in kind.items() if k != "nic")
    for u, v, k in graph.edges(data="kind"):
        if k not in SCALEUP_LINK_KINDS or "nic" in (kind[u], kind[v]):
            continue
        if k == "nvlink" or (kind[u] not in SCALE_OUT_NODE_KINDS and kind[v] not in SCALE_OUT_NODE_KINDS):
            h.add_edge(u, v)
    return h


def scaleup_components(graph: nx.Graph) -> dict:
    """Map every endpoint (GPU or host) to the index of its scale-up component.

    Components are numbered in natural name order of their endpoints, so the
    numbering is the same on every run.

    >>> from netsim.topology.builders import gpu_cluster
    >>> c = scaleup_components(gpu_cluster(servers=2, gpus_per_server=2, spines=0))
    >>> [c[n] for n in ("s0.gpu0", "s0.gpu1", "s1.gpu0", "s1.gpu1")]
    [0, 0, 1, 1]
    """
    h = _scaleup_view(graph)
    out: dict = {}
    nxt = 0
    for n in sorted((n for n, k in graph.nodes(data="kind") if k in ("gpu", "host")), key=natural_key):
        if n in out:
            continue
        for m in nx.node_connected_component(h, n):
            if graph.nodes[m].get("kind") in ("gpu", "host"):
                out[m] = nxt
        nxt += 1
    return out


def domain_labels(graph: nx.Graph) -> dict:
    """Map every GPU to the label that orders ranks: its ``server`` attribute, else the
    (natural-order) first GPU name of its scale-up domain. Used by :func:`netsim.topology.gpus`."""
    comp = scaleup_components(graph)
    first: dict[int, str] = {}
    gpu_nodes = sorted((n for n, k in graph.nodes(data="kind") if k == "gpu"), key=natural_key)
    for g in gpu_nodes:
        first.setdefault(comp[g], str(g))
    out = {}
    for g in gpu_nodes:
        s = graph.nodes[g].get("server")
        out[g] = str(s) if s is not None else first[comp[g]]
    return out


def scaleup_domains(graph: nx.Graph) -> list[ScaleUpDomain]:
    """The scale-up domains of the GPUs of ``graph`` (derived from links, not attributes).

    Returns
    -------
    list of ScaleUpDomain
        In the order of each domain's first GPU in canonical rank order.

    Examples
    --------
    >>> from netsim.topology.builders import gpu_cluster
    >>> [(d.name, len(d.gpus)) for d in scaleup_domains(gpu_cluster(servers=2, gpus_per_server=4, spines=0))]
    [('s0', 4), ('s1', 4)]
    """
    comp = scaleup_components(graph)
    members: dict[int, list] = {}
    for g in gpus(graph):
        members.setdefault(comp[g], []).append(g)
    out = []
    for i, ms in enumerate(members.values()):
        servers = tuple(sorted({str(graph.nodes[g]["server"]) for g in ms if "server" in graph.nodes[g]},
                               key=natural_key))
        named = len(servers) == 1 and all("server" in graph.nodes[g] for g in ms)
        out.append(ScaleUpDomain(servers[0] if named else f"domain{i}", tuple(ms), servers))
    return out


def domain_keys(graph: nx.Graph) -> dict:
    """Map every endpoint to its group key: ``("server", s)`` or ``("domain", i)``.

    The explicit ``server`` attribute wins; nodes without one get their derived
    scale-up component (:func:`scaleup_components`).
    """
    comp = scaleup_components(graph)
    out = {}
    for n, c in comp.items():
        s = graph.nodes[n].get("server")
        out[n] = ("server", s) if s is not None else ("domain", c)
    return out


def group_by_domain(nodes, keys: dict) -> list[list]:
    """Split ``nodes`` (kept in their order) into groups of equal :func:`domain_keys` key.

    >>> group_by_domain(["a", "b", "c"], {"a": ("domain", 0), "b": ("domain", 1), "c": ("domain", 0)})
    [['a', 'c'], ['b']]
    """
    by: dict[Hashable, list] = {}
    for n in nodes:
        by.setdefault(keys[n], []).append(n)
    return list(by.values())


def hierarchical_groups(nodes, keys: dict, where: str = "collective node_groups") -> list[list]:
    """The per-domain groups a hierarchical all-reduce over ``nodes`` runs on, or an error.

    Parameters
    ----------
    nodes : list
        The collective's ranks' nodes, in ring order (kept inside each group).
    keys : dict
        :func:`domain_keys` of the graph.
    where : str
        What an error names (the workload field or API argument).

    Raises
    ------
    InputError
        When every rank is alone in its domain (the algorithm would silently be
        a flat ring) or the domains hold different numbers of ranks.
    """
    from ..errors import InputError
    groups = group_by_domain(nodes, keys)
    sizes = sorted({len(g) for g in groups})
    if len(groups) > 1 and sizes == [1]:
        raise InputError("hierarchical all-reduce found one rank per scale-up domain (no 'server' attribute "
                         "and no NVLink/NVSwitch/PCIe link joins these GPUs)", where=where,
                         value=f"{len(nodes)} ranks in {len(groups)} domains",
                         accepted="algorithm ring, or GPUs sharing a server or scale-up domain")
    if len(sizes) > 1:
        raise InputError("hierarchical all-reduce needs the same number of ranks in every scale-up domain",
                         where=where, value="ranks per domain " + "/".join(str(len(g)) for g in groups),
                         accepted="equal domains (or algorithm ring)")
    return groups


def domain_summary(graph: nx.Graph) -> dict:
    """``count``, ``sizes`` {GPUs per domain: domains}, ``names`` (when at most
    :data:`NAMES_LISTED_MAX` domains, else None) of the derived scale-up domains, and
    ``server_attr_differs``: True when ``server`` attributes group GPUs otherwise
    (a domain spanning several servers, or a server split over domains) — the
    attribute then wins for hierarchical collectives."""
    doms = scaleup_domains(graph)
    sizes: dict[int, int] = {}
    for d in doms:
        sizes[len(d.gpus)] = sizes.get(len(d.gpus), 0) + 1
    seen: dict[str, int] = {}
    differs = False
    for i, d in enumerate(doms):
        differs |= len(d.servers) > 1 or (bool(d.servers) and len(d.servers) == 1 and
                                          any("server" not in graph.nodes[g] for g in d.gpus))
        for s in d.servers:
            differs |= seen.setdefault(s, i) != i
    return {"count": len(doms), "sizes": dict(sorted(sizes.items())),
            "names": [d.name for d in doms] if len(doms) <= NAMES_LISTED_MAX else None,
            "server_attr_differs": differs}
