"""`netsim sweep` on the command line: one-line errors (exit 2), --dry-run, progress line."""
import io

import pytest

from netsim.cli import main
from netsim.sweep import run_sweep

from sweep_scenario import write_sweep


def test_bad_sweep_file_is_one_line_exit_2(tmp_path, capsys):
    spec = write_sweep(tmp_path, "grid:\n  set.ecn_kmin_bytes: 5KB\n")
    assert main(["sweep", spec, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("netsim sweep: error: ")
    assert spec in err and "field grid.set.ecn_kmin_bytes" in err and "'5KB'" in err
    assert not (tmp_path / "out").exists()


def test_workers_must_be_positive(tmp_path, capsys):
    spec = write_sweep(tmp_path, "")
    assert main(["sweep", spec, "--out", str(tmp_path / "out"), "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_dry_run_lists_points(tmp_path, capsys):
    spec = write_sweep(tmp_path, "grid:\n  cc: [none, dcqcn]\nrepetitions: 3\n")
    assert main(["sweep", spec, "--out", str(tmp_path / "out"), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "6 points" and "cc=dcqcn repetition=2 seed=2" in lines[-2]


def test_progress_counts_done_running_failed(tmp_path):
    pytest.importorskip("dask.distributed")
    # the middle point fails when it runs (a flow file naming a node the topology lacks); a bad --set
    # value would now be caught when the sweep file is read, before any point runs
    (tmp_path / "bad.csv").write_text("src,dst,size_bytes,start_ns\nleft0,nowhere,1000,0\n")
    spec = write_sweep(tmp_path, "grid:\n  flows: [flows.csv, bad.csv, flows2.csv]\n")
    (tmp_path / "flows2.csv").write_text((tmp_path / "flows.csv").read_text())
    stream = io.StringIO()
    res = run_sweep(spec, str(tmp_path / "out"), workers=1, progress=stream)
    shown = stream.getvalue()
    assert (res.ok, res.failed) == (2, 1)
    assert "sweep: 0/3 done, 1 running, 0 failed" in shown
    assert "sweep: 3/3 done, 0 running, 1 failed" in shown and "ETA" in shown
