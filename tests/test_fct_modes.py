"""--fct per-flow|per-op|off: every backend's flow records go to fct.csv, fct_ops.csv or nowhere."""
import csv
import os
import subprocess
import sys

import pandas as pd
import pytest

from netsim.errors import InputError
from netsim.flowfile import FlowSpec
from netsim.runtime import run_training
from netsim.simulate import run_flows
from netsim.topology import build_expression
from tests.conftest import TOPOLOGIES, WORKLOADS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPO = os.path.join(TOPOLOGIES, "leaf_spine_64gpu.yaml")
WL = os.path.join(WORKLOADS, "gpt-1.5b-t2p2d2-small.yaml")


def _by_op(fct: pd.DataFrame) -> pd.DataFrame:
    """What fct_ops.csv must hold, computed from fct.csv with pandas."""
    g = fct.groupby(["iteration", "op", "step", "tag"], dropna=False)
    out = g.agg(groups=("group", "nunique"), flows=("flow_id", "size"), bytes=("size_bytes", "sum"),
                first_start_ns=("start_ns", "min"), last_end_ns=("end_ns", "max"),
                mean_fct_ns=("fct_ns", "mean"), max_fct_ns=("fct_ns", "max")).reset_index()
    return out.sort_values(["iteration", "first_start_ns", "op", "step", "tag"]).reset_index(drop=True)


@pytest.mark.parametrize("backend", ["flow", "analytic", pytest.param("packet", marks=pytest.mark.slow)])
def test_per_op_rows_are_the_per_flow_rows_aggregated(tmp_path, backend):
    a, b = tmp_path / "flow", tmp_path / "op"
    sa = run_training(TOPO, WL, backend=backend, out_dir=str(a))
    sb = run_training(TOPO, WL, backend=backend, out_dir=str(b), fct="per-op")
    assert sb["iteration_time_s"] == sa["iteration_time_s"]
    assert "fct_mode" not in sa and sb["fct_mode"] == "per-op"
    assert not (b / "fct.csv").exists() and not (a / "fct_ops.csv").exists()
    fct = pd.read_csv(a / "fct.csv", keep_default_na=False)
    ops = pd.read_csv(b / "fct_ops.csv", keep_default_na=False)
    want = _by_op(fct)
    assert len(ops) == len(want) > 0 and ops["flows"].sum() == len(fct)
    for col in ("iteration", "op", "step", "tag", "groups", "flows", "bytes", "first_start_ns", "last_end_ns",
                "max_fct_ns"):
        assert ops[col].tolist() == want[col].tolist(), col
    assert ops["mean_fct_ns"].to_numpy() == pytest.approx(want["mean_fct_ns"].to_numpy(), rel=1e-12)
    # the other tables are unchanged
    for name in ("ops.csv", "traffic_matrix.csv", "message_sizes.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_off_writes_no_flow_file_and_same_result(tmp_path):
    s = run_training(TOPO, WL, backend="analytic", out_dir=str(tmp_path), fct="off")
    assert s["fct_mode"] == "off" and "fct.csv" not in s["outputs"] and "fct_ops.csv" not in s["outputs"]
    assert not (tmp_path / "fct.csv").exists() and not (tmp_path / "fct_ops.csv").exists()
    ref = run_training(TOPO, WL, backend="analytic")
    assert s["iteration_time_s"] == ref["iteration_time_s"]


def test_flows_per_op_and_errors(tmp_path):
    g = build_expression("leaf_spine:leaves=2,spines=1,hosts_per_leaf=2")
    flows = [FlowSpec("h0", "h2", 10_000, 0, tag="x"), FlowSpec("h1", "h3", 20_000, 100, tag="x"),
             FlowSpec("h0", "h3", 5_000, 0, tag="y")]
    s = run_flows(g, flows, backend="flow", out_dir=str(tmp_path), fct="per-op")
    with open(tmp_path / "fct_ops.csv", newline="") as fh:
        rows = {r["tag"]: r for r in csv.DictReader(fh)}
    assert s["fct_mode"] == "per-op" and rows["x"]["flows"] == "2" and rows["x"]["bytes"] == "30000"
    assert rows["y"]["flows"] == "1"
    with pytest.raises(InputError, match="--fct"):
        run_flows(g, flows, out_dir=str(tmp_path), fct="per-op", hpcc_fct=True)
    with pytest.raises(InputError, match="--fct"):
        run_training(TOPO, WL, backend="analytic", fct="per_flow")


def test_cli_rejects_a_bad_mode_in_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    res = subprocess.run([sys.executable, "-m", "netsim", "run", TOPO, WL, "--backend", "analytic", "--out",
                          str(tmp_path), "--fct", "op"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--fct" in res.stderr and "per-op" in res.stderr


def test_trace_says_where_the_flows_went(tmp_path):
    from netsim.analysis.trace import write_trace
    run_training(TOPO, WL, backend="analytic", out_dir=str(tmp_path), fct="per-op")
    info: dict = {}
    write_trace(str(tmp_path), info=info)
    assert "fct_ops.csv" in info["flows"] and info["events"] > 0


def test_per_op_rows_get_a_typed_parquet_copy_that_load_run_reads(tmp_path):
    pytest.importorskip("pyarrow")
    from netsim.analysis import load_run
    from netsim.runfiles import finalize_outputs
    g = build_expression("leaf_spine:leaves=2,spines=1,hosts_per_leaf=2")
    flows = [FlowSpec("h0", "h2", 10_000, 0, tag="x"), FlowSpec("h1", "h3", 20_000, 100, tag="x"),
             FlowSpec("h0", "h3", 5_000, 0, tag="y")]
    run_flows(g, flows, backend="flow", out_dir=str(tmp_path), fct="per-op")
    finalize_outputs(str(tmp_path), g, trace=False)
    assert (tmp_path / "fct_ops.parquet").exists()
    from_csv = pd.read_csv(tmp_path / "fct_ops.csv", keep_default_na=False)
    run = load_run(str(tmp_path))                                # the Parquet copy (not older than the CSV)
    assert len(run.fct) == 0 and run.fct_ops["bytes"].tolist() == from_csv["bytes"].tolist() == [30_000, 5_000]
    assert str(run.fct_ops["mean_fct_ns"].dtype) == "float64" and str(run.fct_ops["flows"].dtype) == "int64"
    assert run.fct_ops["tag"].tolist() == ["x", "y"]
    assert pd.read_parquet(tmp_path / "fct_ops.parquet")["flows"].tolist() == [2, 1]
