"""Ideal (contention-free) flow completion time on a path.

The flow alone on its path, packetized store-and-forward: every hop
serializes a whole packet (headers included) at its rate before the packet
propagates to the next node, and a hop starts a packet as soon as it has
fully arrived and the hop has finished the previous packet. With ``n`` packets
— ``n - 1`` full ones of ``mtu_bytes`` and a last one of
``remainder + header_bytes`` — the departure of full packet ``i`` from hop
``k`` in a tandem of deterministic servers is

    D(i, k) = max_{j<=k} (i - 1) * s_j  +  sum_{m<=k} s_m  +  sum_{m<k} d_m

(``s`` serialization times, ``d`` propagation delays), and the short last
packet follows the recursion ``D(n, k) = max(D(n, k-1) + d_{k-1},
D(n-1, k)) + l_k``. The FCT is ``D(n, K) + d_K``: from the first bit leaving
the source to the last byte reaching the destination. Exact for a sender that
is never window-limited (the packet backend's ``--cc none`` window of one BDP
guarantees it).

Left out: queueing behind other traffic, congestion-control ramps, host-stack
cost, ACKs and the reverse path.

>>> import networkx as nx
>>> g = nx.Graph()
>>> g.add_edge("a", "s", rate_bps=100e9, delay_ns=1000)
>>> g.add_edge("s", "b", rate_bps=100e9, delay_ns=1000)
>>> ideal_fct_ns(g, ("a", "s", "b"), 1438, 1500, 62)   # one packet: 2 x (120 ns + 1 us)
2240
>>> ideal_fct_ns(g, ("a", "s", "b"), 2 * 1438, 1500, 62)  # pipelined: one more packet time
2360
"""
from __future__ import annotations

import math
from typing import Sequence

from ..errors import InputError


def hops(graph, path: Sequence) -> list[tuple[float, float]]:
    """``[(rate_bps, delay_ns), ...]`` of the links along ``path``."""
    out = []
    for u, v in zip(path[:-1], path[1:]):
        e = graph.edges[u, v]
        out.append((float(e["rate_bps"]), float(e.get("delay_ns", 0.0))))
    return out


def ideal_fct_exact_ns(links: Sequence[tuple[float, float]], size_bytes: int, mtu_bytes: int,
                       header_bytes: int) -> float:
    """Ideal FCT in (fractional) ns for ``links = [(rate_bps, delay_ns), ...]``."""
    mss = mtu_bytes - header_bytes
    if mss <= 0:
        raise InputError("mtu_bytes must exceed header_bytes", where="parameter mtu_bytes", value=mtu_bytes)
    if size_bytes <= 0:
        return 0.0
    n = math.ceil(size_bytes / mss)
    last = size_bytes - (n - 1) * mss + header_bytes
    s = [mtu_bytes * 8e9 / r for r, _ in links]
    ls = [last * 8e9 / r for r, _ in links]
    d = [dl for _, dl in links]
    # departure of the last full packet (index n-1) from each hop
    dep_prev = []
    if n > 1:
        smax = 0.0
        ssum = 0.0
        dsum = 0.0
        for k in range(len(links)):
            smax = max(smax, s[k])
            ssum += s[k]
            dep_prev.append((n - 2) * smax + ssum + dsum)
            dsum += d[k]
    t = 0.0  # arrival of the last packet at hop k's sender
    for k in range(len(links)):
        start = max(t, dep_prev[k]) if dep_prev else t
        t = start + ls[k] + d[k]
    return t


def ideal_fct_ns(graph, path: Sequence, size_bytes: int, mtu_bytes: int, header_bytes: int) -> int:
    """Ideal FCT (integer ns, rounded) of ``size_bytes`` alone on ``path`` of ``graph``."""
    return int(round(ideal_fct_exact_ns(hops(graph, path), size_bytes, mtu_bytes, header_bytes)))
