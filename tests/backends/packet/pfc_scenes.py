"""The PFC scenes of issue 19, shared by tests/backends/packet/test_packet_pfc_switch.py and
tools/docfigures/pfc_switch.py (imported by file name, as pkt_helpers).

* :func:`ring_backend` — three switches in a ring, host h_i sending to h_{i+2}
  over the two clockwise ring hops (routes forced: in a 3-ring every shortest
  path is one hop), so each ring link's traffic must cross the next: a cyclic
  buffer dependency;
* :func:`victim` — an incast h1..h4 -> dst through a shared 400 G uplink
  sw1 -> sw2, and a victim h0 -> vdst on the same uplink.
"""
from __future__ import annotations

import networkx as nx
from pkt_helpers import make_backend, run, star

LOSSLESS = 3
RING_PORTS = ["s0->s1", "s1->s2", "s2->s0"]


def ring_graph(rate_bps=100e9, delay_ns=1000) -> nx.Graph:
    g = nx.Graph()
    for i in range(3):
        g.add_node(f"s{i}", kind="switch")
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", f"s{i}", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    for i in range(3):
        g.add_edge(f"s{i}", f"s{(i + 1) % 3}", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    return g


class _ForcedRouter:
    """The backend's router with some (src, dst) paths replaced (static routes)."""

    def __init__(self, router, paths: dict):
        self._router, self._paths = router, paths

    def path(self, src, dst, flow_id=0):
        return self._paths.get((src, dst)) or self._router.path(src, dst, flow_id)

    def __getattr__(self, name):
        return getattr(self._router, name)


def ring_backend(params: dict, size=2_000_000):
    """The ring with its three clockwise 2-hop flows started at t = 0; returns (env, backend)."""
    env, be = make_backend(ring_graph(), params=params, pfc_sink=True)
    paths = {}
    for i in range(3):
        a, b, c = i, (i + 1) % 3, (i + 2) % 3
        paths[(f"h{a}", f"h{c}")] = (f"h{a}", f"s{a}", f"s{b}", f"s{c}", f"h{c}")
    be.router = _ForcedRouter(be.router, paths)
    for i in range(3):
        be.send(f"h{i}", f"h{(i + 2) % 3}", size)
    return env, be


#: the ring's flows at line rate (a 4 MB window): it deadlocks within ~22 us
LINE_RATE = dict(window_bytes=4_000_000)


def victim_graph() -> nx.Graph:
    """h1..h4 -> dst (an incast at sw2's 100 G port to dst) and h0 -> vdst, all over the 400 G sw1 -> sw2."""
    g = nx.Graph()
    g.add_node("sw1", kind="switch")
    g.add_node("sw2", kind="switch")
    g.add_edge("sw1", "sw2", rate_bps=400e9, delay_ns=1000, kind="ethernet")
    for i in range(5):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "sw1", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    for n in ("dst", "vdst"):
        g.add_node(n, kind="host")
        g.add_edge(n, "sw2", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    return g


def victim(mode: str, buffer_bytes: int = 0, with_incast_fct: bool = False):
    """Run the victim scene with ``pfc_threshold`` ``mode`` (and ``buffer_bytes``, 0 = the default):
    (summary stats, victim throughput in Gbps[, the incast's last FCT in ns])."""
    flows = [(f"h{i}", "dst", 2_000_000) for i in range(1, 5)] + [("h0", "vdst", 2_000_000)]
    params = dict(window_bytes=2_000_000, pfc_threshold=mode)
    if buffer_bytes:
        params["buffer_bytes"] = buffer_bytes
    be, recs = run(victim_graph(), flows, params=params)
    v = recs[4]
    out = (be.stats(), v.size_bytes * 8 / v.fct_ns)
    return out + (max(recs[i].fct_ns for i in range(4)),) if with_incast_fct else out


def incast_fct_ns(mode: str, n: int = 8, size_bytes: int = 1_000_000, buffer_bytes: int = 300_000):
    """``n`` -> 1 incast on one switch (100 G, 1 us links), ``pfc_threshold`` ``mode``: (stats, last FCT ns).

    With 300 KB of buffer, 9 ingresses' headroom (9 x 28 KB) leaves a 48 KB shared pool: each of the
    eight groups' dynamic XOFF is ~5 KB, far below one link round trip of bytes."""
    be, recs = run(star(n + 1), [(f"h{i}", f"h{n}", size_bytes) for i in range(n)],
                   params=dict(buffer_bytes=buffer_bytes, pfc_threshold=mode))
    return be.stats(), max(r.fct_ns for r in recs.values())


def transient_ring(detect_ns: int, n: int = 5):
    """A pause cycle that resolves by itself: ``n`` switches in a ring, each with a 100 G sender hs_i and a
    25 G receiver hr_i; hs_i sends 50 KB to hr_{i+1} and 60 KB to hr_{i+2} (two hops clockwise, the
    shortest path). The slow receivers back their ingress groups up until every ring port is paused,
    each holding transit packets from the previous one (an exact pause cycle from 12.6 us), but the
    groups also drain into the receivers, so RESUMEs break the cycle (16.6 us later; a detection time of
    16 us reports it, 17 us does not). Returns the backend after the run."""
    g = nx.Graph()
    for i in range(n):
        g.add_node(f"s{i}", kind="switch")
        for h, rate in ((f"hs{i}", 100e9), (f"hr{i}", 25e9)):
            g.add_node(h, kind="host")
            g.add_edge(h, f"s{i}", rate_bps=rate, delay_ns=1000, kind="ethernet")
    for i in range(n):
        g.add_edge(f"s{i}", f"s{(i + 1) % n}", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    env, be = make_backend(g, params=dict(window_bytes=4_000_000, pfc_deadlock_detect_ns=detect_ns))
    for i in range(n):
        be.send(f"hs{i}", f"hr{(i + 1) % n}", 50_000)
        be.send(f"hs{i}", f"hr{(i + 2) % n}", 60_000)
    env.run()
    return be
