"""Sweeps on Dask: LocalCluster vs one by one, failed points, kill and resume, --scheduler."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from netsim.sweep import point_id, run_sweep
from netsim.sweep.runner import load_plan
from netsim.sweep.figures import fct_figures
from netsim.sweep.table import make_row, write_csv
from netsim.units import parse_rate

from sweep_scenario import SIX_POINTS, read_table, write_sweep

pytest.importorskip("dask.distributed")


def test_local_cluster_equals_points_run_one_by_one(six_point_reference, tmp_path):
    spec, out, res = six_point_reference
    assert (res.points, res.ran, res.ok, res.failed) == (6, 6, 6, 0)
    from netsim.cli import main
    rows = []
    for point in load_plan(str(out)):
        folder = tmp_path / str(point["index"])
        assert main(point["argv"] + ["--out", str(folder)]) == 0
        with open(folder / "summary.json") as fh:
            summary = json.load(fh)
        rows.append(make_row(point, {"status": "ok", "summary": summary, "wall_s": 0.0,
                                     "figures": fct_figures(str(folder))}))
        # the point's folder is named by the hash of its parameters, which point.json records
        with open(out / "points" / point["point_id"] / "point.json") as fh:
            assert point_id(json.load(fh)["params"]) == point["point_id"]
    write_csv(str(tmp_path / "serial.csv"), rows, list(load_plan(str(out))[0]["axes"]))
    cols, dask_rows = read_table(out / "results.csv")
    serial_cols, serial_rows = read_table(tmp_path / "serial.csv")
    assert cols == serial_cols and dask_rows == serial_rows
    assert [r["point"] for r in dask_rows] == [str(i) for i in range(6)]
    assert cols[:4] == ["point", "point_id", "topology.host_rate_bps", "topology.bottleneck_rate_bps"]
    # physics: 4 x 50 KB through min(receiver link, bottleneck) cannot finish sooner than 1.6 Mbit at that rate
    for row in dask_rows:
        rate = min(parse_rate(row["topology.host_rate_bps"]), parse_rate(row["topology.bottleneck_rate_bps"]))
        assert float(row["fct.max_ns"]) >= 4 * 50_000 * 8 / rate * 1e9
        assert row["completed"] == "4" and row["bytes_delivered"] == "200000"
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.read_parquet(out / "results.parquet")
    assert list(frame["point"]) == list(range(6)) and set(cols) <= set(frame.columns)


def test_invalid_parameter_fails_its_point_only(tmp_path):
    # a point whose run fails (its flow file names a node the topology lacks) fails only itself;
    # a bad --set value is caught when the sweep file is read (tests/sweep/test_sweep_spec.py)
    (tmp_path / "bad.csv").write_text("src,dst,size_bytes,start_ns\nleft0,nowhere,1000,0\n")
    spec = write_sweep(tmp_path, """\
        grid:
          flows: [flows.csv, bad.csv]
          topology.bottleneck_rate_bps: [50Gbps, 100Gbps]
        """)
    res = run_sweep(spec, str(tmp_path / "out"), workers=2)
    assert (res.ok, res.failed) == (2, 2)
    _, rows = read_table(tmp_path / "out" / "results.csv")
    for row in rows:
        bad = row["flows"] == "bad.csv"
        assert row["status"] == ("failed" if bad else "ok")
        assert ("nowhere" in row["error"]) == bad and "\n" not in row["error"]
    with open(tmp_path / "out" / "points" / rows[2]["point_id"] / "done.json") as fh:
        assert json.load(fh)["status"] == "failed"


class Stop(Exception):
    pass


def test_stopped_sweep_resumes_only_the_rest(six_point_reference, tmp_path):
    spec = write_sweep(tmp_path, SIX_POINTS)
    out = tmp_path / "out"
    seen = []

    def stop_after_two(row):
        seen.append(row["point_id"])
        if len(seen) == 2:
            raise Stop

    with pytest.raises(Stop):
        run_sweep(spec, str(out), workers=2, on_point=stop_after_two)
    _, partial = read_table(out / "results.csv")
    assert sorted(r["point_id"] for r in partial) == sorted(seen)
    stamps = {pid: os.stat(out / "points" / pid / "done.json").st_mtime_ns for pid in seen}
    with pytest.raises(Exception, match="already holds a sweep"):
        run_sweep(spec, str(out), workers=2)
    # points that were running when the sweep stopped may have finished: they count as done
    done = {d for d in os.listdir(out / "points") if (out / "points" / d / "done.json").exists()}
    assert set(seen) <= done
    res = run_sweep(spec, str(out), workers=2, resume=True)
    assert (res.skipped, res.ran, res.ok) == (len(done), 6 - len(done), 6)
    assert stamps == {pid: os.stat(out / "points" / pid / "done.json").st_mtime_ns for pid in seen}
    assert read_table(out / "results.csv") == read_table(six_point_reference[1] / "results.csv")


@pytest.mark.slow  # long validation run (> 7 s); run with -m slow
def test_killed_sweep_process_resumes(tmp_path):
    # 2 MB flows so that each point takes a visible fraction of a second
    spec = write_sweep(tmp_path, SIX_POINTS, flow_bytes=2_000_000)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "netsim", "sweep", spec, "--out", str(out),
                             "--workers", "1", "--quiet"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "results.csv").exists() and len(read_table(out / "results.csv")[1]) >= 1:
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its Dask workers, at once
        proc.wait(timeout=30)
    _, partial = read_table(out / "results.csv")
    done = {d for d in os.listdir(out / "points") if (out / "points" / d / "done.json").exists()}
    assert {r["point_id"] for r in partial} <= done
    assert 1 <= len(done) < 6, "the sweep finished before it could be killed"
    res = run_sweep(spec, str(out), workers=2, resume=True)
    assert (res.skipped, res.ran, res.ok) == (len(done), 6 - len(done), 6)
    _, rows = read_table(out / "results.csv")
    assert [r["point"] for r in rows] == [str(i) for i in range(6)] and len({r["point_id"] for r in rows}) == 6


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # long validation run (> 7 s); run with -m slow
def test_scheduler_address_gives_the_same_table(six_point_reference, tmp_path):
    from dask.distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]))
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--no-dashboard", "--no-show"], **quiet)]
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                       "--nworkers", "2", "--nthreads", "1", "--no-dashboard",
                                       "--host", "127.0.0.1", "--death-timeout", "30"], **quiet))
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=30)
        spec = write_sweep(tmp_path, SIX_POINTS)
        out = tmp_path / "out"
        from netsim.cli import main
        assert main(["sweep", spec, "--out", str(out), "--scheduler", address, "--quiet"]) == 0
        assert read_table(out / "results.csv") == read_table(six_point_reference[1] / "results.csv")
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
