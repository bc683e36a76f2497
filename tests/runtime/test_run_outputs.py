"""run_training / netsim run: files, columns, summary keys, determinism, repeatability."""
import csv
import json
import os

import pytest

from netsim.cli import main
from netsim.records import FCT_COLUMNS
from netsim.runtime import run_training
from netsim.topology import load_topology

TOPO = "gpu_cluster:servers=2,gpus_per_server=4,nic_rates_bps=100Gbps"
WL = {"name": "tiny-gpt", "model": {"preset": "gpt-1.5b", "layers": 4, "hidden": 128, "heads": 4, "seq_len": 64,
                                    "vocab": 512},
      "training": {"global_batch": 8, "micro_batch": 2},
      "parallelism": {"dp": 2, "tp": 2, "pp": 2}}


def _read(path):
    with open(path) as fh:
        return list(csv.reader(fh))


def test_outputs_and_summary(tmp_path):
    s = run_training(TOPO, WL, backend="analytic", iterations=3, out_dir=str(tmp_path))
    for name in ("summary.json", "ops.csv", "fct.csv", "traffic_matrix.csv", "message_sizes.csv"):
        assert os.path.exists(tmp_path / name)
    assert _read(tmp_path / "ops.csv")[0] == ["rank", "iteration", "op", "kind", "group", "size_bytes", "start_ns",
                                              "end_ns", "algorithm", "protocol"]
    fct = _read(tmp_path / "fct.csv")
    assert tuple(fct[0]) == FCT_COLUMNS
    col = {c: i for i, c in enumerate(fct[0])}
    groups = set()
    for row in fct[1:]:
        assert row[col["iteration"]] in ("0", "1", "2") and row[col["op"]] and row[col["collective"]]
        assert int(row[col["step"]]) >= 0
        groups.add((row[col["group_kind"]], row[col["group"]]))
    # one meaning per column name: group is the instance (as in ops.csv), group_kind its kind
    assert {k for k, _ in groups} == {"tp", "pp", "dp"}
    assert all(g.startswith(k) and g[len(k):].isdigit() for k, g in groups)
    ops = _read(tmp_path / "ops.csv")
    assert {g for _, g in groups} <= {r[4] for r in ops[1:]}
    summ = json.loads((tmp_path / "summary.json").read_text())
    for key in ("iteration_times_s", "iteration_time_s", "breakdown_s", "apnet_iteration_time_s",
                "effective_bandwidth_bps", "network", "apnet_terms_s", "apnet_stage_aware_iteration_time_s",
                "apnet_stage_aware_terms_s"):
        assert key in summ
    assert set(summ["breakdown_s"]) == {"compute", "optimizer", "tp", "pp", "dp", "ep", "bubble", "other"}
    assert len(summ["iteration_times_s"]) == 3
    assert sum(summ["breakdown_s"].values()) == pytest.approx(summ["iteration_time_s"], rel=1e-9)
    for b, t in zip(summ["breakdown_iterations_s"], summ["iteration_times_s"]):
        assert sum(b.values()) == pytest.approx(t, rel=1e-9)
    assert set(summ["effective_bandwidth_bps"]) == {"C_TP", "C_PP", "C_DP"}
    ms = _read(tmp_path / "message_sizes.csv")
    assert ms[0] == ["group_kind", "collective", "size_bytes", "count"]
    # TP messages: 2bsh; PP: 2bsh; counts per iteration x 3 iterations
    bsh2 = 2 * 2 * 64 * 128
    rows = {(r[0], r[1], int(r[2])): int(r[3]) for r in ms[1:]}
    m, l, p = 2, 4, 2
    assert rows[("tp", "allreduce", bsh2)] == 3 * 6 * (l // p) * m * (2 * 2)   # per TP group, 4 TP groups
    assert rows[("pp", "send", bsh2)] == 3 * 2 * m * 4                         # 4 pipelines


def test_traffic_matrix_identical_every_iteration(tmp_path):
    run_training(TOPO, WL, backend="analytic", iterations=3, out_dir=str(tmp_path))
    by_it = {}
    for it, src, dst, b in _read(tmp_path / "traffic_matrix.csv")[1:]:
        by_it.setdefault(int(it), {})[(src, dst)] = int(b)
    assert len(by_it) == 3 and by_it[0] == by_it[1] == by_it[2] and by_it[0]
    assert all(src.split(".")[1].startswith("gpu") for src, _ in by_it[0])


def test_byte_identical_outputs(tmp_path):
    for d in ("a", "b"):
        run_training(load_topology(TOPO), WL, backend="analytic", iterations=2, out_dir=str(tmp_path / d), seed=3)
    for name in ("ops.csv", "fct.csv", "traffic_matrix.csv", "message_sizes.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    a.pop("wall_time_s"), b.pop("wall_time_s")
    assert a == b


def test_cli_prints_iteration_time(tmp_path, capsys):
    import yaml
    wl = tmp_path / "w.yaml"
    wl.write_text(yaml.safe_dump(WL))
    rc = main(["run", TOPO, str(wl), "--out", str(tmp_path / "o"), "--backend", "analytic", "--iterations", "2",
               "--workload-set", "parallelism.dp=1", "--workload-set", "training.global_batch=4"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "iteration time" in out and "breakdown:" in out and "APNet" in out
    summ = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summ["parallelism"]["dp"] == 1


def test_bad_iterations_exit_2(tmp_path, capsys):
    import yaml
    wl = tmp_path / "w.yaml"
    wl.write_text(yaml.safe_dump(WL))
    assert main(["run", TOPO, str(wl), "--out", str(tmp_path / "o"), "--backend", "analytic",
                 "--iterations", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
