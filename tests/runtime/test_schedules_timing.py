"""Pipeline schedules on the analytic backend with free communication.

A p-stage pipeline with m micro-batches takes (m + p − 1)·(t_f + t_b) under
both GPipe and 1F1B; 1F1B keeps at most p micro-batches in flight per stage
(p − s on stage s), GPipe m.  The breakdown puts m·(t_f + t_b) in compute and
(p − 1)·(t_f + t_b) in bubble (APNet'24's split).
"""
import pytest

from netsim.runtime import run_training

T_F_MS, T_B_MS = 1.0, 2.0


def _pipeline(p, m, schedule):
    return {"name": "pipe", "model": {"layer_list": [{"params": 1000, "fwd_flops": 1e9, "out_elems": 1000}] * p},
            "training": {"global_batch": m, "micro_batch": 1},
            "parallelism": {"pp": p, "schedule": schedule},
            "compute": {"layer_times_ms": {"default": [T_F_MS, T_B_MS]}, "optimizer": "none"}}


def _in_flight(ops_rows, rank):
    events = []
    for r, it, name, kind, group, size, start, end, *_choice in ops_rows:
        if r == rank and kind == "compute":
            j = int(name.split(".")[0][1:])
            if name[0] == "F":
                events.append((start, 1, j))
            elif name[0] == "B":
                events.append((end, -1, j))
    cur = best = 0
    for _, d, _ in sorted(events, key=lambda e: (e[0], e[1])):
        cur += d
        best = max(best, cur)
    return best


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
@pytest.mark.parametrize("p,m", [(2, 4), (4, 8), (4, 2), (3, 5)])
def test_pipeline_time_and_in_flight(free_network, schedule, p, m):
    s = run_training(free_network(p), _pipeline(p, m, schedule), backend="analytic", keep_records=True)
    expect = (m + p - 1) * (T_F_MS + T_B_MS) * 1e-3
    assert s["iteration_time_s"] == pytest.approx(expect, rel=1e-6)
    bd = s["breakdown_s"]
    assert sum(bd.values()) == pytest.approx(s["iteration_time_s"], rel=1e-9)
    assert bd["compute"] == pytest.approx(m * (T_F_MS + T_B_MS) * 1e-3, rel=1e-6)
    assert bd["bubble"] == pytest.approx((p - 1) * (T_F_MS + T_B_MS) * 1e-3, rel=1e-6)
    ops = s["records"]["ops"]
    for stage in range(p):
        got = _in_flight(ops, stage)
        if schedule == "1f1b":
            assert got == min(p - stage, m) <= p
        else:
            assert got == m
