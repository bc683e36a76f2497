"""A lone flow's FCT equals the analytic ideal (store-and-forward pipelining) within 1 %.

Oracle: netsim.network.ideal (closed form for a tandem of deterministic
servers), independent of the simulator's event machinery.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "backends", "packet"))
from pkt_helpers import gpu_path_graph, run  # noqa: E402

from netsim.network.ideal import hops, ideal_fct_exact_ns  # noqa: E402
from netsim.topology import Router, load_topology  # noqa: E402
from netsim.topology.builders import dumbbell  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000]


def _lone(graph, src, dst, size, **kw):
    be, recs = run(graph, [(src, dst, size)], **kw)
    r = recs[0]
    path = Router(graph).path(src, dst, 0)
    mtu, hdr = be.params["mtu_bytes"], be.params["header_bytes"]
    exact = ideal_fct_exact_ns(hops(graph, path), size, mtu, hdr)
    return r, exact


@pytest.mark.parametrize("size", SIZES + [100_000_000])
def test_lone_flow_dumbbell_equals_ideal(size):
    g = dumbbell(1, 1)
    r, exact = _lone(g, "left0", "right0", size)
    assert r.size_bytes == size
    assert abs(r.fct_ns - exact) <= 0.01 * exact
    assert r.ideal_fct_ns == round(exact)
    assert r.retransmitted_bytes == 0


@pytest.mark.parametrize("size", SIZES)
def test_lone_flow_nvlink_pcie_ethernet_path_equals_ideal(size):
    g = gpu_path_graph()
    path = Router(g).path("s0.gpu0", "s1.gpu0", 0)
    kinds = {g.edges[u, v]["kind"] for u, v in zip(path[:-1], path[1:])}
    assert kinds == {"nvlink", "pcie", "ethernet"}  # the route really crosses all three
    r, exact = _lone(g, "s0.gpu0", "s1.gpu0", size)
    assert abs(r.fct_ns - exact) <= 0.01 * exact


@pytest.mark.slow
def test_lone_flow_100mb_gpu_path():
    g = gpu_path_graph()
    r, exact = _lone(g, "s0.gpu0", "s1.gpu0", 100_000_000)
    assert abs(r.fct_ns - exact) <= 0.01 * exact


@pytest.mark.parametrize("src,dst", [("s0.gpu0", "s1.gpu3"), ("s0.gpu0", "s0.gpu5")])
def test_lone_flow_shipped_leaf_spine_64gpu(src, dst):
    g = load_topology(os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml"))
    r, exact = _lone(g, src, dst, 2_000_000)
    assert abs(r.fct_ns - exact) <= 0.01 * exact


@pytest.mark.parametrize("rate", [400e9, 1.2e12])
def test_fast_links_carry_exactly_their_rate(rate):
    """Integer picoseconds must not bend the rate: 1.2 Tbps serialization is 6986.67 ps per 1048 B."""
    g = dumbbell(1, 1, host_rate_bps=rate)
    size = 20_000_000
    r, exact = _lone(g, "left0", "right0", size, params={"mtu_bytes": 1048, "header_bytes": 48})
    # the ideal is exact (fractional); the simulation may differ only by rounding (< 1 ns per hop)
    assert abs(r.fct_ns - exact) <= 5
    n = -(-size // 1000)
    assert abs(r.fct_ns - (n + 2) * 1048 * 8e9 / rate - 3000) <= 5  # n packets + 2 store-and-forward hops
