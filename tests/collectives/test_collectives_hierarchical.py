"""Hierarchical all-reduce: inter-server traffic only among rails; time = sum of its three ring phases."""
from collections import Counter

import pytest

from coll_helpers import run_on
from netsim.backends.analytic import ANALYTIC_PARAMS
from netsim.collectives import closed_form_time_s, run_collective
from netsim.topology import gpu_cluster

MTU, HDR = ANALYTIC_PARAMS["mtu_bytes"].default, ANALYTIC_PARAMS["header_bytes"].default


@pytest.fixture(scope="module")
def two_servers():
    return gpu_cluster(servers=2, gpus_per_server=4, spines=0)


def _server(node):
    return node.split(".")[0]


def test_inter_server_flows_only_between_same_local_index(two_servers):
    nodes = [f"s{s}.gpu{i}" for s in range(2) for i in range(4)]
    S = 4 * 2 * 100_000
    _, rows, p = run_on(two_servers, lambda be: run_collective(be, "allreduce", nodes, S,
                                                                algorithm="hierarchical", chunk_bytes=30_000))
    inter = [r for r in rows if _server(r.src) != _server(r.dst)]
    assert inter and all(r.src.split(".")[1] == r.dst.split(".")[1] for r in inter)
    sent_inter = Counter()
    for r in inter:
        sent_inter[r.src] += r.size_bytes
    # each rank all-reduces its S/G segment with one peer: 2(m-1)/m * S/G = S/4 bytes out of the server
    assert sent_inter == {x: S // 4 for x in nodes}
    # intra-server: reduce-scatter + all-gather, (G-1)/G * S each
    intra = Counter()
    for r in rows:
        if _server(r.src) == _server(r.dst):
            intra[r.src] += r.size_bytes
    assert intra == {x: 2 * 3 * S // 4 for x in nodes}
    assert p.value.algorithm == "hierarchical"


def test_flat_ring_crosses_rails_but_hierarchical_does_not(two_servers):
    nodes = [f"s{s}.gpu{i}" for s in range(2) for i in range(4)]
    _, rows, _ = run_on(two_servers, lambda be: run_collective(be, "allreduce", nodes, 80_000))
    assert any(_server(r.src) != _server(r.dst) and r.src.split(".")[1] != r.dst.split(".")[1] for r in rows)


def test_time_is_sum_of_three_phase_closed_forms(two_servers):
    from netsim.backends.base import create_backend
    G, m = 4, 2
    nodes = [f"s{s}.gpu{i}" for s in range(m) for i in range(G)]
    S = G * m * (MTU - HDR) * 500
    be = create_backend("analytic", two_servers)
    a1, B1 = be.path_alpha_beta("s0.gpu0", "s0.gpu1")
    a2, B2 = be.path_alpha_beta("s0.gpu0", "s1.gpu0")
    p = run_collective(be, "allreduce", nodes, S, algorithm="hierarchical")
    be.env.run()
    want = (2 * closed_form_time_s("reducescatter", "ring", G, S, B1, a1)
            + closed_form_time_s("allreduce", "ring", m, S // G, B2, a2))
    assert p.value.time_s == pytest.approx(want, rel=1e-9, abs=2e-11)
    assert B2 < B1 / 5  # NIC path much slower than NVLink: the split matters


def test_explicit_node_groups_define_rails():
    g = gpu_cluster(servers=3, gpus_per_server=2, spines=0)
    groups = [["s0.gpu1", "s0.gpu0"], ["s1.gpu0", "s1.gpu1"], ["s2.gpu1", "s2.gpu0"]]
    nodes = [x for grp in groups for x in grp]
    _, rows, _ = run_on(g, lambda be: run_collective(be, "allreduce", nodes, 6000, algorithm="hierarchical",
                                                      node_groups=groups))
    rails = [{grp[i] for grp in groups} for i in range(2)]
    for r in rows:
        if _server(r.src) != _server(r.dst):
            assert any(r.src in rail and r.dst in rail for rail in rails)
