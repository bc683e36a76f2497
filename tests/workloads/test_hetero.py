"""Holmes helpers: NIC-aware placement keeps DP/TP inside clusters; balanced partition is optimal."""
import itertools

import pytest

from netsim.errors import WorkloadError
from netsim.topology import two_clusters
from netsim.workloads.hetero import (balanced_partition, nic_aware_gpu_order, nic_clusters, stage_clusters,
                                     stage_layer_costs, stage_time_s)
from netsim.workloads.placement import Placement


def test_nic_aware_order_keeps_groups_in_clusters():
    g = two_clusters(2, 2, gpus_per_server=4)
    assert [len(v) for v in nic_clusters(g).values()] == [8, 8]
    order = nic_aware_gpu_order(g, dp=2, tp=4, pp=2)
    pl = Placement.build(2, 4, 2, ("tp", "dp", "pp"), order)
    cl = lambda r: g.nodes[pl.gpu_of[r]]["cluster"]
    for kind in ("tp", "dp"):
        for grp in pl.groups[kind]:
            assert len({cl(r) for r in grp}) == 1
    for grp in pl.groups["pp"]:
        assert len({cl(r) for r in grp}) == 2     # only the pipeline crosses clusters
    assert stage_clusters(g, order, 2, 4, 2) == ["infiniband", "ethernet"]


def test_nic_aware_order_error():
    g = two_clusters(1, 1, gpus_per_server=4)
    with pytest.raises(WorkloadError, match="NIC-aware placement"):
        nic_aware_gpu_order(g, dp=3, tp=1, pp=3)


def brute(n, speeds, costs):
    best = None
    p = len(speeds)
    for cut in itertools.combinations(range(1, n), p - 1):
        counts = [b - a for a, b in zip((0,) + cut, cut + (n,))]
        t = max(stage_time_s(counts, speeds, costs))
        best = t if best is None else min(best, t)
    return best


@pytest.mark.parametrize("n, speeds, costs", [
    (8, [1.0, 1.0], [1.0, 3.0]),
    (24, [1.0, 0.5, 1.0], 1.0),
    (13, [2.0, 1.0, 1.5, 0.7], [1.0, 1.2, 1.0, 1.1]),
])
def test_balanced_partition_is_optimal(n, speeds, costs):
    part = balanced_partition(n, speeds, costs)
    assert sum(part) == n and min(part) >= 1
    assert max(stage_time_s(list(part), speeds, costs)) == pytest.approx(brute(n, speeds, costs))


def test_even_when_equal():
    assert balanced_partition(12, [1.0] * 4) == (3, 3, 3, 3)


def test_stage_costs_follow_nic_rate():
    c = stage_layer_costs(0.01, 50e6, 4, [400e9, 100e9])
    assert c[1] > c[0] > 0.01
    assert c[1] - 0.01 == pytest.approx(4 * (c[0] - 0.01))


def test_speed_balanced_partition_follows_nic_speed():
    from netsim.hoststack import HostStack
    from netsim.workloads import load_workload
    from netsim.workloads.hetero import speed_balanced_partition
    job = {"model": {"preset": "gpt-1.5b", "layers": 24}, "training": {"global_batch": 32, "micro_batch": 4},
           "parallelism": {"tp": 4, "pp": 2, "dp": 2}, "compute": {"gpu": "a100"}}
    wl = load_workload(job)
    same = two_clusters(2, 2, gpus_per_server=4, nic_kind_b="infiniband", nic_rate_b_bps="400Gbps")
    order = nic_aware_gpu_order(same, 2, 4, 2)
    even = speed_balanced_partition(wl, same, order, HostStack())
    assert abs(even[0] - even[1]) <= 2          # only the embedding/logits tilt it
    mixed = two_clusters(2, 2, gpus_per_server=4)   # B: Ethernet, kernel TCP
    part = speed_balanced_partition(wl, mixed, nic_aware_gpu_order(mixed, 2, 4, 2), HostStack())
    assert part[1] < even[1] and sum(part) == 24


def test_partition_speed_balanced_from_the_workload_file():
    from netsim.hoststack import HostStack
    from netsim.workloads import load_workload, place
    from netsim.workloads.hetero import speed_balanced_partition
    from netsim.workloads.placement import resolve_partition
    job = {"model": {"preset": "gpt-1.5b", "layers": 24}, "training": {"global_batch": 32, "micro_batch": 4},
           "parallelism": {"tp": 4, "pp": 2, "dp": 2, "partition": "speed_balanced"}, "compute": {"gpu": "a100"},
           "placement": {"nic": "nic_aware"}}
    wl = load_workload(job)
    assert wl.partition == "speed_balanced"
    with pytest.raises(ValueError, match="resolved on a topology"):
        wl.stage_layer_counts()
    mixed = two_clusters(2, 2, gpus_per_server=4)   # cluster B: Ethernet, kernel TCP
    resolved = resolve_partition(wl, place(wl, mixed), mixed)
    want = speed_balanced_partition(wl, mixed, nic_aware_gpu_order(mixed, 2, 4, 2), HostStack())
    assert resolved.stage_layer_counts() == want and want[1] < want[0] and sum(want) == 24


def test_partition_name_error():
    from netsim.workloads import load_workload
    with pytest.raises(WorkloadError, match="speed_balanced") as e:
        load_workload({"model": "gpt-1.5b", "training": {"global_batch": 8},
                       "parallelism": {"pp": 2, "partition": "speed"}})
    assert "\n" not in str(e.value)
