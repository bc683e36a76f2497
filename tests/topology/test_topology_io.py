"""Topology io: shipped files, GraphML and YAML round trips, HPCC topology.txt."""
import os

import networkx as nx
import pytest

from netsim.errors import TopologyError
from netsim.topology import Router, gpus, load_topology, save_topology, summary
from tests.conftest import TOPOLOGIES

SHIPPED = ["dumbbell.yaml", "leaf_spine_hosts.yaml", "leaf_spine_64gpu.yaml", "two_cluster_hetero.yaml",
           "hpcc_small/topology.txt", "rail_64gpu.yaml"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_topologies_load_and_connect(name):
    g = load_topology(os.path.join(TOPOLOGIES, name))
    assert nx.is_connected(g)


def test_shipped_shapes():
    g = load_topology(os.path.join(TOPOLOGIES, "leaf_spine_64gpu.yaml"))
    s = summary(g)
    assert len(gpus(g)) == 64 and s["servers"] == 8
    assert s["node_kinds"]["switch"] == 8  # 4 leaves + 4 spines
    assert s["bisection_bps"] == pytest.approx(32 * 400e9)  # non-blocking: 32 NICs per half
    h = load_topology(os.path.join(TOPOLOGIES, "two_cluster_hetero.yaml"))
    assert summary(h)["nic_kinds"] == {"ethernet": 32, "infiniband": 32}
    d = load_topology(os.path.join(TOPOLOGIES, "dumbbell.yaml"))
    _same(d, load_topology("dumbbell:n_left=4,n_right=4"))


def _same(a, b):
    assert sorted(a.nodes) == sorted(b.nodes)
    assert {frozenset(e) for e in a.edges} == {frozenset(e) for e in b.edges}
    for n in a.nodes:
        assert a.nodes[n] == b.nodes[n]
    for u, v in a.edges:
        assert a.edges[u, v] == b.edges[u, v]


@pytest.mark.parametrize("ext", [".graphml", ".yaml"])
def test_round_trip(tmp_path, ext):
    g = load_topology(os.path.join(TOPOLOGIES, "two_cluster_hetero.yaml"))
    p = str(tmp_path / f"t{ext}")
    save_topology(g, p)
    h = load_topology(p)
    _same(g, h)
    assert Router(h).path("s0.gpu1", "s6.gpu2", 5) == Router(g).path("s0.gpu1", "s6.gpu2", 5)


def test_plain_networkx_graphml_with_unit_strings(tmp_path):
    g = nx.Graph()
    g.add_node("h1", kind="host")
    g.add_node("h2", kind="host")
    g.add_node("sw", kind="switch", buffer_bytes="16MB")
    g.add_edge("h1", "sw", kind="ethernet", rate_bps="25Gbps", delay_ns="500ns")
    g.add_edge("h2", "sw", kind="ethernet", rate_bps=25e9, delay_ns=500)
    p = str(tmp_path / "x.graphml")
    nx.write_graphml(g, p)
    h = load_topology(p)
    assert h.edges["h1", "sw"]["rate_bps"] == 25e9 and h.nodes["sw"]["buffer_bytes"] == 16_000_000


def test_hpcc_topology_parse():
    g = load_topology(os.path.join(TOPOLOGIES, "hpcc_small", "topology.txt"))
    assert sorted(g.nodes, key=int) == [str(i) for i in range(11)]
    assert [n for n, k in g.nodes(data="kind") if k == "switch"] == ["8", "9", "10"]
    assert g.edges["8", "10"]["rate_bps"] == 400e9 and g.edges["0", "8"]["delay_ns"] == 1000
    assert Router(g).path("0", "5") == ("0", "8", "10", "9", "5")


def _write(tmp_path, text, name="topology.txt"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_hpcc_error_rate_kept_and_checked(tmp_path):
    g = load_topology(_write(tmp_path, "3 1 2\n2\n0 2 100Gbps 0.001ms 0.001\n1 2 100Gbps 1000ns 0\n"))
    assert g.edges["0", "2"]["error_rate"] == 0.001 and g.edges["0", "2"]["delay_ns"] == 1000
    assert "error_rate" not in g.edges["1", "2"]
    with pytest.raises(TopologyError, match=r"line 3, field error_rate.*'1.5'.*\[0, 1\)"):
        load_topology(_write(tmp_path, "3 1 2\n2\n0 2 100Gbps 1us 1.5\n1 2 100Gbps 1us 0\n"))


@pytest.mark.parametrize("text,match", [
    ("3 1 2\n2\n0 2 100Gbsp 1000ns 0\n1 2 100Gbps 1000ns 0\n", r"line 3, field rate: bad rate \(got '100Gbsp'\)"),
    ("3 1 3\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", "line 1, field links: declares 3 links but the file holds 2"),
    ("3 1 2\n2\n0 7 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", r"line 3, field dst: unknown node \(got '7'\)"),
    ("three\n", "bad header"),
    ("", "empty topology"),
])
def test_hpcc_errors(tmp_path, text, match):
    with pytest.raises(TopologyError, match=match):
        load_topology(_write(tmp_path, text))
