"""Bad workload files: exit status 2 and one clear line (through the real CLI)."""
import pytest
import yaml

from netsim.cli import main
from netsim.errors import WorkloadError
from netsim.workloads import load_workload

TOPO = "gpu_cluster:servers=2,gpus_per_server=4"
GOOD = {"name": "t", "model": {"preset": "gpt-1.5b", "layers": 4, "hidden": 64, "heads": 4, "seq_len": 16,
                               "vocab": 100},
        "training": {"global_batch": 8, "micro_batch": 2},
        "parallelism": {"dp": 2, "tp": 2, "pp": 2}}


def _with(path, value):
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    cur = doc
    keys = path.split(".")
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    cur[keys[-1]] = value
    return doc


CASES = [
    ("unknown key", _with("parallelism.schedul", "1f1b"), ["unknown key", "'schedul'", "did you mean schedule"]),
    ("unknown top key", _with("trainig", {}), ["unknown key", "did you mean training"]),
    ("gpus placed", _with("placement.gpus", ["s0.gpu0", "s0.gpu1"]), ["dp·tp·pp = 2·2·2 = 8", "2 GPUs are placed"]),
    ("layers vs pp", _with("parallelism.pp", 3), ["layers (4) not divisible by pp"]),
    ("batch", _with("training.global_batch", 10), ["not divisible by micro_batch × dp"]),
    ("algorithm", _with("collectives.dp", {"algorithm": "butterfly"}), ["collectives.dp.algorithm", "butterfly",
                                                                        "ring, tree, halving_doubling, hierarchical"]),
    ("preset", _with("model.preset", "gpt-3bb"), ["unknown model preset", "did you mean gpt-3b"]),
    ("gpu", _with("compute.gpu", "a101"), ["unknown GPU preset", "did you mean a100"]),
    ("precision", _with("training.precision", "fp8"), ["training.precision", "fp16, bf16, fp32"]),
    ("schedule", _with("parallelism.schedule", "1f2b"), ["did you mean 1f1b"]),
    ("bf16 on v100", _with("training.precision", "bf16"), ["no bf16 peak"]),
    ("tp heads", _with("parallelism.tp", 3), ["not divisible by tp"]),
    ("negative dp", _with("parallelism.dp", 0), ["parallelism.dp", "integer >= 1"]),
    ("partition", _with("parallelism.partition", [1, 2]), ["sum to 3, model has 4 layers"]),
    ("placement", _with("placement.order", "megatorn"), ["unknown placement order", "did you mean megatron"]),
    ("too many gpus", _with("parallelism.dp", 4), ["needs dp·tp·pp = 16 GPUs but the topology has 8"]),
    ("unknown gpu name", _with("placement.gpus", [f"s{i // 4}.gpu{i % 4}" for i in range(7)] + ["s9.gpu0"]),
     ["no such GPU", "s9.gpu0"]),
    ("bad size", _with("parallelism.bucket_bytes", "25 MiBs"), ["bad size"]),
    # ffn_hidden 0 used to mean 4·hidden silently
    ("ffn_hidden 0", _with("model.ffn_hidden", 0), ["model.ffn_hidden", "must be > 0", "omit it for 4·hidden"]),
    ("memory accounting vs fp32", _with("memory", {"accounting": "zero_mixed_precision"}) | {
        "training": {"global_batch": 8, "micro_batch": 2, "precision": "fp32"}},
     ["memory.accounting", "zero_mixed_precision", "fp32_adam"]),
    ("tree on pipeline sends", _with("collectives.pp", {"algorithm": "tree"}),
     ["collectives.pp.algorithm", "tree", "they run sendrecv"]),
    # op times past one day would reach the int64 ns columns of ops.parquet (1e22 ns read as -2^63)
    ("optimizer beyond a day", _with("compute.optimizer", "86401s"), ["compute.optimizer", "duration out of range"]),
    ("compute beyond a day", _with("compute", {"peak_flops": 1.0, "utilization": 0.5}),
     ["layer 'layer0'", "at most one day per op"]),
    ("duplicate layer name", {**GOOD, "model": {"layer_list": [{"name": "a", "params": 1, "fwd_flops": 1},
                                                               {"name": "a", "params": 1, "fwd_flops": 1}]},
                              "parallelism": {"dp": 8}},
     ["model.layer_list[1].name", "duplicate layer name", "'a'"]),
    ("moe beside a layer list", {**GOOD, "model": {"layer_list": [{"name": "a", "params": 1, "fwd_flops": 1}],
                                                   "moe": {"experts": 2}}, "parallelism": {"dp": 8}},
     ["model.moe", "a layer_list model takes no", "only name beside layer_list"]),
    ("hidden beside a layer list", {**GOOD, "model": {"name": "x", "hidden": 64,
                                                      "layer_list": [{"name": "a", "params": 1, "fwd_flops": 1}]},
                                    "parallelism": {"dp": 8}},
     ["model.hidden", "a layer_list model takes no", "64"]),
]


@pytest.mark.parametrize("label,doc,needles", CASES, ids=[c[0] for c in CASES])
def test_bad_workload_exits_2_with_one_line(tmp_path, capsys, label, doc, needles):
    wl = tmp_path / "bad.yaml"
    wl.write_text(yaml.safe_dump(doc, sort_keys=False))
    rc = main(["run", TOPO, str(wl), "--out", str(tmp_path / "out"), "--backend", "analytic", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "bad.yaml" in err
    for n in needles:
        assert n in err, (n, err)


def test_error_names_the_yaml_line(tmp_path):
    wl = tmp_path / "w.yaml"
    wl.write_text("model: gpt-1.5b\ntraining:\n  global_batch: 8\n  micro_bach: 2\n")
    with pytest.raises(WorkloadError) as exc:
        load_workload(str(wl))
    assert "line 4, field training.micro_bach" in str(exc.value)
    assert "did you mean micro_batch" in str(exc.value)


def test_workload_set_overrides_and_validates():
    w = load_workload(GOOD, overrides=[("parallelism.dp", "1"), ("training.global_batch", "4")])
    assert w.dp == 1 and w.micro_batches == 2
    with pytest.raises(WorkloadError, match="unknown key"):
        load_workload(GOOD, overrides={"parallelism.dpp": 1})


def test_missing_file(capsys):
    assert main(["run", TOPO, "/nonexistent/w.yaml", "--out", "/tmp/x", "--backend", "analytic"]) == 2
    assert "workload file not found" in capsys.readouterr().err


def test_duplicate_keys_in_a_workload_file_are_an_error(tmp_path):
    # YAML keeps the last of two equal keys: global_batch 8 then 16 used to run silently with 16
    import pytest as _pytest
    from netsim.errors import InputError
    from netsim.workloads import load_workload
    p = tmp_path / "dup.yaml"
    p.write_text("name: x\nmodel: {preset: gpt-350m, layers: 2}\n"
                 "training: {global_batch: 8, global_batch: 16, micro_batch: 1}\nparallelism: {dp: 8}\n")
    with _pytest.raises(InputError, match=r"dup\.yaml: line 3: duplicate key \(got 'global_batch'\)"):
        load_workload(str(p))
