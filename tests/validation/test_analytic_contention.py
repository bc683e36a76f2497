"""The analytic backend says when concurrent flows overran a link its model does not share (contention.py).

Case: a 64 MiB ring all-reduce over 4 servers x 8 GPUs on rails (gpu_cluster fabric=rail, 4 spines, 400 Gb/s),
the ring order s0.gpu0..s0.gpu7, s1.gpu0, ...: 28 hops stay in a server (NVSwitch), 4 cross servers from
GPU 7's rail to GPU 0's, each through one of the 4 spines (ECMP on the flow id). Hand computation: every
ring link carries 2 (n-1)/n S = 62 segments of 2 MiB; a spine link shared by c cross flows gives each
400/c Gb/s, so the all-reduce takes 62 x 2 MiB x (MTU / payload) / (50 GB/s / c). The analytic backend
shares only each flow's first bottleneck (its NIC uplink) and gives c = 1 whatever the hash (2,717 us at
seed 0, where the flow backend gives 4,552 us and the packet backend 4,535 us).
"""
import re

import pytest

from netsim.backends.base import create_backend
from netsim.collectives import run_collective
from netsim.topology import gpu_cluster, gpus, load_topology

SIZE = 64 << 20
HOPS_PER_LINK = 62                     # 2 (n - 1) for n = 32 ranks, one segment S/n each
SEGMENT = SIZE // 32
WIRE = 1500 / (1500 - 62)              # MTU / payload with the default MTU and header


@pytest.fixture(scope="module")
def rails():
    return gpu_cluster(servers=4, gpus_per_server=8, fabric="rail")


def _ring_us(graph, backend, spine=None):
    """Ring all-reduce time (us) and the backend; ``spine``: "spread" (cross hop of server s via spine s),
    "one" (all via spine0) or None (ECMP as hashed)."""
    be = create_backend(backend, graph, seed=0)
    if spine is not None:
        path = be.router.path

        def pinned(s, d, flow_id=0):
            p = path(s, d, flow_id)
            k = int(s.split(".")[0][1:]) if spine == "spread" else 0
            return tuple(f"spine{k}" if x.startswith("spine") else x for x in p)
        be.router.path = pinned
    ranks = sorted(gpus(graph), key=lambda x: (x.split(".")[0], x))
    proc = run_collective(be, "allreduce", ranks, SIZE)
    be.env.run()
    return proc.value.time_s * 1e6, be


def _hand_us(sharing):
    return HOPS_PER_LINK * SEGMENT * WIRE / (50e9 / sharing) * 1e6


def test_all_cross_hops_on_one_spine_flow_matches_hand_and_analytic_reports_the_overrun(rails, capsys):
    t_flow, _ = _ring_us(rails, "flow", "one")
    assert t_flow == pytest.approx(_hand_us(4), rel=0.01)
    t_an, be = _ring_us(rails, "analytic", "one")
    assert t_an == pytest.approx(_hand_us(1), rel=0.01)          # the model's c = 1: 4x optimistic
    rep = be.stats()["unmodelled_contention"]
    assert rep["worst_load_ratio"] == pytest.approx(4.0) and rep["worst_link"] in ("rail7->spine0", "spine0->rail0")
    assert rep["links"] == 2                                      # rail7 -> spine0 -> rail0
    be.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("netsim: warning: ") and re.search("rail7->spine0|spine0->rail0", err[0])


def test_cross_hops_on_distinct_spines_agree_and_report_nothing(rails):
    t_flow, _ = _ring_us(rails, "flow", "spread")
    t_an, be = _ring_us(rails, "analytic", "spread")
    assert t_flow == pytest.approx(t_an, rel=0.01) and t_an == pytest.approx(_hand_us(1), rel=0.01)
    assert "unmodelled_contention" not in be.stats()


def test_hashed_ecmp_at_seed_0_is_reported(rails):
    t_flow, _ = _ring_us(rails, "flow")
    t_an, be = _ring_us(rails, "analytic")
    assert t_flow > 1.5 * t_an                                   # 4,552 us against 2,717 us
    assert be.stats()["unmodelled_contention"]["worst_load_ratio"] >= 2.0


def test_a_relaying_gpus_egress_shared_by_transit_and_own_flow_is_reported():
    g = load_topology("gpu_ring:gpus=5")
    g0, g1, g2 = gpus(g)[:3]
    be = create_backend("analytic", g)
    be.send(g0, g2, 1 << 20)            # relayed by g1, paced at g0 -> g1
    be.send(g1, g2, 1 << 20)            # paced at g1 -> g2, which the relayed flow also crosses
    be.env.run()
    rep = be.stats()["unmodelled_contention"]
    assert rep == {"links": 1, "excess_bytes": rep["excess_bytes"], "worst_link": f"{g1}->{g2}",
                   "worst_load_ratio": 2.0}
    assert 0.9 * (1 << 20) < rep["excess_bytes"] < 1.1 * (1 << 20)   # one flow's bytes beyond the link's rate


def test_a_single_server_allreduce_has_no_unmodelled_contention():
    g = gpu_cluster(servers=1, gpus_per_server=8)
    be = create_backend("analytic", g, seed=0)
    be.env.run(run_collective(be, "allreduce", gpus(g), SIZE))
    assert "unmodelled_contention" not in be.stats()
