"""``netsim run --repeat N``: seeds, per-repeat folders, repeats.csv/png and the distribution in summary.json."""
import csv
import json

import numpy as np
import pytest
import yaml

from netsim.cli import main
from netsim.runtime.repeat import distribution, repeat_seeds

from tests.runtime.conftest import layer_workload

TOPO = "gpu_cluster:servers=2,gpus_per_server=2,nic_rates_bps=100Gbps"


def _wl(tmp_path, **sections):
    p = tmp_path / "w.yaml"
    p.write_text(yaml.safe_dump(layer_workload(4, params=10**6, **sections)))
    return str(p)


def _repeat(tmp_path, name, wl, *extra, backend="flow"):
    out = tmp_path / name
    assert main(["run", TOPO, wl, "--backend", backend, "--out", str(out), "--repeat", "5", "--quiet",
                 "--no-trace", *extra]) == 0
    return out, json.loads((out / "summary.json").read_text())


def test_no_random_source_gives_five_equal_times(tmp_path):
    """Two servers on one switch: a single path per pair (no ECMP choice), no RED, no MoE, no variability."""
    out, s = _repeat(tmp_path, "a", _wl(tmp_path))
    assert s["repeats"] == 5 and s["seeds"] == [0, 1, 2, 3, 4] and s["status"] == "complete"
    t = s["iteration_times_s"]
    assert len(t) == 5 and len(set(t)) == 1 and s["distribution_s"]["std"] == 0
    d = s["distribution_s"]
    assert d["p50"] == d["p95"] == d["p99"] == d["mean"] == t[0]
    with open(out / "repeats.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["seed"]) for r in rows] == [0, 1, 2, 3, 4]
    for k in range(5):
        sub = json.loads((out / f"repeat_{k:03d}" / "summary.json").read_text())
        assert sub["seed"] == k and sub["iteration_times_s"] == [t[k]]
    assert (out / "repeats.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_jitter_varies_and_reruns_are_byte_identical(tmp_path):
    wl = _wl(tmp_path)
    a, s = _repeat(tmp_path, "a", wl, "--variability", "jitter=lognormal", "--variability", "jitter_cv=0.2")
    b, _ = _repeat(tmp_path, "b", wl, "--variability", "jitter=lognormal", "--variability", "jitter_cv=0.2")
    assert len(set(s["iteration_times_s"])) == 5
    for name in ("summary.json", "repeats.csv", "repeats.png", "repeat_003/ops.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # repeat 3 is exactly a plain run with --seed 3
    one = tmp_path / "one"
    assert main(["run", TOPO, wl, "--backend", "flow", "--out", str(one), "--seed", "3", "--quiet", "--no-trace",
                 "--variability", "jitter=lognormal", "--variability", "jitter_cv=0.2"]) == 0
    assert (one / "ops.csv").read_bytes() == (a / "repeat_003" / "ops.csv").read_bytes()


def test_distribution_statistics_by_hand():
    x = [1.0, 2.0, 3.0, 4.0, 10.0]
    d = distribution(x)
    assert d["mean"] == 4.0 and d["p50"] == 3.0 and d["std"] == pytest.approx(np.sqrt(50 / 4))
    assert d["p95"] == pytest.approx(4 + 0.8 * 6) and d["p99"] == pytest.approx(4 + 0.96 * 6)
    half = 2.7764451051977987 * np.sqrt(50 / 4) / np.sqrt(5)             # t(0.975, 4)
    assert d["mean_ci95_s"] == pytest.approx([4 - half, 4 + half])
    assert repeat_seeds(7, 3) == [7, 8, 9]


@pytest.mark.parametrize("flag,value", [("--repeat", "0"), ("--overlap-slowdown", "11")])
def test_bad_repeat_flags_exit_2_with_one_line(tmp_path, capsys, flag, value):
    assert main(["run", TOPO, _wl(tmp_path), "--backend", "analytic", "--out", str(tmp_path / "x"),
                 flag, value]) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "\n" not in err


def test_interrupted_repeat_says_so_at_the_top(tmp_path, monkeypatch):
    """Regression (issue #14, trial): Ctrl-C during --repeat left no top-level summary.json."""
    import netsim.runtime.api as api
    real, calls = api.run_training, []

    def second_one_interrupted(*a, **kw):
        calls.append(kw["seed"])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)
    monkeypatch.setattr(api, "run_training", second_one_interrupted)
    out = tmp_path / "r"
    assert main(["run", TOPO, _wl(tmp_path), "--backend", "analytic", "--out", str(out), "--repeat", "3",
                 "--quiet", "--no-trace"]) == 130
    s = json.loads((out / "summary.json").read_text())
    assert s["status"] == "interrupted" and s["runs"] == ["repeat_000"] and s["repeats_finished"] == 1
    assert len(s["iteration_times_s"]) == 1 and (out / "repeat_000" / "summary.json").exists()
