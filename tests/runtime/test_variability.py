"""Compute variability: closed-form means on one GPU, E[max] > max E on synchronous data parallelism."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from netsim.errors import InputError, WorkloadError
from netsim.runtime import run_training

from tests.runtime.conftest import layer_workload, star

C = 3 * (1e-3 + 2e-3)      # compute per iteration of layer_workload() (s): 3 layers x (1 ms + 2 ms)


def _ci_contains(sample, value):
    x = np.asarray(sample)
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return abs(x.mean() - value) <= half, (x.mean(), half, value)


def test_single_gpu_mean_matches_closed_form_within_ci():
    """One GPU, no communication: T = Σ d_i·J_i·S_i with E[J] = 1 (lognormal) and S_i = F with
    probability r, so E[T] = C·(1 + r·(F − 1)); 300 independent iterations."""
    r, f_slow = 0.05, 2.0
    var = {"jitter": "lognormal", "jitter_cv": 0.3, "straggler_rate": r, "straggler_factor": f_slow}
    s = run_training(star(1), layer_workload(1, variability=var), backend="analytic", iterations=300, seed=7)
    times = s["iteration_times_s"]
    ok, info = _ci_contains(times, C * (1 + r * (f_slow - 1)))
    assert ok, info
    assert np.std(times) > 0.05 * C                       # it does vary
    assert not _ci_contains(times, C)[0]                  # and the straggler term is visible


def test_dp_per_gpu_factor_iteration_is_slowest_gpu():
    """Free network, one gradient bucket at the end, no optimizer: T = C · max_r g_r exactly."""
    s = run_training(star(4), layer_workload(4, variability={"gpu_cv": 0.2}), backend="analytic", seed=3)
    assert s["iteration_time_s"] == pytest.approx(C * s["variability"]["gpu_factor"]["max"], abs=1e-11)


def test_dp_mean_exceeds_jitter_free_and_grows_with_gpus():
    """Per-iteration stragglers (rate r per rank, factor F): a synchronous step is slow when any rank
    is, so E[T_n] = C·(1 + (1 − (1 − r)^n)·(F − 1)) — by hand: 1.2 C, 1.36 C, 1.5904 C for n = 1, 2, 4
    (r = 0.2, F = 2); each sample mean lies within its 95 % CI of that, and they grow with n."""
    r, f_slow = 0.2, 2.0
    var = {"straggler_rate": r, "straggler_scope": "iteration", "straggler_factor": f_slow}
    means = []
    for n, by_hand in ((1, 1.2), (2, 1.36), (4, 1.5904)):
        assert 1 + (1 - (1 - r) ** n) * (f_slow - 1) == pytest.approx(by_hand)
        s = run_training(star(n), layer_workload(n, variability=var), backend="analytic", iterations=300, seed=11)
        ok, info = _ci_contains(s["iteration_times_s"], C * by_hand)
        assert ok, (n, info)
        means.append(np.mean(s["iteration_times_s"]))
    assert C < means[0] < means[1] < means[2]


def test_dp_gpu_jitter_expected_max_two_gpus():
    """Per-GPU lognormal factors (mean 1, σ² = ln(1 + cv²)): for two GPUs E[max(g1, g2)] = 2Φ(σ/√2)
    (iid lognormal), for four the integral ∫(1 − F(x)^4)dx; 80 repeats (seeds) each."""
    cv = 0.3
    sigma = math.sqrt(math.log1p(cv * cv))
    dist = stats.lognorm(s=sigma, scale=math.exp(-sigma ** 2 / 2))
    e_max = {1: 1.0, 2: 2 * stats.norm.cdf(sigma / math.sqrt(2)),
             4: integrate.quad(lambda x: 1 - dist.cdf(x) ** 4, 0, np.inf)[0]}
    assert e_max[2] == pytest.approx(integrate.quad(lambda x: 1 - dist.cdf(x) ** 2, 0, np.inf)[0], rel=1e-6)
    means = {}
    for n in (2, 4):
        sample = [run_training(star(n), layer_workload(n, variability={"gpu_cv": cv}), backend="analytic",
                               seed=k)["iteration_time_s"] for k in range(80)]
        ok, info = _ci_contains(sample, C * e_max[n])
        assert ok, (n, info)
        means[n] = np.mean(sample)
    assert C < means[2] < means[4]


def test_sources_are_independent_streams():
    """Turning stragglers on does not change the jitter draws: ops that are not stragglers keep
    their durations."""
    def durations(var):
        s = run_training(star(1), layer_workload(1, variability=var), backend="analytic", iterations=20,
                         seed=5, keep_records=True)
        ex = s["_executor"]
        return [op.duration_ps for it in sorted(ex.iteration_ops) for op in ex.iteration_ops[it]
                if op.kind == "compute"]
    a = durations({"jitter": "lognormal", "jitter_cv": 0.2})
    b = durations({"jitter": "lognormal", "jitter_cv": 0.2, "straggler_rate": 0.3, "straggler_factor": 3.0})
    same = sum(x == y for x, y in zip(a, b))
    tripled = sum(abs(y - 3 * x) <= 2 for x, y in zip(a, b) if x != y)
    assert same + tripled == len(a) and 0 < tripled < len(a)


def test_jitter_leaves_moe_routing_alone():
    """MoE routing draws from its own stream: with jitter on, every all-to-all moves the same bytes."""
    moe = {"name": "m", "model": {"preset": "gpt-350m", "layers": 4, "hidden": 64, "heads": 4, "seq_len": 64,
                                  "vocab": 256, "moe": {"experts": 8, "top_k": 2, "capacity_factor": None}},
           "training": {"global_batch": 16, "micro_batch": 2}, "parallelism": {"dp": 8, "ep": 4}}

    def ep_bytes(**kw):
        s = run_training(star(8), moe, backend="analytic", iterations=2, seed=4, keep_records=True, **kw)
        return s, sorted((f.iteration, f.op, f.src, f.dst, f.size_bytes) for f in s["records"]["fct"]
                         if f.group_kind == "ep")
    (s0, a), (s1, b) = ep_bytes(), ep_bytes(variability={"jitter": "lognormal", "jitter_cv": 0.3})
    assert a and a == b and s0["iteration_times_s"] != s1["iteration_times_s"]


def test_default_off_outputs_unchanged():
    wl = layer_workload(2, params=10**6)
    a = run_training(star(2, rate_bps=100e9), wl, backend="flow", keep_records=True)
    b = run_training(star(2, rate_bps=100e9), {**wl, "variability": {"jitter": "none", "straggler_rate": 0}},
                     backend="flow", keep_records=True)
    assert a["records"]["ops"] == b["records"]["ops"] and "variability" not in a and "variability" not in b


@pytest.mark.parametrize("var,match", [({"jitter": "gauss"}, "variability.jitter: unknown distribution"),
                                       ({"jitter": "normal", "jitter_cv": 0.5}, "variability.jitter_cv: out of range"),
                                       ({"straggler_rate": 1.5}, "variability.straggler_rate: out of range"),
                                       ({"straggler_factor": 0.5}, "variability.straggler_factor"),
                                       ({"gpu_cv": float("nan")}, "variability.gpu_cv"),
                                       ({"straggler_scope": "day"}, "variability.straggler_scope: unknown scope"),
                                       ({"jitter_sd": 1}, "variability.jitter_sd: unknown key")])
def test_bad_fields_are_one_line_errors(var, match):
    with pytest.raises(WorkloadError, match=match) as e:
        run_training(star(1), layer_workload(1, variability=var), backend="analytic")
    assert "\n" not in str(e.value)


def test_bad_flags_name_the_flag():
    with pytest.raises(InputError, match="--variability jitter_cv: out of range"):
        run_training(star(1), layer_workload(1), backend="analytic", variability=[("jitter_cv", "9")])
    with pytest.raises(InputError, match="--overlap-slowdown: out of range"):
        run_training(star(1), layer_workload(1), backend="analytic", overlap_slowdown="-1")
    with pytest.raises(WorkloadError, match="overlap.slow: unknown key"):
        run_training(star(1), layer_workload(1, overlap={"slow": 1}), backend="analytic")


def test_default_cv_when_jitter_is_named():
    from netsim.workloads import load_workload
    from netsim.workloads.variability import DEFAULT_JITTER_CV
    w = load_workload(layer_workload(1, variability={"jitter": "lognormal"}))
    assert w.variability.jitter_cv == DEFAULT_JITTER_CV and load_workload(layer_workload(1)).variability is None


def test_flags_keep_the_file_settings_they_do_not_name():
    """The file sets straggler_factor only (nothing on yet); --variability straggler_rate=1 turns it on."""
    s = run_training(star(1), layer_workload(1, variability={"straggler_factor": 2.0}), backend="analytic",
                     variability=[("straggler_rate", "1")])
    assert s["iteration_time_s"] == pytest.approx(2 * C, abs=1e-11)
