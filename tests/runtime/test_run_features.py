"""run_training end to end with MoE, ZeRO, sequence parallelism, algorithms and what-if flags."""
from collections import defaultdict

import pytest

from netsim.cli import main
from netsim.runtime import run_training

TOPO = "gpu_cluster:servers=2,gpus_per_server=4,nic_rates_bps=100Gbps"
GPT = {"name": "f", "model": {"preset": "gpt-1.5b", "layers": 4, "hidden": 128, "heads": 4, "seq_len": 64,
                              "vocab": 512},
       "training": {"global_batch": 8, "micro_batch": 2}, "parallelism": {"dp": 2, "tp": 2, "pp": 2}}
MOE = {"name": "m", "model": {"preset": "gpt-350m", "layers": 4, "hidden": 64, "heads": 4, "seq_len": 64,
                              "vocab": 256, "moe": {"experts": 8, "top_k": 2, "capacity_factor": None}},
       "training": {"global_batch": 16, "micro_batch": 2}, "parallelism": {"dp": 8, "ep": 4}}


def test_moe_run_alltoall_flows_and_changing_matrix():
    s = run_training(TOPO, MOE, backend="analytic", iterations=2, keep_records=True)
    assert s["breakdown_s"]["ep"] > 0
    assert sum(s["breakdown_s"].values()) == pytest.approx(s["iteration_time_s"], rel=1e-9)
    flows = [f for f in s["records"]["fct"] if f.group_kind == "ep"]
    assert flows and {f.collective for f in flows} == {"alltoall"}
    tm = defaultdict(lambda: defaultdict(int))
    for f in flows:
        tm[f.iteration][(f.src, f.dst)] += f.size_bytes
    assert tm[0] != tm[1]


@pytest.mark.parametrize("field,value", [("parallelism.zero_stage", 1), ("parallelism.zero_stage", 3),
                                         ("parallelism.sequence_parallel", True),
                                         ("collectives.dp.algorithm", "hierarchical"),
                                         ("collectives.tp.algorithm", "tree"),
                                         ("collectives.dp.channels", 2), ("collectives.tp.chunk_bytes", "8KiB")])
def test_variants_run_and_breakdown_sums(field, value):
    s = run_training(TOPO, GPT, backend="analytic", iterations=2, workload_overrides={field: value})
    assert s["iteration_time_s"] > 0
    assert sum(s["breakdown_s"].values()) == pytest.approx(s["iteration_time_s"], rel=1e-9)


def test_zero_stage_changes_dp_collectives():
    s0 = run_training(TOPO, GPT, backend="analytic")
    s1 = run_training(TOPO, GPT, backend="analytic", workload_overrides={"parallelism.zero_stage": 1})
    assert s0["collectives_per_iteration"]["dp"] * 2 == s1["collectives_per_iteration"]["dp"]
    assert s0["collective_bytes_per_iteration"]["dp"] * 2 == s1["collective_bytes_per_iteration"]["dp"]


def test_inject_delay_flag_adds_exposed_dp_time(tmp_path, capsys):
    import json

    import yaml
    wl = tmp_path / "w.yaml"
    wl.write_text(yaml.safe_dump(GPT))
    base = ["run", TOPO, str(wl), "--backend", "analytic", "--quiet"]
    assert main(base + ["--out", str(tmp_path / "a")]) == 0
    assert main(base + ["--out", str(tmp_path / "b"), "--inject-delay", "allreduce@dp=5ms"]) == 0
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    # the last bucket's delay cannot hide behind backward: at least one full delay shows up as dp time
    assert b["iteration_time_s"] - a["iteration_time_s"] >= 5e-3 * 0.999
    assert b["breakdown_s"]["dp"] - a["breakdown_s"]["dp"] >= 5e-3 * 0.999
    assert main(base + ["--out", str(tmp_path / "c"), "--inject-delay", "alltoall@ep=1ms"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
