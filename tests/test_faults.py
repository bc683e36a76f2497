"""Fault tests: a failed, interrupted or killed run keeps what it finished and is never misread.

* An error injected at simulated time T (a SimPy process raising in the
  middle of a `netsim run`): exit 2 with one line, and the failed run's
  fct.csv / ops.csv hold exactly the rows the complete run finished before T
  (the two runs are identical up to T), as many as summary.json says it
  received; status ``failed: ...``, ``sim_time_ns`` = T.
* SIGINT / SIGTERM to a subprocess once rows are on disk (polled, not slept):
  exit 130, status ``interrupted``, every row the sinks received is in the file.
* SIGKILL at several points (simulating, converting to Parquet, writing the
  trace): ``load_run`` either sees a complete run or reports it incomplete,
  never reads a ``.partial`` file, and `netsim report` works on it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest

from netsim.analysis.io import IncompleteRunWarning, load_run, read_table
from netsim.cli import main
from netsim.errors import SimulationError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WL = os.path.join(ROOT, "workloads", "bert-large-small.yaml")
# 4 one-GPU servers, one per leaf, 2 spines: ~48 flows and ~46 ops per iteration on `flow`, in ms of wall time
FABRIC = "gpu_cluster:servers=4,gpus_per_server=1,servers_per_leaf=1,spines=2"
# a child process that writes CSV chunks of 20 rows, so rows reach the disk within the first iterations
CHILD = ("import sys, netsim.records as r; r.CSV_CHUNK_ROWS = 20; from netsim.cli import main; "
         "sys.exit(main(sys.argv[1:]))")


def _lines(path) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines()


def _summary(d) -> dict:
    with open(os.path.join(d, "summary.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _partials(d) -> list[str]:
    return sorted(f for f in os.listdir(d) if f.endswith(".partial"))


def _run_args(out, iterations, *extra):
    return ["run", FABRIC, WL, "--backend", "flow", "--iterations", str(iterations), "--out", out, "--quiet", *extra]


def _before(rows: list[str], col: int, t_ns: int) -> set[str]:
    return {r for r in rows[1:] if int(r.split(",")[col]) < t_ns}


def test_injected_error_keeps_every_row_finished_before_it(tmp_path, monkeypatch, capsys):
    full = str(tmp_path / "full")
    assert main(_run_args(full, 20, "--no-trace")) == 0
    t_ns = _summary(full)["sim_time_ns"] // 2
    import netsim.runtime.api as api
    real = api.create_backend

    def with_fault(*a, **k):
        be = real(*a, **k)

        def fault(env):
            yield env.timeout(t_ns * 1000)
            raise SimulationError("injected fault")
        be.env.process(fault(be.env))
        return be
    monkeypatch.setattr(api, "create_backend", with_fault)
    bad = str(tmp_path / "bad")
    capsys.readouterr()
    assert main(_run_args(bad, 20)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "injected fault" in err[0]
    s = _summary(bad)
    assert s["status"] == "failed: injected fault" and s["sim_time_ns"] == t_ns
    assert _partials(bad) == [] and not os.path.exists(os.path.join(bad, "trace.json"))
    for name, end_col in (("fct", 5), ("ops", 7)):
        got, ref = _lines(os.path.join(bad, name + ".csv")), _lines(os.path.join(full, name + ".csv"))
        assert len(got) - 1 == s["outputs"][name + ".csv"] > 0
        assert all(int(r.split(",")[end_col]) <= t_ns for r in got[1:])      # nothing after the fault
        assert _before(got, end_col, t_ns) == _before(ref, end_col, t_ns)   # everything before it
    assert s["flows"] == len(_lines(os.path.join(bad, "fct.csv"))) - 1
    with pytest.warns(IncompleteRunWarning, match="failed: injected fault"):
        run = load_run(bad)
    assert not run.complete and len(run.fct) == s["flows"]
    assert main(["report", bad]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "incomplete" in err[0]
    assert "Incomplete run" in open(os.path.join(bad, "report.html"), encoding="utf-8").read()


def _start(out, iterations, *extra):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", CHILD, *_run_args(out, iterations, *extra)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(proc, cond, timeout_s: float = 120.0) -> bool:
    """Poll ``cond()`` every millisecond until true (True) or the process ends first (False)."""
    t_end = time.monotonic() + timeout_s
    while time.monotonic() < t_end:
        if cond():
            return True
        if proc.poll() is not None:
            return cond()
        time.sleep(0.001)
    proc.kill()
    raise AssertionError("the run made no progress in time")


def _data_rows(path, n: int):
    def cond():
        try:
            return os.path.getsize(path) > 0 and len(_lines(path)) > n
        except OSError:
            return False
    return cond


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_run_keeps_every_row(tmp_path, sig):
    out = str(tmp_path / "o")
    proc = _start(out, 100_000)               # far more than it will reach
    assert _wait_for(proc, _data_rows(os.path.join(out, "fct.csv.partial"), 40))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err
    s = _summary(out)
    assert s["status"] == "interrupted" and s["sim_time_ns"] > 0
    assert _partials(out) == []
    fct, ops = _lines(os.path.join(out, "fct.csv")), _lines(os.path.join(out, "ops.csv"))
    assert len(fct) - 1 == s["outputs"]["fct.csv"] == s["flows"] >= 40
    assert len(ops) - 1 == s["outputs"]["ops.csv"] > 0


def _check_not_misread(out, report: bool = True) -> str:
    """Load a killed run's folder: complete, or reported incomplete; whole files only; report works."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = load_run(out)
    flagged = [w for w in caught if issubclass(w.category, IncompleteRunWarning)]
    summary_ok = os.path.exists(os.path.join(out, "summary.json")) and \
        _summary(out).get("status") == "complete" and not _partials(out)
    assert run.complete == summary_ok and bool(flagged) == (not summary_ok)
    for name in ("fct", "ops"):
        csv = os.path.join(out, name + ".csv")
        if os.path.exists(csv):      # under its final name a table is whole: it reads, all of it
            assert len(getattr(run, name)) == len(_lines(csv)) - 1
            pq = os.path.join(out, name + ".parquet")
            if os.path.exists(pq):
                assert len(read_table(pq, name)) == len(_lines(csv)) - 1
    if os.path.exists(os.path.join(out, "trace.json")):
        with open(os.path.join(out, "trace.json"), encoding="utf-8") as fh:
            assert json.load(fh)["traceEvents"]
    if report:
        assert main(["report", out, "--out", out + ".html"]) == 0
    return run.status


def _writing_outputs(out):
    def cond():
        try:
            return _summary(out).get("status") == "writing outputs"
        except (OSError, ValueError):
            return False
    return cond


KILL_POINTS = {
    "simulating": lambda out: _data_rows(os.path.join(out, "fct.csv.partial"), 40),
    "writing outputs": _writing_outputs,
    "trace": lambda out: (lambda: os.path.exists(os.path.join(out, "trace.json.partial"))),
}


@pytest.mark.parametrize("point", ["simulating", "writing outputs"])
def test_sigkill_leaves_nothing_misread(tmp_path, point, capsys):
    out = str(tmp_path / "o")
    proc = _start(out, 100_000 if point == "simulating" else 30)
    hit = _wait_for(proc, KILL_POINTS[point](out))
    proc.kill()
    proc.communicate(timeout=60)
    status = _check_not_misread(out, report=point != "simulating")   # the report of one is enough
    if hit:
        assert status.startswith("incomplete")


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0])
def test_sigkill_at_random_times(tmp_path, delay_s, capsys):
    """Kill points spread over start-up, simulation, Parquet and trace writing of a 200-iteration run."""
    out = str(tmp_path / "o")
    proc = _start(out, 200)
    time.sleep(delay_s)
    proc.kill()
    proc.communicate(timeout=60)
    if os.path.isdir(out):
        _check_not_misread(out)


@pytest.mark.slow
def test_sigkill_while_writing_the_trace(tmp_path, capsys):
    out = str(tmp_path / "o")
    proc = _start(out, 200)
    hit = _wait_for(proc, KILL_POINTS["trace"](out))
    proc.kill()
    proc.communicate(timeout=60)
    status = _check_not_misread(out)
    assert not hit or status.startswith("incomplete")


def test_a_new_run_first_removes_the_old_commit_marker_and_outputs(tmp_path):
    from netsim.runfiles import prepare_out_dir
    d = tmp_path / "o"
    d.mkdir()
    for name in ("summary.json", "fct.csv", "fct.parquet", "trace.json", "ops.csv.partial", "notes.txt", "point.json"):
        (d / name).write_text("old")
    prepare_out_dir(str(d))
    assert sorted(os.listdir(d)) == ["notes.txt", "point.json"]     # only netsim's own names go


@pytest.mark.slow
def test_sigint_while_writing_outputs(tmp_path):
    out = str(tmp_path / "o")
    proc = _start(out, 200)
    hit = _wait_for(proc, _writing_outputs(out))
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    s = _summary(out)
    if hit and proc.returncode == 130:
        assert s["status"] == "interrupted" and _partials(out) == []
    else:                                     # it finished before the signal landed
        assert proc.returncode == 0 and s["status"] == "complete"
    assert len(_lines(os.path.join(out, "fct.csv"))) - 1 == s["outputs"]["fct.csv"] == s["flows"]


def test_sigterm_is_held_back_in_a_deferred_block_and_the_handler_restored():
    from netsim.interrupts import deferred, interrupt_signals
    before = signal.getsignal(signal.SIGTERM)
    reached = False
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        with interrupt_signals():
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)                 # the handler runs here and holds the interrupt back
                reached = True
    assert reached and signal.getsignal(signal.SIGTERM) is before


def test_a_sink_closed_after_an_error_has_every_row(tmp_path):
    from netsim.records import CsvSink
    p = str(tmp_path / "t.csv")
    sink = CsvSink(p, ("a", "b"), chunk_rows=3)
    try:
        for i in range(7):
            sink.add((i, f"x{i}"))
        raise RuntimeError("boom")
    except RuntimeError:
        sink.close()
    assert _lines(p) == ["a,b"] + [f"{i},x{i}" for i in range(7)] and sink.count == 7
    assert _partials(str(tmp_path)) == []
    empty = CsvSink(str(tmp_path / "e.csv"), ("a",))
    assert not os.path.exists(str(tmp_path / "e.csv.partial"))   # nothing on disk before the first write
    empty.close()
    assert _lines(str(tmp_path / "e.csv")) == ["a"]


@pytest.mark.parametrize("refusal", [("--seed", "-3"), ("--set", "mtu_bytes=0")], ids=["option", "value"])
def test_a_refused_run_leaves_no_earlier_results_that_look_like_its_own(tmp_path, capsys, refusal):
    """A complete run, then a refused one (exit 2) into the same folder: the folder says ``failed``.

    The earlier run's fct.csv/summary.json would otherwise look like the
    answer to the refused command; the refusal's own line is the status.
    Both kinds of refusal: an option argparse rejects, a value netsim's
    parameter check rejects. A folder that did not exist is not created.
    """
    from tests.trial.trialcli import run_cli
    out = str(tmp_path / "o")
    assert main(_run_args(out, 1)) == 0
    assert _summary(out)["status"] == "complete" and os.path.exists(os.path.join(out, "fct.csv"))
    capsys.readouterr()
    rc, err = run_cli(_run_args(out, 1, *refusal), capsys)
    assert rc == 2 and len(err) == 1
    assert sorted(os.listdir(out)) == ["summary.json"]
    s = _summary(out)
    assert s["status"].startswith("failed: ") and s["status"][len("failed: "):] in err[0] and s["outputs"] == {}
    with pytest.warns(IncompleteRunWarning):
        load_run(out)
    fresh = str(tmp_path / "never")
    assert run_cli(_run_args(fresh, 1, *refusal), capsys)[0] == 2
    assert not os.path.exists(fresh)
