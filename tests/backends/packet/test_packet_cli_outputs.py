"""The shared post-run step (trace.json, Parquet) and --cc-params-file of `netsim flows` and `netsim run`."""
import json
import os

import pytest

from netsim.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOPO = os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml")
WL = os.path.join(ROOT, "workloads", "resnet50-small.yaml")


def _flows_file(tmp_path):
    f = tmp_path / "f.csv"
    f.write_text("src,dst,size_bytes,start_ns\nleft0,right0,500KB,0\n")
    return str(f)


def _fct(out):
    with open(os.path.join(out, "fct.csv")) as fh:
        rows = fh.read().splitlines()
    head = rows[0].split(",")
    return int(rows[1].split(",")[head.index("fct_ns")])


def _has_pyarrow():
    try:
        import pyarrow  # noqa: F401
        return True
    except ImportError:
        return False


def test_flows_writes_trace_and_parquet_unless_no_trace(tmp_path, capsys):
    out = str(tmp_path / "o")
    assert main(["flows", "dumbbell:n_left=1,n_right=1", _flows_file(tmp_path), "--out", out, "--quiet"]) == 0
    doc = json.load(open(os.path.join(out, "trace.json")))
    assert doc["traceEvents"]
    if _has_pyarrow():
        assert os.path.exists(os.path.join(out, "fct.parquet"))
    out2 = str(tmp_path / "o2")
    assert main(["flows", "dumbbell:n_left=1,n_right=1", _flows_file(tmp_path), "--out", out2, "--quiet",
                 "--no-trace"]) == 0
    assert not os.path.exists(os.path.join(out2, "trace.json"))
    assert os.path.exists(os.path.join(out2, "summary.json"))


def test_trace_failure_is_one_warning_and_results_survive(tmp_path, capsys, monkeypatch):
    import netsim.analysis.trace as trace

    def boom(*a, **k):
        raise RuntimeError("disk on fire\nsecond line")
    monkeypatch.setattr(trace, "write_trace", boom)
    out = str(tmp_path / "o")
    assert main(["flows", "dumbbell:n_left=1,n_right=1", _flows_file(tmp_path), "--out", out, "--quiet"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "warning" in err[0] and "disk on fire" in err[0]
    assert os.path.exists(os.path.join(out, "fct.csv")) and not os.path.exists(os.path.join(out, "trace.json"))


def test_flows_cc_params_file_and_cli_precedence(tmp_path, capsys):
    topo, flows = "dumbbell:n_left=1,n_right=1", _flows_file(tmp_path)
    base = str(tmp_path / "base")
    main(["flows", topo, flows, "--out", base, "--quiet", "--no-trace"])
    y = tmp_path / "cc.yaml"
    y.write_text("none:\n  window_bytes: 3KB\n")
    small = str(tmp_path / "small")
    main(["flows", topo, flows, "--out", small, "--quiet", "--no-trace", "--cc-params-file", str(y)])
    # a 3 KB window (about 2 packets) cannot fill a ~7 us-RTT 100 G path: much slower than one BDP
    assert _fct(small) > 3 * _fct(base)
    both = str(tmp_path / "both")
    main(["flows", topo, flows, "--out", both, "--quiet", "--no-trace", "--cc-params-file", str(y),
          "--cc-param", "window_bytes=1MB"])
    assert _fct(both) < 1.2 * _fct(base)  # the command line wins over the file
    j = tmp_path / "bad.json"
    j.write_text('{"dcqcn": {"nosuch_key": 1}}')
    rc = main(["flows", topo, flows, "--out", str(tmp_path / "bad"), "--cc-params-file", str(j)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "nosuch_key" in err[0]


def test_run_writes_trace_and_reads_cc_params_file(tmp_path, capsys):
    out = str(tmp_path / "r")
    assert main(["run", TOPO, WL, "--out", out, "--quiet"]) == 0
    doc = json.load(open(os.path.join(out, "trace.json")))
    assert doc["traceEvents"]
    if _has_pyarrow():
        assert os.path.exists(os.path.join(out, "ops.parquet"))
    y = tmp_path / "cc.yaml"
    y.write_text("none:\n  nosuch_key: 3\n")
    rc = main(["run", TOPO, WL, "--out", str(tmp_path / "bad"), "--quiet", "--cc-params-file", str(y)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "nosuch_key" in err[0]
    y.write_text("window_bytes: 3KB\n")  # flat form: applies to --cc (none)
    slow = str(tmp_path / "slow")
    assert main(["run", TOPO, WL, "--out", slow, "--quiet", "--no-trace", "--cc-params-file", str(y)]) == 0
    assert not os.path.exists(os.path.join(slow, "trace.json"))
    t0 = json.load(open(os.path.join(out, "summary.json")))["iteration_time_s"]
    t1 = json.load(open(os.path.join(slow, "summary.json")))["iteration_time_s"]
    assert t1 > t0  # the DP all-reduce crawls with a 3 KB window
