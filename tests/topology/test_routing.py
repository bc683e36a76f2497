"""Routing: hop-count shortest paths, ECMP spread, NVLink preference, no GPU/host transit."""
import random
import time
from collections import Counter

import networkx as nx
import pytest

from netsim.errors import RoutingError
from netsim.topology import (Router, bottleneck_rate_bps, fat_tree, gpu_cluster, gpus, leaf_spine, load_topology,
                             nic_of, path_delay_ns, path_links, validate)
from tests.conftest import TOPOLOGIES


def _spine_loads(router, graph, n_flows, seed):
    rng = random.Random(seed)
    hosts = sorted((n for n, k in graph.nodes(data="kind") if k == "host"))
    loads = Counter()
    made = 0
    while made < n_flows:
        s, d = rng.sample(hosts, 2)
        p = router.path(s, d, key=made)
        spines = [n for n in p if n.startswith("spine")]
        if not spines:
            continue  # same leaf
        loads[spines[0]] += 1
        made += 1
    return loads


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_ecmp_spreads_1000_flows_over_spines(seed):
    g = leaf_spine(leaves=8, spines=8, hosts_per_leaf=8)
    loads = _spine_loads(Router(g, seed=seed), g, 1000, seed)
    assert len(loads) == 8
    mean = 1000 / 8
    assert max(loads.values()) <= 1.5 * mean, loads


def test_ecmp_same_pair_many_flows_uniform_over_fat_tree_paths():
    g = fat_tree(4)
    r = Router(g)
    all_paths = r.paths("h0", "h15")
    assert len(all_paths) == 4 and {len(p) for p in all_paths} == {7}  # (k/2)^2 inter-pod paths, 6 hops
    counts = Counter(r.path("h0", "h15", key=i) for i in range(1000))
    assert set(counts) == set(all_paths)
    assert max(counts.values()) <= 1.5 * 250


def test_path_is_deterministic_and_seeded():
    g = leaf_spine(4, 4, 4)
    a = [Router(g, seed=3).path("h0", "h12", i) for i in range(50)]
    b = [Router(g, seed=3).path("h0", "h12", i) for i in range(50)]
    c = [Router(g, seed=4).path("h0", "h12", i) for i in range(50)]
    assert a == b and a != c


def test_paths_equal_hop_and_next_hops_consistent():
    g = leaf_spine(3, 3, 2)
    r = Router(g)
    ps = r.paths("h0", "h5")
    assert len(ps) == 3 and all(len(p) == 5 for p in ps)
    assert len(nx.shortest_path(g, "h0", "h5")) == 5
    assert r.next_hops("leaf0", "h5") == ("spine0", "spine1", "spine2")
    assert r.next_hops("spine1", "h5") == ("leaf2",)
    assert r.distance("h0", "h5") == 4


@pytest.mark.parametrize("topo", ["gpu_cluster:servers=4,gpus_per_server=4,gpus_per_nic=2,servers_per_leaf=1",
                                  "fat_tree:k=4", "leaf_spine:leaves=3,spines=1,hosts_per_leaf=2"])
def test_unique_path_is_the_only_equal_cost_path(topo):
    """``unique_path`` (one walk) agrees with the enumeration of every equal-cost path."""
    g = load_topology(topo)
    r = Router(g)
    ends = sorted((n for n, k in g.nodes(data="kind") if k in ("gpu", "host")), key=str)
    rng = random.Random(3)
    pairs = [tuple(rng.sample(ends, 2)) for _ in range(150)]
    for s, d in pairs:
        ps = r.paths(s, d, limit=2)
        assert r.unique_path(s, d) == (tuple(ps[0]) if len(ps) == 1 else None)
    assert any(len(r.paths(s, d, limit=2)) == 1 for s, d in pairs)
    assert any(len(r.paths(s, d, limit=2)) == 2 for s, d in pairs) or "spines=1" in topo


def test_never_transits_host():
    # a dual-homed host is the only short way between two switches; the route must take the long way
    g = nx.Graph()
    for n in ("a", "b", "x"):
        g.add_node(n, kind="host")
    for n in ("s1", "s2", "s3", "s4"):
        g.add_node(n, kind="switch")
    for u, v in (("a", "s1"), ("s1", "x"), ("x", "s2"), ("s2", "b"), ("s1", "s3"), ("s3", "s4"), ("s4", "s2")):
        g.add_edge(u, v, kind="ethernet", rate_bps=1e9, delay_ns=1)
    r = Router(validate(g))
    assert r.path("a", "b") == ("a", "s1", "s3", "s4", "s2", "b")
    g.remove_edge("s3", "s4")
    r.invalidate()
    with pytest.raises(RoutingError, match="unreachable"):
        r.path("a", "b")


def test_gpu_routes_nvlink_inside_server_and_nic_outside():
    g = load_topology(f"{TOPOLOGIES}/leaf_spine_64gpu.yaml")
    r = Router(g)
    assert r.path("s0.gpu0", "s0.gpu7") == ("s0.gpu0", "s0.nvs0", "s0.gpu7")
    gs = gpus(g)
    for i, src in enumerate(gs[::5]):
        for dst in gs[3::7]:
            if src == dst:
                continue
            p = r.path(src, dst, key=i)
            assert all(g.nodes[n]["kind"] not in ("gpu", "host") for n in p[1:-1])
            if g.nodes[src]["server"] != g.nodes[dst]["server"]:
                assert p[1] == f"{g.nodes[src]['server']}.pcie{g.nodes[src]['index']}"
                assert p[2] == nic_of(g, src) and p[-3] == nic_of(g, dst)
                assert all(g.edges[u, v]["kind"] != "nvlink" for u, v in path_links(p))
            else:
                assert [g.edges[u, v]["kind"] for u, v in path_links(p)] == ["nvlink", "nvlink"]


def test_shared_pcie_switch_still_prefers_nvlink():
    g = gpu_cluster(servers=2, gpus_per_server=8, gpus_per_nic=2, spines=0)
    r = Router(g)
    # gpu0 and gpu1 share s0.pcie0 (2 PCIe hops) but NVLink (2 hops) wins
    assert r.paths("s0.gpu0", "s0.gpu1") == [("s0.gpu0", "s0.nvs0", "s0.gpu1")]
    # the NIC side of a remote flow uses the shared PCIe switch
    assert r.path("s0.gpu1", "s1.gpu1")[:3] == ("s0.gpu1", "s0.pcie0", "s0.nic0")


def test_direct_gpu_nvlink_mesh_never_transits_a_gpu():
    # DGX-1-like: g0-g1 and g1-g2 NVLink, no NVSwitch; g0 -> g2 must not relay through g1
    g = nx.Graph()
    for i in range(3):
        g.add_node(f"g{i}", kind="gpu", server="s0", index=i)
        g.add_edge(f"g{i}", "pcie", kind="pcie", rate_bps=256e9, delay_ns=150)
    g.add_node("pcie", kind="pcie_switch")
    for u, v in (("g0", "g1"), ("g1", "g2")):
        g.add_edge(u, v, kind="nvlink", rate_bps=1.2e12, delay_ns=100)
    r = Router(validate(g))
    assert r.path("g0", "g1") == ("g0", "g1")
    assert r.path("g0", "g2") == ("g0", "pcie", "g2")


def test_path_helpers():
    g = load_topology(f"{TOPOLOGIES}/leaf_spine_64gpu.yaml")
    p = Router(g).path("s0.gpu0", "s7.gpu0")
    assert bottleneck_rate_bps(g, p) == 400e9
    assert path_delay_ns(g, p) == 2 * 150 + 2 * 150 + 4 * 1000


def test_routing_errors():
    g = leaf_spine(2, 1, 2)
    g.add_node("lonely", kind="host")
    r = Router(validate(g))
    with pytest.raises(RoutingError, match="unreachable"):
        r.path("h0", "lonely")
    with pytest.raises(RoutingError, match="unknown node"):
        r.path("h0", "nope")
    with pytest.raises(RoutingError, match="itself"):
        r.path("h0", "h0")


def test_link_failure_reroutes_after_invalidate():
    g = leaf_spine(2, 2, 2)
    r = Router(g)
    assert len(r.paths("h0", "h2")) == 2
    g.remove_edge("leaf0", "spine0")
    r.invalidate()
    assert r.paths("h0", "h2") == [("h0", "leaf0", "spine1", "leaf1", "h2")]


def test_1024_gpu_routing_is_fast():
    g = gpu_cluster(servers=128, gpus_per_server=8, fabric="rail", spines=8)
    r = Router(g)
    gs = gpus(g)
    t = time.perf_counter()
    n = 0
    for dst in gs[::32]:
        for src in gs:
            if src != dst:
                r.path(src, dst, n)
                n += 1
    assert time.perf_counter() - t < 5.0  # ~0.15 s here; all-pairs (1M paths) ~4 s


@pytest.mark.slow
def test_1024_gpu_all_pairs_under_a_minute():
    g = gpu_cluster(servers=128, gpus_per_server=8, fabric="rail", spines=8)
    r = Router(g)
    gs = gpus(g)
    t = time.perf_counter()
    for dst in gs:
        for src in gs:
            if src != dst:
                r.path(src, dst, 0)
    assert time.perf_counter() - t < 60
