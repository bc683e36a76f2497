"""ZeRO stages and sequence parallelism: collective plans and the volume formulas of workloads.md."""
import pytest

from netsim.errors import WorkloadError
from netsim.workloads.zero import (check_stage, dp_bytes_per_rank, dp_plan, layer_gathers, optimizer_fraction,
                                   sp_tp_collectives)


def test_stage0_is_ddp():
    plan = dp_plan(0, [10, 20])
    assert plan == {"backward": [("allreduce", 10), ("allreduce", 20)], "after_optimizer": []}


@pytest.mark.parametrize("stage", [1, 2])
def test_stage12_rs_then_ag_same_volume(stage):
    plan = dp_plan(stage, [10, 20])
    assert [c for c, _ in plan["backward"]] == ["reducescatter"] * 2
    assert [c for c, _ in plan["after_optimizer"]] == ["allgather"] * 2
    # ring: RS + AG = (d-1)/d·S each = all-reduce's 2(d-1)/d·S
    assert dp_bytes_per_rank(stage, 1000, 8) == pytest.approx(dp_bytes_per_rank(0, 1000, 8))


def test_stage3_is_1_5x():
    assert dp_plan(3, [5])["after_optimizer"] == []
    assert layer_gathers(3, 123) == {"forward": 123, "backward": 123}
    assert layer_gathers(2, 123) == {}
    assert dp_bytes_per_rank(3, 1000, 8) / dp_bytes_per_rank(0, 1000, 8) == pytest.approx(1.5)


def test_optimizer_sharded():
    assert optimizer_fraction(0, 8) == 1.0
    assert optimizer_fraction(1, 8) == pytest.approx(1 / 8)


def test_sp():
    assert sp_tp_collectives(100) == [("reducescatter", 100), ("allgather", 100)]


@pytest.mark.parametrize("bad", [4, -1, "2", True])
def test_bad_stage(bad):
    with pytest.raises(WorkloadError, match="unknown ZeRO stage"):
        check_stage(bad)
