"""Per-class routing state (netsim.topology.stubs) gives exactly the per-destination router's routes."""
import os
import random

import pytest

from netsim.topology import Router, build_expression, load_topology
from netsim.topology.clos3 import gpu_clos3
from netsim.topology.stubs import find_gate
from tests.conftest import TOPOLOGIES

SHIPPED = ["dumbbell.yaml", "fat_tree_k4.graphml", "leaf_spine_64gpu.yaml", "leaf_spine_hosts.yaml",
           "rail_64gpu.yaml", "two_cluster_hetero.yaml", "hpcc_small/topology.txt"]
BUILT = ["gpu_clos3:servers=8,servers_per_pod=4,spines_per_pod=2,cores_per_plane=2",
         "gpu_clos3:servers=8,fabric=leaf_spine,servers_per_pod=4,servers_per_leaf=2,spines_per_pod=2,"
         "cores_per_plane=2,gpus_per_nic=2",
         "gpu_cluster:servers=3,gpus_per_server=4,nvswitch=false",        # root complex: no gate past the PCIe switch
         "gpu_cluster:servers=4,gpus_per_server=4,fabric=rail,servers_per_leaf=2,spines=2",
         "gpu_ring:gpus=6", "fat_tree:k=4", "two_clusters:servers_a=2,servers_b=2,gpus_per_server=2"]


def _graph(spec):
    return load_topology(os.path.join(TOPOLOGIES, spec)) if "/" in spec or "." in spec else build_expression(spec)


def _ends(g):
    return sorted((n for n, k in g.nodes(data="kind") if k in ("gpu", "host")), key=str)


@pytest.mark.parametrize("spec", SHIPPED + BUILT)
def test_same_next_hops_and_paths(spec):
    g = _graph(spec)
    fast, ref = Router(g, seed=3), Router(g, seed=3, per_class=False)
    ends = _ends(g)
    rng = random.Random(7)
    dsts = ends if len(ends) <= 40 else rng.sample(ends, 40)
    nodes = sorted(g.nodes, key=str)
    for d in dsts:
        for u in nodes:
            assert fast.next_hops(u, d) == ref.next_hops(u, d), (u, d)
    for i in range(300):
        s, d = rng.sample(ends, 2)
        assert fast.path(s, d, i) == ref.path(s, d, i)
        assert fast.distance(s, d) == ref.distance(s, d)


def test_state_is_per_leaf_on_a_rail_fabric():
    # 4 pods x 8 rails: routing every GPU pair needs one full row per rail switch, not one per GPU
    g = gpu_clos3(servers=8, servers_per_pod=2, spines_per_pod=2, cores_per_plane=2)
    r = Router(g)
    ends = _ends(g)
    for d in ends:
        for s in ends[::7]:
            if s != d:
                r.path(s, d)
    rails = sorted(n for n, t in g.nodes(data="tier") if t == "rail")
    assert sorted(r._names[i] for i in r._nh) == rails
    assert r._names[r._stub(r._idx["s5.gpu3"]).gate] == "p2.rail3"


def test_gate_needs_a_single_entry():
    # a PCIe-only server with a root complex: every GPU can be entered through any of its server's NICs,
    # so the gate stops at its own PCIe switch (on a cluster too large for the region to close around it)
    g = build_expression("gpu_cluster:servers=8,gpus_per_server=2,fabric=rail,nvswitch=false")
    r = Router(g)
    d = r._idx["s1.gpu0"]
    gate, inner = find_gate(d, r._adj, r._nvadj, r._transit, r._relay_degree)
    assert r._names[gate] == "s1.pcie0" and inner == {d}


@pytest.mark.parametrize("spec", ["fat_tree:k=4", "leaf_spine:leaves=3,spines=2,hosts_per_leaf=3"])
def test_distances_match_networkx(spec):
    # host-only fabrics: hosts have one link, so no route could transit one and networkx's BFS is the truth
    import networkx as nx
    g = build_expression(spec)
    r = Router(g)
    ends = _ends(g)
    for d in ends:
        want = nx.single_source_shortest_path_length(g, d)
        for s in ends:
            if s != d:
                assert r.distance(s, d) == want[s]


def _relay_graph(g, s, d):
    """``g`` restricted to the nodes a route from ``s`` to ``d`` may use: relaying nodes and the two endpoints."""
    keep = [n for n, k in g.nodes(data="kind") if k not in ("gpu", "host") or n in (s, d)]
    return g.subgraph(keep)


@pytest.mark.parametrize("spec", ["gpu_clos3:servers=8,servers_per_pod=4,spines_per_pod=2,cores_per_plane=2",
                                  "gpu_clos3:servers=8,fabric=leaf_spine,servers_per_pod=4,servers_per_leaf=2,"
                                  "spines_per_pod=2,cores_per_plane=2,gpus_per_nic=2"])
def test_gpu_fabric_paths_match_networkx(spec):
    # GPU pairs on different servers have no NVLink-only route, so their ECMP set is every shortest path
    # through relaying nodes: networkx's all_shortest_paths on that subgraph is the truth
    import networkx as nx
    g = build_expression(spec)
    r = Router(g, seed=5)
    gpus = sorted(n for n, k in g.nodes(data="kind") if k == "gpu")
    rng = random.Random(3)
    pairs = [(s, d) for s, d in (rng.sample(gpus, 2) for _ in range(400)) if s.split(".")[0] != d.split(".")[0]]
    assert len(pairs) > 300
    for i, (s, d) in enumerate(pairs[:120]):
        want = sorted(tuple(p) for p in nx.all_shortest_paths(_relay_graph(g, s, d), s, d))
        assert sorted(r.paths(s, d)) == want, (s, d)
    for i, (s, d) in enumerate(pairs):
        p = r.path(s, d, i)
        assert len(p) - 1 == nx.shortest_path_length(_relay_graph(g, s, d), s, d)
        assert all(g.has_edge(a, b) for a, b in zip(p, p[1:]))
        assert all(g.nodes[n]["kind"] not in ("gpu", "host") for n in p[1:-1])


@pytest.mark.slow
def test_16k_gpu_fabric_builds_and_routes_in_seconds():
    # issue 22: a 16,384-GPU rail-optimized 3-tier fabric builds, validates and routes every pair of the
    # DP rings of a t8 p16 step (32,768 directed pairs) plus EP-16 all-to-alls (245,760 pairs) in seconds of
    # CPU (measured 1.3 + 2.5 + 0.5 s; the bound leaves room for a loaded machine's cache misses)
    import time
    c0 = time.process_time()
    g = build_expression("gpu_clos3:servers=2048")
    r = Router(g)
    gpus = [f"s{k}.gpu{j}" for k in range(2048) for j in range(8)]
    assert all(n in g for n in gpus[::997])
    from netsim.bench.routing import step_pairs
    ring, a2a = step_pairs(gpus)
    pairs = ring + a2a
    assert len(pairs) == 32768 + 245760
    for i, (a, b) in enumerate(pairs):
        r.path(a, b, i)
    cpu = time.process_time() - c0
    assert len(r._nh) == 512            # one full row per rail switch, not per destination
    assert cpu < 30.0, cpu
