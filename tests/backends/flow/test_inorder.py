"""Chunks of one connection leave their sender in post order (one queue pair), on flow and packet.

Checked by hand: the chunks of one connection alone on a path finish one
transfer time (their wire bytes at the path's rate) apart on both backends,
where independent flows finish together; chunks of different connections
still share; a held chunk takes a link change made while it waited; an NVLS
all-reduce never beats its link-bound closed form and, with its chunk
latency hidden, comes within 10 % of it at 8 MiB; flow and packet agree on
NVLS and CollNet at 2 MiB.
"""
import math

import pytest

from netsim.backends.base import TraceSinks, create_backend
from netsim.collectives import nvls, run_collective
from netsim.records import ListSink
from netsim.topology import gpu_server, load_topology

A, B, SIZE = "s0.gpu0", "s0.gpu1", 1 << 20
NODES = [f"s0.gpu{i}" for i in range(8)]


@pytest.fixture(scope="module")
def server():
    g = gpu_server("s0", gpus=8)
    g.nodes["s0.nvs0"]["nvls"] = True
    return g


def _backend(graph, name):
    sink = ListSink()
    return create_backend(name, graph, seed=0, sinks=TraceSinks(fct=sink)), sink


def _transfer_ns(graph, nbytes):
    """Wire time of ``nbytes`` on the A -> B path, ns: payload plus a header per MTU packet at its rate."""
    be = create_backend("packet", graph, seed=0)
    pm = be.paths.path(be.router.path(A, B))
    wire = nbytes + math.ceil(nbytes / pm.mss_bytes) * pm.header_bytes
    return wire * 8 / pm.bottleneck_bps * 1e9


@pytest.mark.parametrize("backend", ["analytic", "flow", "packet"])
def test_chunks_of_one_connection_finish_one_transfer_apart(server, backend):
    be, sink = _backend(server, backend)
    for _ in range(3):
        be.send_in_order("conn", A, B, SIZE)
    be.env.run()
    r = sorted(sink.rows, key=lambda r: r.flow_id)
    assert r[0].fct_ns == pytest.approx(r[0].ideal_fct_ns, abs=2)   # alone on the path: its ideal FCT
    gap = _transfer_ns(server, SIZE)
    assert [y.end_ns - x.end_ns for x, y in zip(r, r[1:])] == [pytest.approx(gap, abs=2)] * 2
    assert all(x.start_ns == 0 for x in r)                          # posted at 0: the FCT counts the wait
    assert be.in_order.held == 2


@pytest.mark.parametrize("backend", ["analytic", "flow", "packet"])
def test_other_connections_share_as_independent_flows(server, backend):
    plain, psink = _backend(server, backend)
    conns, csink = _backend(server, backend)
    for _ in range(2):
        plain.send(A, B, SIZE)
    conns.send_in_order("c1", A, B, SIZE)
    conns.send_in_order("c2", A, B, SIZE)                            # another queue pair
    plain.env.run()
    conns.env.run()
    assert [r.end_ns for r in csink.rows] == [r.end_ns for r in psink.rows]
    assert conns.in_order.held == 0
    if backend == "flow":                                           # fluid fair share: they end together
        assert len({r.end_ns for r in psink.rows}) == 1


def test_held_chunk_takes_a_link_rate_change_made_while_it_waited():
    server = gpu_server("s0", gpus=8)                                # its own: the link change writes the graph
    be, sink = _backend(server, "flow")
    be.send_in_order("conn", A, B, SIZE)
    be.send_in_order("conn", A, B, SIZE)
    be.env.run(until=1_000)                                          # 1 ns: the second chunk is held
    be.set_link_rate(B, "s0.nvs0", 1e11)                             # the path's last hop: 100 Gb/s
    be.env.run()
    r = sorted(sink.rows, key=lambda r: r.flow_id)
    assert r[1].end_ns - r[0].end_ns == pytest.approx(_transfer_ns(server, SIZE), rel=1e-4)


def test_nvls_allreduce_hides_its_chunk_latency_on_flow(server):
    """Fails with chunks fair-shared: the two in flight finish together and the link idles their
    latency term, 24 % above the bound at 8 MiB."""
    size = 8 << 20
    be, _ = _backend(server, "flow")
    p = run_collective(be, "allreduce", NODES, size, algorithm="nvls")
    be.env.run()
    bound = nvls.closed_form_time_s("allreduce", 8, size, server.edges[A, "s0.nvs0"]["rate_bps"])
    ratio = p.value.time_s / (bound * 1500 / 1438)                   # a header per MTU packet, as flow
    assert 1.0 < ratio < 1.10


@pytest.mark.parametrize("algorithm", ["nvls", "collnet"])
def test_flow_and_packet_agree_on_in_network_allreduce_at_2_mib(server, algorithm):
    if algorithm == "nvls":
        graph, nodes = server, NODES
    else:
        graph = load_topology("topologies/rail_sharp_8gpu.yaml")
        nodes = sorted((n for n, k in graph.nodes(data="kind") if k == "gpu"), key=lambda x: (x.split(".")[0], x))
    t = {}
    for backend in ("flow", "packet"):
        be, _ = _backend(graph, backend)
        p = run_collective(be, "allreduce", nodes, 2 << 20, algorithm=algorithm)
        be.env.run()
        t[backend] = p.value.time_s
    assert t["flow"] == pytest.approx(t["packet"], rel=0.025)


@pytest.mark.parametrize("backend", ["analytic", "flow", "packet"])
def test_one_packet_chunks_sent_whole_inside_send_do_not_block_their_connection(server, backend):
    be, sink = _backend(server, backend)
    for _ in range(3):
        be.send_in_order("conn", A, B, 1000)                        # an idle NIC sends each at once
    be.env.run(until=10**9)
    assert len(sink.rows) == 3
