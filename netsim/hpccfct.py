"""HPCC ns-3's ``fct.txt`` from any backend's ``fct.csv``, and ``fct_nodes.csv`` to read its addresses back.

HPCC's ns-3 (``simulation/scratch/third.cc``, ``qp_finish``) writes one line
per finished flow, in the order the senders see their last ACK::

    sip dip sport dport size_bytes start_ns fct_ns standalone_fct_ns

* ``sip``/``dip``: the nodes' addresses as 8 hex digits, HPCC's rule
  ``0x0b000001 + ((id // 256) << 16) + ((id % 256) << 8)`` (:func:`hpcc_ip`);
* ``sport``: 10000, 10001, ... per (src, dst) pair in the order the flows
  start (HPCC's ``portNumber[src][dst]++``); ``dport``: the flow's HPCC
  ``dport`` (tag ``dport=N`` from an HPCC ``flow.txt``), else 100;
* ``fct_ns``: start to the sender's receipt of the last ACK. The packet
  backend measures it (``ack_fct_ns``); the flow and analytic backends end a
  flow when its last byte arrives, so their ``fct_ns`` here is that FCT plus
  the uncongested return of one ACK (``ack_bytes`` serialized store-and-forward
  on each reverse hop, plus the hops' propagation delays);
* ``standalone_fct_ns``: HPCC's ideal, ``base_rtt + total_bytes * 8 / bottleneck``,
  with ``base_rtt = 2 * sum(delay) + sum(mss * 8 / rate)`` over the path and
  ``total_bytes`` the payload plus one ``header_bytes`` per packet.
* a self-send (``src == dst``, a local copy HPCC's ns-3 has no flow for) keeps
  its line, with its ``fct.csv`` FCT (0) and ``standalone_fct_ns`` 0, so
  ``fct.txt`` has one line per ``fct.csv`` row.

Node ids: an HPCC ``topology.txt`` names its nodes ``"0".."N-1"`` and those
numbers are the ids; any other topology numbers its nodes in graph order.
``fct_nodes.csv`` (``node_id,hpcc_ip,node``, every node) maps each address
written back to the node's name.

Left out: HPCC's per-flow ``maxPacketCount`` and the ns-3 time resolution
(times here are integer ns, as in HPCC's default).
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass

from .topology.hpcc import ascii_int

#: first port HPCC's third.cc gives the flows of one (src, dst) pair
FIRST_SPORT = 10000
#: HPCC dport of a flow without one (HPCC's traffic_gen.py writes 100)
DEFAULT_DPORT = 100
NODE_MAP_COLUMNS = ("node_id", "hpcc_ip", "node")


def hpcc_ip(node_id: int) -> int:
    """HPCC ns-3's address of node ``node_id``: 0x0b000001 + ((id/256)<<16) + ((id%256)<<8).

    >>> f"{hpcc_ip(0):08x} {hpcc_ip(257):08x}"
    '0b000001 0b010101'
    """
    return 0x0B000001 + ((node_id // 256) << 16) + ((node_id % 256) << 8)


def node_ids(graph) -> dict:
    """Node name -> HPCC id: the names' numbers when every name is ASCII digits, else the graph order.

    >>> import networkx as nx
    >>> node_ids(nx.path_graph(["a", "b"])), node_ids(nx.path_graph(["3", "1"]))
    ({'a': 0, 'b': 1}, {'3': 3, '1': 1})
    """
    nums = {n: ascii_int(n) if isinstance(n, str) else None for n in graph.nodes}
    if all(v is not None for v in nums.values()) and len(set(nums.values())) == len(nums):
        return dict(nums)
    return {n: i for i, n in enumerate(graph.nodes)}


@dataclass(frozen=True)
class WireSizes:
    """Packet sizes of the run (``--set mtu_bytes/header_bytes/ack_bytes``), in bytes."""

    mtu_bytes: int
    header_bytes: int
    ack_bytes: int

    @classmethod
    def from_params(cls, params: dict | None) -> "WireSizes":
        from .network.params import SIM_PARAMS, parse_override
        p = SIM_PARAMS.defaults()
        for key in ("mtu_bytes", "header_bytes", "ack_bytes"):
            if key in (params or {}):
                p[key] = parse_override(key, params[key])
        return cls(int(p["mtu_bytes"]), int(p["header_bytes"]), int(p["ack_bytes"]))


def _links(graph, path) -> list[tuple[float, float]]:
    return [(float(graph.edges[u, v]["rate_bps"]), float(graph.edges[u, v].get("delay_ns", 0)))
            for u, v in zip(path[:-1], path[1:])]


def standalone_fct_ns(links, size_bytes: int, mss_bytes: int, header_bytes: int) -> int:
    """HPCC's ``standalone_fct``: base RTT plus the flow's wire bytes at the bottleneck rate (ns).

    >>> standalone_fct_ns([(100e9, 1000.0), (100e9, 1000.0)], 1438, 1438, 62)  # 4000 + 2*115.04 + 120
    4350
    """
    base_rtt = 2 * sum(d for _, d in links) + sum(mss_bytes * 8e9 / r for r, _ in links)
    total = size_bytes + ((size_bytes - 1) // mss_bytes + 1) * header_bytes
    return int(base_rtt) + int(total * 8e9 / min(r for r, _ in links))


def ack_return_ns(links, ack_bytes: int) -> float:
    """One ACK back over ``links`` alone: serialization store-and-forward plus propagation (ns)."""
    return sum(ack_bytes * 8e9 / r + d for r, d in links)


def _mtu_on(graph, path, default: int) -> int:
    from .units import parse_size
    out = default
    for n in path:
        v = graph.nodes[n].get("mtu_bytes")
        if v is not None:
            out = min(out, int(v) if isinstance(v, (int, float)) else parse_size(v))
    return out


def _dport(tag: str) -> int:
    text = tag[6:] if tag.startswith("dport=") else tag
    n = ascii_int(text)
    return DEFAULT_DPORT if n is None else n


def write_fct_txt(out_dir: str, graph, *, params: dict | None = None, seed: int = 0,
                  ack_fct_ns: dict | None = None) -> list[str]:
    """Write ``fct.txt`` and ``fct_nodes.csv`` into ``out_dir`` from its ``fct.csv``.

    Parameters
    ----------
    out_dir : str
        A finished run's folder (holds ``fct.csv``).
    graph : networkx.Graph
        The run's topology.
    params : dict, optional
        The run's ``--set`` values (``mtu_bytes``, ``header_bytes``,
        ``ack_bytes`` and ``routing`` are used).
    seed : int
        The run's seed (ECMP hashing of each flow's path, as the backends do).
    ack_fct_ns : dict, optional
        ``flow_id -> fct_ns`` measured at the sender (last ACK received);
        flows not in it get their ``fct.csv`` FCT plus :func:`ack_return_ns`.

    Returns
    -------
    dict
        Rows written per file: ``{"fct.txt": flows, "fct_nodes.csv": nodes}``.
    """
    from .network.flowkey import NO_KEY, route_key
    from .topology import Router
    sizes = WireSizes.from_params(params)
    mode = str((params or {}).get("routing", "ecmp"))
    router = Router(graph, seed=seed, mode=mode if mode in ("ecmp", "spray") else "ecmp")
    ids = node_ids(graph)
    with open(os.path.join(out_dir, "fct.csv"), newline="", encoding="utf-8") as fh:
        recs = list(csv.DictReader(fh))
    sport: dict = {}
    for r in sorted(recs, key=lambda r: (int(r["start_ns"]), int(r["flow_id"]))):
        key = (r["src"], r["dst"])
        r["_sport"] = sport[key] = sport.get(key, FIRST_SPORT - 1) + 1
    rows = []
    for r in recs:
        fid, size = int(r["flow_id"]), int(r["size_bytes"])
        if r["src"] == r["dst"]:   # a self-send: a local copy, no path (FCT 0 in fct.csv, standalone 0)
            start, fct = int(r["start_ns"]), int(r["fct_ns"])
            rows.append((start + fct, fid, f"{hpcc_ip(ids[r['src']]):08x} {hpcc_ip(ids[r['dst']]):08x} "
                                           f"{r['_sport']} {_dport(r['tag'])} {size} {start} {fct} 0"))
            continue
        path = router.path(r["src"], r["dst"], route_key(int(r.get("path_key") or NO_KEY), fid))  # the backend's path
        links = _links(graph, path)
        mss = _mtu_on(graph, path, sizes.mtu_bytes) - sizes.header_bytes
        if ack_fct_ns is not None and fid in ack_fct_ns:
            fct = int(ack_fct_ns[fid])
        else:
            fct = int(r["fct_ns"]) + int(round(ack_return_ns(links, sizes.ack_bytes)))
        start = int(r["start_ns"])
        line = (f"{hpcc_ip(ids[r['src']]):08x} {hpcc_ip(ids[r['dst']]):08x} {r['_sport']} {_dport(r['tag'])} "
                f"{size} {start} {fct} {standalone_fct_ns(links, size, mss, sizes.header_bytes)}")
        rows.append((start + fct, fid, line))
    rows.sort()
    from .records import atomic_output  # NAME.partial renamed when whole
    with atomic_output(os.path.join(out_dir, "fct.txt"), encoding="utf-8", newline="\n") as fh:
        fh.writelines(line + "\n" for _, _, line in rows)
    with atomic_output(os.path.join(out_dir, "fct_nodes.csv"), encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(NODE_MAP_COLUMNS)
        for n, i in sorted(ids.items(), key=lambda kv: kv[1]):
            w.writerow((i, f"{hpcc_ip(i):08x}", n))
    return {"fct.txt": len(rows), "fct_nodes.csv": len(ids)}
