"""Builders: node/link counts from closed forms, attributes, the expression registry."""
from collections import Counter

import pytest

from netsim.errors import InputError
from netsim.topology import (build_expression, fat_tree, gpu_cluster, gpu_server, gpus, leaf_spine, load_topology,
                             nic_of, server_of, two_clusters, validate)
from netsim.topology.summary import bisection_bandwidth_bps


def kinds(g):
    return Counter(k for _, k in g.nodes(data="kind"))


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts(k):
    g = validate(fat_tree(k))
    c = kinds(g)
    assert c["host"] == k ** 3 // 4
    assert c["switch"] == 5 * k * k // 4
    # every switch has k ports, every host one
    assert all(g.degree(n) == (k if kind == "switch" else 1) for n, kind in g.nodes(data="kind"))
    # full bisection: (k^3/8) hosts on each side at 100 Gbps
    if k <= 6:
        assert bisection_bandwidth_bps(g) == pytest.approx(k ** 3 / 8 * 100e9)


def test_leaf_spine_counts_and_rates():
    g = validate(leaf_spine(6, 3, 5, host_rate_bps="25Gbps", fabric_rate_bps="100Gbps"))
    c = kinds(g)
    assert (c["host"], c["switch"]) == (30, 9)
    assert g.number_of_edges() == 30 + 6 * 3
    assert g.edges["h7", "leaf1"]["rate_bps"] == 25e9
    assert g.edges["leaf5", "spine2"]["rate_bps"] == 100e9


@pytest.mark.parametrize("gpn", [1, 2])
def test_gpu_server_shape(gpn):
    g = validate(gpu_server("s3", gpus=8, gpus_per_nic=gpn, pcie_rate_bps="256Gbps", nic_kind="roce"))
    c = kinds(g)
    assert c == {"gpu": 8, "nvswitch": 1, "pcie_switch": 8 // gpn, "nic": 8 // gpn}
    for i in range(8):
        gpu = f"s3.gpu{i}"
        assert g.edges[gpu, "s3.nvs0"]["kind"] == "nvlink"
        assert g.edges[gpu, "s3.nvs0"]["rate_bps"] == 3.6e12  # H100: 450 GB/s each way
        assert g.edges[gpu, f"s3.pcie{i // gpn}"]["rate_bps"] == 256e9
        assert nic_of(g, gpu) == f"s3.nic{i // gpn}"
        assert server_of(g, gpu) == "s3"
    assert {a["nic_kind"] for n, a in g.nodes(data=True) if a["kind"] == "nic"} == {"roce"}


def test_rail_cluster_nic_i_on_rail_i():
    g = validate(gpu_cluster(servers=6, gpus_per_server=8, gpus_per_nic=2, fabric="rail", spines=2))
    for s in range(6):
        for j in range(4):
            assert g.has_edge(f"s{s}.nic{j}", f"rail{j}")
    assert kinds(g)["switch"] == 4 + 2
    # non-blocking: each rail's uplinks sum to its downlinks (6 x 400 Gbps)
    assert sum(g.edges["rail0", f"spine{k}"]["rate_bps"] for k in range(2)) == pytest.approx(6 * 400e9)


def test_leaf_spine_cluster_oversubscription_and_mixed_nics():
    kinds_ = ["infiniband", "roce", "ethernet", "roce"]
    rates = ["400Gbps", "200Gbps", "100Gbps", "200Gbps"]
    g = validate(gpu_cluster(servers=4, gpus_per_server=4, servers_per_leaf=2, spines=2, oversubscription=2,
                             nic_kinds=kinds_, nic_rates_bps=rates))
    assert g.nodes["s0.nic0"]["nic_kind"] == "infiniband" and g.edges["s0.nic0", "leaf0"]["kind"] == "infiniband"
    assert g.nodes["s2.nic3"]["nic_kind"] == "ethernet" and g.edges["s2.nic3", "leaf1"]["rate_bps"] == 100e9
    # leaf0 has 4x400 + 4x200 Gbps down; 2:1 over 2 spines -> 600 Gbps per uplink
    assert g.edges["leaf0", "spine0"]["rate_bps"] == pytest.approx((4 * 400e9 + 4 * 200e9) / 4)
    assert gpus(g)[:5] == ["s0.gpu0", "s0.gpu1", "s0.gpu2", "s0.gpu3", "s1.gpu0"]


def test_gpus_order_is_natural():
    g = gpu_cluster(servers=12, gpus_per_server=10, spines=2)
    order = gpus(g)
    assert order[9] == "s0.gpu9" and order[10] == "s1.gpu0" and order[-1] == "s11.gpu9"


def test_two_clusters():
    g = validate(two_clusters())
    assert {a.get("cluster") for _, a in g.nodes(data=True)} == {"A", "B"}
    assert g.edges["a.gw", "b.gw"]["rate_bps"] == 100e9
    assert bisection_bandwidth_bps(g) == pytest.approx(100e9)  # halves = the two clusters


def test_expression_and_lists():
    g = build_expression("gpu_cluster:servers=2,gpus_per_server=2,nic_kinds=infiniband|ethernet,"
                         "nic_rates_bps=400Gbps|100Gbps,spines=0")
    assert g.nodes["s1.nic0"]["nic_kind"] == "ethernet"
    assert g.edges["s1.nic0", "leaf0"]["rate_bps"] == 100e9


@pytest.mark.parametrize("expr,match", [
    ("torus:k=3", "unknown builder.*'torus'.*leaf_spine"),
    ("leaf_spine:leafs=3", "unknown argument.*'leafs'.*leaves"),
    ("leaf_spine:host_rate_bps=10Gbsp", "10Gbsp"),
    ("gpu_cluster:servers=3,nic_kinds=roce|ethernet", "nic_kinds"),
    ("leaf_spine:leaves", "key=value"),
])
def test_expression_errors(expr, match):
    with pytest.raises(InputError, match=match):
        load_topology(expr)


@pytest.mark.parametrize("leaves,spines,hosts,want_gbps", [(4, 2, 4, 200), (4, 2, 8, 400), (2, 4, 2, 100),
                                                           (3, 3, 3, 100)])
def test_leaf_spine_is_non_blocking_by_default(leaves, spines, hosts, want_gbps):
    """Uplink capacity >= downlink capacity at every leaf, links never slower than the host links."""
    g = leaf_spine(leaves, spines, hosts)
    up = sum(g.edges["leaf0", f"spine{s}"]["rate_bps"] for s in range(spines))
    assert g.edges["leaf0", "spine0"]["rate_bps"] == want_gbps * 1e9
    assert up >= hosts * 100e9


def test_leaf_spine_oversubscription_argument():
    g = leaf_spine(4, 2, 8, oversubscription=4)
    assert g.edges["leaf0", "spine0"]["rate_bps"] == 100e9       # 8 x 100 down : 2 x 100 up
    with pytest.raises(ValueError, match="not both"):
        leaf_spine(4, 2, 4, oversubscription=2, fabric_rate_bps="100Gbps")
    with pytest.raises(ValueError, match="slower than the host rate"):
        leaf_spine(2, 4, 2, oversubscription=2)
    with pytest.raises(ValueError, match=">= 1"):
        leaf_spine(oversubscription=0.5)
