"""Compute slowed by overlapping communication (overlap.slowdown f): the closed form on a DP-only job."""
import pytest

from netsim.runtime import run_training

from tests.runtime.conftest import layer_workload, star

P = 6_250_000              # parameters per layer: a 12.5 MB fp16 bucket, ~1 ms at 100 Gb/s
T_F, T_B = 1e-3, 2e-3      # per-layer forward / backward (s)


def _run(f, params=P, backend="analytic"):
    wl = layer_workload(2, params=params, first_bucket_bytes=2 * params)   # bucket0 = the last layer alone
    s = run_training(star(2, rate_bps=100e9), wl, backend=backend, keep_records=True, overlap_slowdown=f)
    ops = {r[2]: r for r in s["records"]["ops"] if r[0] == 0}
    return s, ops


def _dur_s(row):
    return (row[7] - row[6]) * 1e-9


@pytest.mark.parametrize("f", [0.189, 0.5, 2.0])
def test_analytic_iteration_time_matches_closed_form(f):
    """bucket0 (layer 2's gradients, C1) runs beside the backward of layers 1 and 0 (work W = 2·T_B).

    The backward under it does work x = min(C1/(1+f), W) at 1/(1+f) speed, so it ends f·x later, and
    bucket1 (C2) starts that much later: T(f) = 3·(T_F + T_B) + f·x + C2 — with C1, C2 the collectives'
    durations (not changed by the model) and everything else hand-computed."""
    s0, ops0 = _run(0.0)
    s, ops = _run(f)
    c1, c2 = _dur_s(ops0["dp0.bucket0"]), _dur_s(ops0["dp0.bucket1"])
    assert c1 == pytest.approx(12.5e6 * 8 / 100e9, rel=0.1)          # the ring on two GPUs: S/B plus latencies
    x = min(c1 / (1 + f), 2 * T_B)
    # ops.csv times are whole ns, hence the 3 ns tolerance
    assert s["iteration_time_s"] == pytest.approx(3 * (T_F + T_B) + f * x + c2, abs=3e-9)
    assert s["iteration_time_s"] - s0["iteration_time_s"] == pytest.approx(f * x, abs=3e-9)
    assert s["overlap"]["compute_extra_s"] == pytest.approx(2 * f * x, abs=3e-9)     # two ranks
    assert _dur_s(ops["dp0.bucket0"]) == pytest.approx(c1, abs=2e-9)                 # comm side not slowed


def test_comm_longer_than_remaining_backward_slows_all_of_it():
    """C1 > W·(1+f): all W runs beside communication, so the backward ends f·W later; the iteration
    still ends at bucket0's end + C2 (the exposed communication hides the extra compute)."""
    f = 0.5
    s0, ops0 = _run(0.0, params=8 * P)
    s, ops = _run(f, params=8 * P)
    c1 = _dur_s(ops0["dp0.bucket0"])
    assert c1 > 2 * T_B * (1 + f)
    assert ops["B0.l0.layer"][7] * 1e-9 == pytest.approx(3 * T_F + T_B + 2 * T_B * (1 + f), abs=3e-9)
    assert s["iteration_time_s"] == pytest.approx(s0["iteration_time_s"], abs=2e-9)


def test_zero_slowdown_is_todays_step():
    """f = 0 installs nothing: ops and summary equal a run without the setting."""
    a = run_training(star(2, rate_bps=100e9), layer_workload(2, params=P, first_bucket_bytes=2 * P),
                     backend="analytic", keep_records=True)
    b = run_training(star(2, rate_bps=100e9), layer_workload(2, params=P, first_bucket_bytes=2 * P,
                                                             overlap={"slowdown": 0}),
                     backend="analytic", keep_records=True)
    assert a["records"]["ops"] == b["records"]["ops"] and "overlap" not in b
    assert a["iteration_time_s"] == b["iteration_time_s"]


@pytest.mark.parametrize("backend", ["flow", "packet"])
def test_other_backends_slow_the_same_compute(backend):
    """The model lives in the executor: on flow and packet the same law holds with their own C1."""
    f = 0.5
    s0, ops0 = _run(0.0, backend=backend)
    s, _ = _run(f, backend=backend)
    x = min(_dur_s(ops0["dp0.bucket0"]) / (1 + f), 2 * T_B)
    assert s["iteration_time_s"] - s0["iteration_time_s"] == pytest.approx(f * x, rel=1e-3)


# -- the communication side: overlap.comm_slowdown g -------------------------------------------------
def _run_fg(f, g, params=P, backend="analytic"):
    wl = layer_workload(2, params=params, first_bucket_bytes=2 * params, overlap={"slowdown": f, "comm_slowdown": g})
    s = run_training(star(2, rate_bps=100e9), wl, backend=backend, keep_records=True)
    return s, {r[2]: r for r in s["records"]["ops"] if r[0] == 0}


@pytest.mark.parametrize("f, g", [(0.0, 0.3), (0.189, 0.3), (0.5, 1.0)])
def test_comm_beside_compute_is_slowed_by_closed_form(f, g):
    """bucket0 (network time C1) runs beside backward throughout, so it ends at C1·(1+g); the backward
    under it does work x = C1·(1+g)/(1+f) and ends f·x later: T = 3·(T_F + T_B) + f·x + C2."""
    s0, ops0 = _run(0.0)
    s, ops = _run_fg(f, g)
    c1, c2 = _dur_s(ops0["dp0.bucket0"]), _dur_s(ops0["dp0.bucket1"])
    x = c1 * (1 + g) / (1 + f)
    assert x < 2 * T_B
    assert _dur_s(ops["dp0.bucket0"]) == pytest.approx(c1 * (1 + g), abs=3e-9)
    assert _dur_s(ops["dp0.bucket1"]) == pytest.approx(c2, abs=2e-9)       # after the backward: not slowed
    assert s["iteration_time_s"] == pytest.approx(3 * (T_F + T_B) + f * x + c2, abs=4e-9)
    assert s["overlap"]["comm_extra_s"] == pytest.approx(g * c1, abs=4e-9)      # one op (summed over ops)


def test_comm_outlasting_the_backward_makes_up_lost_progress_at_full_speed():
    """C1 > W·(1+f): the comm runs beside compute for the backward's wall time W·(1+f) only, losing
    W·(1+f)·g/(1+g) of progress, made up at full speed after it: the iteration ends that much later."""
    f, g = 0.5, 1.0
    s0, ops0 = _run(0.0, params=8 * P)
    s, ops = _run_fg(f, g, params=8 * P)
    w = 2 * T_B
    assert _dur_s(ops0["dp0.bucket0"]) > w * (1 + f)
    assert ops["B0.l0.layer"][7] * 1e-9 == pytest.approx(3 * T_F + T_B + w * (1 + f), abs=3e-9)
    assert s["iteration_time_s"] - s0["iteration_time_s"] == pytest.approx(w * (1 + f) * g / (1 + g), abs=4e-9)


def test_zero_comm_slowdown_is_todays_step():
    a, _ = _run(0.5)
    b, _ = _run_fg(0.5, 0.0)
    assert a["records"]["ops"] == b["records"]["ops"] and a["overlap"] == b["overlap"]


@pytest.mark.parametrize("value", [-0.1, 11, "fast", float("nan")])
def test_comm_slowdown_is_validated_in_one_line(value, tmp_path):
    from netsim.errors import WorkloadError
    from netsim.workloads import load_workload
    wl = layer_workload(2, overlap={"comm_slowdown": value})
    with pytest.raises(WorkloadError, match="overlap.comm_slowdown") as exc:
        load_workload(wl)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("backend", ["flow"])
def test_other_backends_slow_the_same_communication(backend):
    """The deferred end lives in the executor: on flow (and packet, same code path) bucket0 (beside backward throughout)
    lasts its own network time × (1 + g)."""
    g = 0.5
    _, ops0 = _run(0.0, backend=backend)
    _, ops = _run_fg(0.0, g, backend=backend)
    assert _dur_s(ops["dp0.bucket0"]) == pytest.approx(_dur_s(ops0["dp0.bucket0"]) * (1 + g), rel=1e-3)
