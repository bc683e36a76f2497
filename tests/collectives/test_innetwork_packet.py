"""NVLS and CollNet on the packet backend: the switch terminates, acknowledges and originates flows (issue 20).

Checked against the flow backend running the same collectives code, the hand
count of the bytes each GPU's link carries (payload, one header per packet, one
ACK per data packet the other way), NCCL's tuning-model choice on flow, and
byte-identical forwarding of transit traffic through a switch enabled for
in-network flows.
"""
import math
from collections import defaultdict

import pytest

from netsim.backends.base import TraceSinks, create_backend
from netsim.collectives import nvls, run_collective
from netsim.errors import InputError
from netsim.records import ListSink
from netsim.topology import gpu_server, load_topology

N = 8
NODES = [f"s0.gpu{i}" for i in range(N)]
SW = "s0.nvs0"
S = 2 << 20


@pytest.fixture(scope="module")
def nvls_server():
    g = gpu_server("s0", gpus=N)
    g.nodes[SW]["nvls"] = True
    return g


@pytest.fixture(scope="module")
def sharp_rails():
    return load_topology("topologies/rail_sharp_8gpu.yaml")


def _gpus(g):
    return sorted((n for n, k in g.nodes(data="kind") if k == "gpu"), key=lambda x: (x.split(".")[0], x))


def _run(graph, backend, kind, size, nodes=NODES, **kw):
    sink = ListSink()
    be = create_backend(backend, graph, seed=0, sinks=TraceSinks(fct=sink))
    p = run_collective(be, kind, nodes, size, **kw)
    be.env.run()
    return p.value, sink.rows, be


def _hand_bytes(rows, pm, sent_by, acked_by) -> int:
    """Wire bytes of one link direction: data of the flows ``sent_by`` selects (payload + a header per
    packet) plus one ACK per data packet of the flows ``acked_by`` selects (RoCE, ack every packet)."""
    packets = lambda r: math.ceil(r.size_bytes / pm.mss_bytes)       # noqa: E731
    data = sum(r.size_bytes + packets(r) * pm.header_bytes for r in rows if sent_by(r))
    return data + sum(packets(r) for r in rows if acked_by(r)) * pm.ack_bytes


@pytest.mark.parametrize("kind", nvls.NVLS_KINDS)
def test_packet_nvls_matches_flow_and_each_link_carries_the_hand_count(nvls_server, kind):
    res, rows, be = _run(nvls_server, "packet", kind, S, algorithm="nvls")
    ref, _, _ = _run(nvls_server, "flow", kind, S, algorithm="nvls")
    assert res.algorithm == "nvls" and res.flows == ref.flows == len(rows)
    assert res.time_s == pytest.approx(ref.time_s, rel=0.05)
    assert be.stats()["retransmits"] == 0 and be.stats()["completed"] == len(rows)
    pm = be.paths.path((NODES[0], SW))
    want_up, want_down = nvls.link_bytes(kind, N, S)
    for x in NODES:
        up, down = be.net.ports[(x, SW)], be.net.ports[(SW, x)]
        assert sum(r.size_bytes for r in rows if r.src == x) == want_up          # S up, S down (all-reduce)
        assert sum(r.size_bytes for r in rows if r.dst == x) == want_down
        assert up.tx_bytes == _hand_bytes(rows, pm, lambda r: r.src == x, lambda r: r.dst == x)
        assert down.tx_bytes == _hand_bytes(rows, pm, lambda r: r.dst == x, lambda r: r.src == x)


def test_packet_nvls_allreduce_beats_the_ring_as_on_flow(nvls_server):
    ratio = {}
    for backend in ("flow", "packet"):
        ring, _, _ = _run(nvls_server, backend, "allreduce", S, algorithm="ring")
        fast, _, _ = _run(nvls_server, backend, "allreduce", S, algorithm="nvls")
        ratio[backend] = ring.time_s / fast.time_s
    assert ratio["packet"] > 1.2 and ratio["packet"] == pytest.approx(ratio["flow"], rel=0.05)


@pytest.mark.parametrize("size", [8192, 4 << 20])
def test_auto_on_packet_picks_what_flow_picks(nvls_server, size):
    pick = {b: _run(nvls_server, b, "allreduce", size, algorithm="auto", protocol="auto")[0]
            for b in ("flow", "packet")}
    assert (pick["packet"].algorithm, pick["packet"].protocol) == (pick["flow"].algorithm, pick["flow"].protocol)
    assert pick["packet"].algorithm == ("nvls" if size > 8192 else "ring")


def test_transit_through_an_enabled_switch_is_forwarded_unchanged(nvls_server):
    """A ring through the NVSwitch takes the same picoseconds whether or not the switch was enabled for
    in-network flows first (the generic arrival path forwards exactly as the inlined one)."""
    plain, _, _ = _run(nvls_server, "packet", "allreduce", 1 << 20, algorithm="ring")
    be = create_backend("packet", nvls_server, seed=0)
    be.in_network.enable(SW)
    p = run_collective(be, "allreduce", NODES, 1 << 20, algorithm="ring")
    be.env.run()
    assert p.value.end_ps - p.value.start_ps == plain.end_ps - plain.start_ps


def test_packet_nvls_is_deterministic(nvls_server):
    a, rows_a, _ = _run(nvls_server, "packet", "allreduce", 1_000_003, algorithm="nvls", channels=2)
    b, rows_b, _ = _run(nvls_server, "packet", "allreduce", 1_000_003, algorithm="nvls", channels=2)
    assert a.end_ps == b.end_ps and rows_a == rows_b
    assert all(sum(r.size_bytes for r in rows_a if r.src == x) == 1_000_003 for x in NODES)


def test_packet_collnet_matches_flow_and_each_rail_link_carries_the_hand_count(sharp_rails):
    gpus = _gpus(sharp_rails)
    res, rows, be = _run(sharp_rails, "packet", "allreduce", S, gpus, algorithm="collnet")
    ref, _, _ = _run(sharp_rails, "flow", "allreduce", S, gpus, algorithm="collnet")
    assert res.algorithm == "collnet" and res.flows == ref.flows
    assert res.time_s == pytest.approx(ref.time_s, rel=0.05)
    kinds = dict(sharp_rails.nodes(data="kind"))
    up, down = defaultdict(int), defaultdict(int)
    for r in rows:
        if kinds[r.dst] == "switch":
            up[r.src, r.dst] += r.size_bytes
        elif kinds[r.src] == "switch":
            down[r.dst, r.src] += r.size_bytes
    g = 4                                                  # GPUs per server: a rank reduces S/G in its rail
    assert sorted(up.values()) == sorted(down.values()) == [S // g] * len(gpus)
    for (x, rail), nbytes in up.items():
        nic = next(n for n in sharp_rails.neighbors(rail) if n.startswith(x.split(".")[0] + "."))
        pm = be.paths.path(be.router.path(x, rail))
        wire = be.net.ports[(nic, rail)].tx_bytes
        assert wire == _hand_bytes(rows, pm, lambda r: r.src == x and r.dst == rail,
                                   lambda r: r.src == rail and r.dst == x)


def test_packet_two_level_sharp_tree_matches_flow_and_the_leaf_spine_links_carry_the_hand_count():
    """Leaves reduce their servers' parts and send one partial to the rail's spine, which returns the
    sum: each leaf->spine port carries S/G per rail that spine serves (2 here), plus headers and ACKs."""
    from netsim.topology import gpu_cluster
    g = gpu_cluster(servers=4, gpus_per_server=4, fabric="leaf_spine", servers_per_leaf=2)
    for s, k in g.nodes(data="kind"):
        if k == "switch":
            g.nodes[s]["sharp"] = True
    gpus = _gpus(g)
    res, rows, be = _run(g, "packet", "allreduce", S, gpus, algorithm="collnet")
    ref, _, _ = _run(g, "flow", "allreduce", S, gpus, algorithm="collnet")
    assert res.flows == ref.flows and res.time_s == pytest.approx(ref.time_s, rel=0.05)
    pm = be.paths.path(("leaf0", "spine0"))
    for a in ("leaf0", "leaf1"):
        for b in ("spine0", "spine1"):
            assert sum(r.size_bytes for r in rows if (r.src, r.dst) == (a, b)) == 2 * S // 4
            assert be.net.ports[(a, b)].tx_bytes == _hand_bytes(rows, pm, lambda r: (r.src, r.dst) == (a, b),
                                                                lambda r: (r.src, r.dst) == (b, a))
    with pytest.raises(InputError, match="flow dst: flows start and end at gpu/host nodes, not a nic") as exc:
        be.send_in_network("leaf0", "s0.nic0", 100)                 # a NIC is neither an endpoint nor reducing
    assert "\n" not in str(exc.value)
