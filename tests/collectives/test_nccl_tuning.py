"""NCCL-style algorithm/protocol choice on an 8-GPU H100 NVSwitch server (issue 20).

The expected terms are recomputed here by hand from NCCL's tuning.cc constants
(commit b6475625) for this one case — 8 ranks, one node, NVLink, 16 channels,
450 GB/s per GPU — not by calling netsim's tuning code.
"""
import csv
import os

import pytest

from netsim.backends.base import create_backend
from netsim.collectives import bus_bandwidth, run_collective, tuning
from netsim.collectives.protocol import topology_facts
from netsim.errors import InputError
from netsim.topology import gpu_server

N = 8
NODES = [f"s0.gpu{i}" for i in range(N)]
SIZES = [8 * 1024 * 2 ** k for k in range(18)]          # 8 KiB .. 1 GiB
LINK_GBPS = 3.6e12 / 8e9                                # 450 GB/s per GPU (gpu_server default)
TREE_SIMPLE_CORR = (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9)
TREE_LL_CORR = (1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1)
TREE_LL128_CORR = (1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1)


def _hand_terms(nvls: bool):
    """(algorithm, protocol) -> (latency us, algbw GB/s, correction table or None), by hand."""
    ring = N / (2 * (N - 1))
    tree_bus = min(LINK_GBPS * 0.92, 16 * 38.7)
    terms = {
        ("ring", "ll"): (6.6 + 14 * 0.6, min(87.7, LINK_GBPS / 4) * ring, None),
        ("ring", "ll128"): (14.0 + 14 * 1.9, min(LINK_GBPS * 0.92, 16 * 36.7) * ring, None),
        ("ring", "simple"): (8.4 + 14 * 3.4, LINK_GBPS * ring, None),
        ("tree", "ll"): (6.8 + 2 * 7 * 0.6, min(tree_bus / 3.8, 87.7) * 0.5, TREE_LL_CORR),
        ("tree", "ll128"): (14.0 + 2 * 7 * 1.25, min(tree_bus * 7 / 9, 16 * 36.7) * 0.5, TREE_LL128_CORR),
        ("tree", "simple"): (2 * 7 * 28.0, tree_bus * 0.5, TREE_SIMPLE_CORR),
    }
    if nvls:
        terms[("nvls", "simple")] = (23.0, LINK_GBPS * 5 / 6, None)
    return terms


def _hand_time_us(term, size):
    lat, bw, corr = term
    if corr is not None:
        log = (size >> 6).bit_length() - 1
        if log < 23:
            bw *= corr[log]
    return lat + size / (1000 * bw)


def _hand_choice(size, nvls=False):
    terms = _hand_terms(nvls)
    return min(terms, key=lambda k: _hand_time_us(terms[k], size))


@pytest.fixture(scope="module")
def server():
    return gpu_server("s0", gpus=N)


@pytest.fixture(scope="module")
def nvls_server():
    g = gpu_server("s0", gpus=N)
    g.nodes["s0.nvs0"]["nvls"] = True
    return g


def test_facts_of_an_h100_server(server, nvls_server):
    f = topology_facts(server, NODES)
    assert (f.n_ranks, f.n_nodes, f.intra_hw, f.channels, f.nvls, f.ll128) == (8, 1, "nvlink", 16, False, True)
    assert f.bw_intra_gbps * f.channels == pytest.approx(LINK_GBPS)
    assert topology_facts(nvls_server, NODES).nvls


def test_model_terms_equal_the_hand_computation(server, nvls_server):
    facts = topology_facts(nvls_server, NODES)
    for (algo, proto), (lat, bw, _) in _hand_terms(True).items():
        c = tuning.cost("allreduce", algo, proto, facts)
        assert (c.latency_us, c.algbw_gbps) == (pytest.approx(lat), pytest.approx(bw)), (algo, proto)


def test_auto_runs_the_cheapest_choice_at_every_size(server):
    seen = set()
    for size in SIZES:
        be = create_backend("analytic", server, seed=0)
        p = run_collective(be, "allreduce", NODES, size, algorithm="auto", protocol="auto", sw_latency="nccl")
        be.env.run()
        got = (p.value.algorithm, p.value.protocol)
        assert got == _hand_choice(size), size
        seen.add(got)
    assert len(seen) >= 2          # the choice changes with size (LL small, Simple large)


def test_busbw_grows_in_proportion_to_size_below_the_knee(server):
    bus = {}
    for size in (8 * 1024, 16 * 1024, 32 * 1024):
        be = create_backend("analytic", server, seed=0)
        p = run_collective(be, "allreduce", NODES, size, algorithm="auto", protocol="auto", sw_latency="nccl")
        be.env.run()
        bus[size] = bus_bandwidth("allreduce", N, size, p.value.time_s)
    assert bus[16 * 1024] / bus[8 * 1024] == pytest.approx(2.0, rel=0.05)
    assert bus[32 * 1024] / bus[16 * 1024] == pytest.approx(2.0, rel=0.05)


def test_nvls_beats_ring_at_large_sizes_when_enabled(nvls_server):
    facts = topology_facts(nvls_server, NODES)
    ring = tuning.cost("allreduce", "ring", "simple", facts)
    nvls = tuning.cost("allreduce", "nvls", "simple", facts)
    for size in (64 << 20, 256 << 20, 1 << 30):
        assert nvls.time_us(size) < ring.time_us(size)
        assert (tuning.choose("allreduce", size, facts).algorithm) == "nvls" == _hand_choice(size, True)[0]
    assert tuning.choose("allreduce", 8192, facts).algorithm == "ring"


def test_auto_picking_nvls_is_a_one_line_error_on_a_backend(nvls_server):
    """A backend without ``in_network`` cannot end flows at the switch (every shipped one can: test_nvls.py,
    test_innetwork_packet.py)."""
    from tests.collectives.coll_helpers import NoInNetwork
    be = NoInNetwork(nvls_server)
    run_collective(be, "allreduce", NODES, 1 << 20, algorithm="auto", protocol="auto")
    with pytest.raises(InputError, match="picks nvls .* the stub backend cannot model in-network reduction") as exc:
        be.env.run()
    assert "\n" not in str(exc.value)


def test_explicit_choice_wins_over_auto(server):
    be = create_backend("analytic", server, seed=0)
    p = run_collective(be, "allreduce", NODES, 8192, algorithm="tree", protocol="simple", sw_latency="nccl")
    be.env.run()
    assert (p.value.algorithm, p.value.protocol) == ("tree", "simple")


def test_workload_auto_reports_choice_in_ops_csv(tmp_path):
    from netsim.runtime import run_training
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    wl = os.path.join(root, "workloads", "gpt-1.5b-t2p2d2-nccl-small.yaml")
    run_training(gpu_server("s0", gpus=8), wl, backend="analytic", iterations=1, out_dir=str(tmp_path))
    with open(tmp_path / "ops.csv") as fh:
        rows = list(csv.DictReader(fh))
    comm = [r for r in rows if r["kind"] in ("tp", "dp")]
    assert comm and all(r["algorithm"] in ("ring", "tree") and r["protocol"] in tuning.PROTOCOLS for r in comm)
    assert all(r["algorithm"] == r["protocol"] == "" for r in rows if r["kind"] == "compute")


def test_nvls_and_sharp_attributes_are_validated():
    from netsim.errors import TopologyError
    from netsim.topology.schema import validate
    g = gpu_server("s0", gpus=2)
    g.nodes["s0.nvs0"]["nvls"] = "yes"
    with pytest.raises(TopologyError, match="node s0.nvs0, field nvls: nvls must be true or false"):
        validate(g)
    g.nodes["s0.nvs0"]["nvls"] = True
    g.nodes["s0.gpu0"]["sharp"] = True
    with pytest.raises(TopologyError, match="field sharp: .* on a node of kind switch"):
        validate(g)


def test_collnet_needs_sharp_on_every_switch_and_several_servers():
    from netsim.topology import gpu_cluster
    g = gpu_cluster(servers=2, gpus_per_server=4)
    nodes = sorted(n for n, k in g.nodes(data="kind") if k == "gpu")
    assert not topology_facts(g, nodes).collnet
    for s, k in g.nodes(data="kind"):
        if k == "switch":
            g.nodes[s]["sharp"] = True
    f = topology_facts(g, nodes)
    assert (f.n_nodes, f.collnet) == (2, True)
    assert not topology_facts(g, [x for x in nodes if x.startswith(nodes[0].split(".")[0])]).collnet
    assert ("collnet", "simple") in tuning.enabled("allreduce", f)
