"""On the analytic backend every collective takes exactly its alpha-beta closed form.

a (per-step latency) and B (bandwidth) are computed here from the graph itself
(propagation + one packet's store-and-forward per non-bottleneck hop; bottleneck
rate x payload/MTU), independently of the backend, and the closed forms are the
textbook ones (netsim/collectives/cost.py, ../shared/reference/workloads.md).
Sizes are multiples of n x payload so that every message is whole packets.
"""
import math

import pytest

from netsim.backends.base import create_backend
from netsim.collectives import closed_form_time_s, run_collective
from netsim.topology import Router, gpu_cluster, gpu_server

MTU, HDR = 1500, 62  # the packet backend's defaults (checked below)
PAYLOAD = MTU - HDR


def alpha_beta(graph, src, dst):
    path = Router(graph).path(src, dst, 0)
    edges = [graph.edges[u, v] for u, v in zip(path[:-1], path[1:])]
    rates = [e["rate_bps"] for e in edges]
    k = rates.index(min(rates))
    a = sum(e["delay_ns"] for e in edges) * 1e-9 + sum(MTU * 8 / r for i, r in enumerate(rates) if i != k)
    return a, min(rates) * PAYLOAD / MTU


def simulate(graph, kind, nodes, S, sharing="fair", **kw):
    be = create_backend("analytic", graph, params={"mtu_bytes": MTU, "header_bytes": HDR,
                                                   "source_sharing": sharing})
    proc = run_collective(be, kind, nodes, S, **kw)
    be.env.run()
    return proc.value


def test_packet_defaults_match():
    from netsim.backends.analytic import ANALYTIC_PARAMS
    assert ANALYTIC_PARAMS["mtu_bytes"].default == MTU and ANALYTIC_PARAMS["header_bytes"].default == HDR


@pytest.fixture(scope="module")
def server():
    return gpu_server("s0", gpus=8)


S_UNIT = 24 * PAYLOAD  # divisible by 2, 3, 4, 6, 8, 12, 24 ranks


@pytest.mark.parametrize("n", [2, 3, 4, 6, 8])
@pytest.mark.parametrize("kind,algorithm", [("allreduce", "ring"), ("allreduce", "halving_doubling"),
                                            ("allgather", "ring"), ("reducescatter", "ring"),
                                            ("allgather", "halving_doubling"),
                                            ("reducescatter", "halving_doubling"),
                                            ("alltoall", "direct"), ("alltoall", "pairwise")])
def test_closed_form_exact_on_one_server(server, n, kind, algorithm):
    nodes = [f"s0.gpu{i}" for i in range(n)]
    S = S_UNIT * 64 * 8  # ~ 70 MB; abs tolerance: flow ends are rounded to the ps
    a, B = alpha_beta(server, nodes[0], nodes[1])
    res = simulate(server, kind, nodes, S, algorithm=algorithm)
    want = closed_form_time_s(kind, algorithm, n, S, B, a)
    assert res.time_s == pytest.approx(want, rel=1e-9, abs=2e-11)


def test_ring_allreduce_exact_with_ring_formula_written_out(server):
    n, S = 8, S_UNIT * 1000
    a, B = alpha_beta(server, "s0.gpu0", "s0.gpu1")
    res = simulate(server, "allreduce", [f"s0.gpu{i}" for i in range(n)], S)
    assert res.time_s == pytest.approx(2 * (n - 1) * a + 2 * (n - 1) / n * 8 * S / B, rel=1e-9, abs=2e-11)


@pytest.mark.parametrize("n", [4, 8])
def test_ring_allreduce_across_servers_multi_hop(n):
    """GPU -> PCIe -> NIC -> leaf -> NIC -> PCIe -> GPU: 6 hops, NIC is the bottleneck."""
    g = gpu_cluster(servers=n, gpus_per_server=1, spines=0)
    nodes = [f"s{i}.gpu0" for i in range(n)]
    S = S_UNIT * 200
    a, B = alpha_beta(g, nodes[0], nodes[1])
    assert B == pytest.approx(400e9 * PAYLOAD / MTU)
    res = simulate(g, "allreduce", nodes, S)
    assert res.time_s == pytest.approx(closed_form_time_s("allreduce", "ring", n, S, B, a), rel=1e-9, abs=2e-11)


@pytest.mark.parametrize("n", [8, 16])
def test_double_binary_tree_near_closed_form(n):
    """Pipelined (256 KiB chunks) double binary tree vs 2 log2(n) a + 2 S/B.

    With FIFO connections (the ideal pipeline) within 2 %; with fair sharing
    between the two chunks a connection keeps in flight, within 10 % (slower:
    each chunk's hop takes longer, so the pipeline fills more slowly).
    """
    g = gpu_cluster(servers=n, gpus_per_server=1, spines=0)
    nodes = [f"s{i}.gpu0" for i in range(n)]
    S = 64 * 2**20
    a, B = alpha_beta(g, nodes[0], nodes[1])
    want = closed_form_time_s("allreduce", "tree", n, S, B, a)
    fifo = simulate(g, "allreduce", nodes, S, sharing="fifo", algorithm="tree", chunk_bytes=256 * 1024)
    fair = simulate(g, "allreduce", nodes, S, algorithm="tree", chunk_bytes=256 * 1024)
    assert abs(fifo.time_s / want - 1) < 0.02
    assert 0.99 < fair.time_s / want < 1.10
    # without pipelining it is much slower: the pipelined form is not met by accident
    slow = simulate(g, "allreduce", nodes, S, algorithm="tree")
    assert slow.time_s > 1.5 * want


@pytest.mark.parametrize("n", [3, 5, 8])
def test_pipelined_chain_broadcast_and_reduce(server, n):
    """The ideal chunk pipeline (FIFO connections): (n-1) a + (n-2) c + S/B."""
    nodes = [f"s0.gpu{i}" for i in range(n)]
    C = 64 * PAYLOAD * 8
    S = 16 * C
    a, B = alpha_beta(server, nodes[0], nodes[1])
    for kind in ("broadcast", "reduce"):
        res = simulate(server, kind, nodes, S, sharing="fifo", chunk_bytes=C, root=1)
        want = closed_form_time_s(kind, "ring", n, S, B, a, chunk_bytes=C)
        assert res.time_s == pytest.approx(want, rel=1e-9, abs=2e-11)


def test_halving_doubling_log_steps_beat_ring_latency(server):
    """Small message: latency dominated, HD pays 2 log2(n) a, ring 2(n-1) a."""
    n, S = 8, 8 * PAYLOAD
    nodes = [f"s0.gpu{i}" for i in range(n)]
    a, _ = alpha_beta(server, nodes[0], nodes[1])
    ring = simulate(server, "allreduce", nodes, S).time_s
    hd = simulate(server, "allreduce", nodes, S, algorithm="halving_doubling").time_s
    assert ring > 2 * (n - 1) * a and hd < ring
    assert hd == pytest.approx(2 * math.log2(n) * a + 2 * (n - 1) / n * 8 * S / alpha_beta(server, nodes[0],
                                                                                           nodes[1])[1], rel=1e-9, abs=2e-11)
