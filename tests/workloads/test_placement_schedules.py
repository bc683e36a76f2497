"""Rank placement orders and pipeline schedules."""
import pytest

from netsim.errors import WorkloadError
from netsim.workloads import Placement
from netsim.workloads.schedules import max_in_flight, schedule

GPUS = [f"s{i // 4}.gpu{i % 4}" for i in range(16)]


def test_megatron_order_tp_fastest_then_dp_then_pp():
    p = Placement.build(2, 4, 2, ("tp", "dp", "pp"), GPUS)
    assert p.groups["tp"][0] == (0, 1, 2, 3)          # one server
    assert p.groups["dp"][0] == (0, 4)
    assert p.groups["pp"][0] == (0, 8)
    assert p.coords[13] == (1, 1, 1)
    assert p.rank_at(1, 1, 1) == 13


def test_dp_first_spreads_tp_across_servers():
    p = Placement.build(2, 4, 1, ("dp", "tp", "pp"), GPUS)
    servers = {p.gpu_of[r].split(".")[0] for r in p.groups["tp"][0]}
    assert p.groups["tp"][0] == (0, 2, 4, 6) and servers == {"s0", "s1"}


def test_every_rank_in_exactly_one_group_of_each_kind():
    p = Placement.build(2, 2, 4, ("pp", "tp", "dp"), GPUS)
    for kind, groups in p.groups.items():
        flat = sorted(r for g in groups for r in g)
        assert flat == list(range(16)), kind


def test_too_few_gpus_is_a_workload_error():
    with pytest.raises(WorkloadError, match="needs dp·tp·pp = 32 GPUs but the topology has 16"):
        Placement.build(8, 2, 2, ("tp", "dp", "pp"), GPUS)


@pytest.mark.parametrize("p,m", [(2, 2), (4, 8), (4, 3), (8, 16)])
def test_schedule_orders(p, m):
    for s in range(p):
        for name in ("1f1b", "gpipe"):
            order = schedule(name, s, p, m)
            assert sorted(order) == sorted([("F", j) for j in range(m)] + [("B", j) for j in range(m)])
            for j in range(m):
                assert order.index(("F", j)) < order.index(("B", j))
        assert max_in_flight(schedule("1f1b", s, p, m)) == min(p - s, m) <= p
        assert max_in_flight(schedule("gpipe", s, p, m)) == m


def test_nic_aware_placement_keeps_dp_groups_in_one_cluster():
    from netsim.topology import nic_of, two_clusters
    from netsim.workloads import load_workload, place
    g = two_clusters(1, 1, gpus_per_server=3)
    doc = {"model": {"layer_list": [{"params": 10, "fwd_flops": 1e6}] * 2}, "training": {"global_batch": 2},
           "parallelism": {"dp": 2, "pp": 2}}
    kind = lambda gpu: g.nodes[nic_of(g, gpu)]["nic_kind"]
    default = place(load_workload(doc), g)
    assert any(len({kind(default.gpu_of[r]) for r in grp}) == 2 for grp in default.groups["dp"])
    aware = place(load_workload({**doc, "placement": {"nic": "nic_aware"}}), g)
    assert all(len({kind(aware.gpu_of[r]) for r in grp}) == 1 for grp in aware.groups["dp"])


def test_balanced_partition_gives_the_slow_nic_stage_fewer_layers():
    from netsim.topology import two_clusters
    from netsim.workloads import load_workload, place
    from netsim.workloads.placement import resolve_partition
    g = two_clusters(1, 1, gpus_per_server=4)        # cluster A InfiniBand, cluster B Ethernet
    w = load_workload({"model": {"preset": "gpt-1.5b", "layers": 16, "hidden": 1024, "heads": 16, "seq_len": 512,
                                 "vocab": 1024, "tied_embeddings": False},
                       "training": {"global_batch": 8, "micro_batch": 1},
                       "parallelism": {"dp": 4, "pp": 2, "partition": "balanced"}})
    pl = place(w, g)
    r = resolve_partition(w, pl, g)
    assert sum(r.partition) == 16 and r.partition[0] > r.partition[1]
    assert resolve_partition(r, pl, g) is r
