"""The optimizer step has its own breakdown key (it used to be lumped into an unlabelled "other")."""
import pytest

from netsim.cli.run import format_result
from netsim.runtime import run_training

OPT_MS = 0.5


def _workload(optimizer):
    return {"name": "opt", "model": {"layer_list": [{"params": 1000, "fwd_flops": 1e9, "out_elems": 1000}] * 2},
            "training": {"global_batch": 2, "micro_batch": 1}, "parallelism": {"dp": 2},
            "compute": {"layer_times_ms": {"default": [1.0, 2.0]}, "optimizer": optimizer}}


def test_optimizer_step_is_its_own_key_and_labelled(free_network):
    s = run_training(free_network(2), _workload(f"{OPT_MS}ms"), backend="analytic")
    bd = s["breakdown_s"]
    # 1 micro-batch, 2 layers of (1 + 2) ms, then the optimizer step; free communication
    assert bd["compute"] == pytest.approx(6e-3, rel=1e-9)
    assert bd["optimizer"] == pytest.approx(OPT_MS * 1e-3, rel=1e-9)
    assert bd["other"] == pytest.approx(0.0, abs=1e-12)
    assert sum(bd.values()) == pytest.approx(s["iteration_time_s"], rel=1e-9)
    assert "optimizer step 0.500 ms" in format_result(s)


def test_no_optimizer_step_no_optimizer_time(free_network):
    s = run_training(free_network(2), _workload("none"), backend="analytic")
    assert s["breakdown_s"]["optimizer"] == 0.0
    assert "optimizer step" not in format_result(s)
