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
