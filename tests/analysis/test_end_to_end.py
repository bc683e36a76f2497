"""The analysis tools on real outputs of `netsim flows` and `netsim run` (small cases)."""
import json
import os
from collections import defaultdict

import pytest

from netsim.analysis import fct_table, load_run, pfc_pause_table, traffic_matrix_change, write_parquet
from netsim.analysis.report import SECTIONS, write_report
from netsim.analysis.trace import write_trace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_flows_run_incast(tmp_path):
    simulate = pytest.importorskip("netsim.simulate")
    topo = pytest.importorskip("netsim.topology")
    from netsim.flowfile import FlowSpec
    g = topo.load_topology("leaf_spine:leaves=1,spines=1,hosts_per_leaf=5")
    flows = [FlowSpec(f"h{i}", "h0", 200_000, 0) for i in range(1, 5)]
    # --cc none with a window larger than the flows: no rate control, so the 4-to-1 incast must
    # trigger PFC (DCQCN keeps PFC above Kmax, and the default one-BDP window bounds the queue)
    s = simulate.run_flows(g, flows, cc="none", params={"window_bytes": 1_000_000}, out_dir=str(tmp_path))
    run = load_run(tmp_path)
    assert len(run.fct) == 4 and (run.fct["slowdown"] >= 0.99).all()
    assert fct_table(run.fct, "size").loc["100KB-10MB", "flows"] == 4
    # PFC pause count from the trace equals the summary's counter
    pt = pfc_pause_table(run.pfc, run.end_ns)
    assert pt["pauses"].sum() == s["pfc_pauses"] > 0
    # pause time per port from the pause/resume events equals the backend's own counter (±1 ns rounding)
    mine = pt.groupby(pt["node"] + "->" + pt["port"])["pause_time_ns"].sum().to_dict()
    assert mine.keys() == s["pfc_pause_time_ns"].keys()
    assert all(abs(mine[k] - v) <= 2 * pt["pauses"].max() for k, v in s["pfc_pause_time_ns"].items())
    doc = json.load(open(write_trace(tmp_path, graph=g)))
    assert sum(1 for e in doc["traceEvents"] if e["ph"] == "b") == 4 * 2      # 4 flows x 2 links each
    assert write_parquet(tmp_path)
    assert load_run(tmp_path).fct.equals(run.fct)


def test_training_run_trace_and_report(tmp_path):
    runtime = pytest.importorskip("netsim.runtime")
    s = runtime.run_training(os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml"),
                             os.path.join(ROOT, "workloads", "gpt-1.5b-t2p2d2-small.yaml"),
                             backend="analytic", iterations=2, out_dir=str(tmp_path), progress=False)
    run = load_run(tmp_path)
    assert sorted(run.ops["rank"].unique()) == list(range(8))
    doc = json.load(open(write_trace(tmp_path)))
    dur = defaultdict(float)
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            dur[e["pid"]] += e["dur"] * 1000
    for rank, g in run.ops.groupby("rank"):
        assert dur[rank] == pytest.approx((g["end_ns"] - g["start_ns"]).sum(), rel=1e-9)
    ch = traffic_matrix_change(run)
    assert (ch["max_rel_diff"] == 0).all()                  # dense model: identical matrix every iteration
    html = open(write_report([tmp_path])).read()
    assert all(f'id="{k}"' in html for k, _ in SECTIONS)
    assert s["iteration_time_s"] > 0
