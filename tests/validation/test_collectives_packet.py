"""Collectives on the packet backend: bus bandwidth and agreement with the analytic backend.

Issue #4: a ring all-reduce on 8 GPUs of one server, each GPU on one NVLink link
to the NVSwitch, reaches a bus bandwidth (nccl-tests: algbw x 2(n-1)/n) of at least
90 % of that link's rate. The default run uses 64 MiB (about 10 s of wall time);
the 1 GiB run of the issue is marked slow. What keeps busbw below the link rate on
the packet backend: per-packet headers (62 of 1500 bytes, -4.1 %), the ACKs of the
opposite ring direction sharing each link (64 B per data packet, -4 %), and
2(n-1) = 14 steps of latency.
"""
import pytest

pytest.importorskip("netsim.backends.packet.backend")

from netsim.backends.base import create_backend  # noqa: E402
from netsim.collectives import bus_bandwidth, run_collective  # noqa: E402
from netsim.topology import gpu_cluster, gpu_server  # noqa: E402

N = 8


def _run(backend, graph, nodes, kind, S, **kw):
    be = create_backend(backend, graph)
    p = run_collective(be, kind, nodes, S, **kw)
    be.env.run()
    assert be.stats()["bytes_delivered"] == p.value.bytes_sent
    return p.value.time_s


def _busbw_check(S):
    g = gpu_server("s0", gpus=N)
    nodes = [f"s0.gpu{i}" for i in range(N)]
    link_bps = g.edges["s0.gpu0", "s0.nvs0"]["rate_bps"]
    t_packet = _run("packet", g, nodes, "allreduce", S)
    t_analytic = _run("analytic", g, nodes, "allreduce", S)
    bb_p = bus_bandwidth("allreduce", N, S, t_packet)
    bb_a = bus_bandwidth("allreduce", N, S, t_analytic)
    print(f"\nring allreduce {S / 2**20:.0f} MiB on {N} GPUs, NVLink {link_bps / 1e12:.1f} Tbps: "
          f"packet busbw {bb_p / 1e9:.1f} Gbps ({bb_p / link_bps:.2%} of link), "
          f"analytic {bb_a / 1e9:.1f} Gbps ({bb_a / link_bps:.2%}), packet/analytic time {t_packet / t_analytic:.4f}")
    assert bb_p >= 0.90 * link_bps
    assert abs(t_packet / t_analytic - 1) <= 0.05
    assert bb_a <= link_bps  # nothing beats the wire


@pytest.mark.slow  # long validation run (> 7 s); run with -m slow
def test_ring_allreduce_busbw_64MiB():
    _busbw_check(64 * 2**20)


@pytest.mark.slow
def test_ring_allreduce_busbw_1GiB():
    _busbw_check(2**30)


@pytest.mark.parametrize("kind,algorithm,chunk,tol", [
    ("allreduce", "ring", None, 0.06),
    ("allreduce", "ring", 512 * 1024, 0.06),
    ("allreduce", "halving_doubling", None, 0.06),
    ("allreduce", "tree", 256 * 1024, 0.12),
    ("allgather", "ring", None, 0.06),
    ("reducescatter", "halving_doubling", None, 0.06),
    ("alltoall", "direct", None, 0.06),
    ("alltoall", "pairwise", None, 0.06),
    ("broadcast", "ring", 256 * 1024, 0.06),
])
def test_packet_agrees_with_analytic_in_one_server(kind, algorithm, chunk, tol):
    """No contention beyond each GPU's own link: the two backends agree within ``tol``."""
    g = gpu_server("s0", gpus=N)
    nodes = [f"s0.gpu{i}" for i in range(N)]
    S = 4 * 2**20
    kw = dict(algorithm=algorithm, chunk_bytes=chunk)
    t_p, t_a = _run("packet", g, nodes, kind, S, **kw), _run("analytic", g, nodes, kind, S, **kw)
    assert abs(t_p / t_a - 1) <= tol


@pytest.mark.parametrize("algorithm", ["hierarchical", "ring"])
def test_packet_agrees_with_analytic_across_two_servers(algorithm):
    g = gpu_cluster(servers=2, gpus_per_server=4, spines=0)
    nodes = [f"s{s}.gpu{i}" for s in range(2) for i in range(4)]
    S = 4 * 2**20
    t_p, t_a = _run("packet", g, nodes, "allreduce", S, algorithm=algorithm), \
        _run("analytic", g, nodes, "allreduce", S, algorithm=algorithm)
    assert abs(t_p / t_a - 1) <= 0.08


@pytest.mark.slow  # two packet-level runs, about a minute under load
def test_collnet_packet_gap_to_flow_is_the_ack_bandwidth():
    """CollNet all-reduce of 16 MiB on topologies/rail_sharp_8gpu.yaml: packet 156.8 us, flow 152.5 us
    (+2.8 %; 608 / 590 us, +3.0 %, at 64 MiB). Each GPU's NIC link carries its segment up to the rail
    switch while the reduced segment comes down, so each direction also carries the ACKs of the other's
    data (64 B per 1,500 B packet), which the flow backend does not model. With 1-byte ACKs the packet
    backend is at 153.2 us (+0.5 %): the gap is the ACKs, not the reduction or the tree."""
    import os
    from netsim.topology import load_topology
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    g = load_topology(os.path.join(root, "topologies", "rail_sharp_8gpu.yaml"))
    gpus = sorted((n for n, k in g.nodes(data="kind") if k == "gpu"), key=lambda x: (x.split(".")[0], x))
    size = 16 * 2**20

    def t(backend, **params):
        be = create_backend(backend, g, seed=0, params=params)
        p = run_collective(be, "allreduce", gpus, size, algorithm="collnet")
        be.env.run()
        return p.value.time_s

    flow, packet, packet_tiny_acks = t("flow"), t("packet"), t("packet", ack_bytes=1)
    assert 1.015 < packet / flow < 1.045                 # ACKs: up to 64 / 1500 = 4.3 % of a link's time
    assert packet_tiny_acks == pytest.approx(flow, rel=0.01)
