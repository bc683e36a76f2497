"""``1e12`` in a YAML file is a number (YAML 1.2), not the string PyYAML's YAML 1.1 makes of it.

Regression (issue #14): ``compute.utilization: 5e-1`` failed with "must be a
non-negative finite number (got '5e-1')", which reads as if 0.5 were wrong.
"""
import yaml

from netsim.runtime import run_training
from netsim.topology.builders import gpu_cluster
from netsim.yamlio import UniqueKeyLoader, load_yaml

WL = """model: {preset: bert-large, layers: 2, hidden: 256, heads: 4, seq_len: 128, vocab: 8192}
training: {global_batch: 16, micro_batch: 4}
parallelism: {dp: 4}
compute: {gpu: a100, utilization: UTIL}
"""


def test_exponent_without_dot_is_a_float():
    doc = load_yaml("a: 1e12\nb: -5E-1\nc: 1_000e3\nd: e12\ne: 1e\nf: '1e12'", "x.yaml")
    assert doc == {"a": 1e12, "b": -0.5, "c": 1e6, "d": "e12", "e": "1e", "f": "1e12"}
    assert yaml.safe_load("a: 1e12") == {"a": "1e12"}        # PyYAML alone: YAML 1.1's string
    assert yaml.load("x: 2e3", Loader=UniqueKeyLoader) == {"x": 2000.0}


def test_exponent_with_a_dot_and_no_sign_is_a_float():
    # YAML 1.2 core schema: 1.0e9 is a float; PyYAML (YAML 1.1) wants the sign (1.0e+9) and makes a string
    doc = load_yaml("a: 1.0e9\nb: -2.5E-3\nc: .5e1\nd: 1.0e+9\ne: 1.e2\nf: 1.0.e9\ng: .e1", "x.yaml")
    assert doc == {"a": 1e9, "b": -0.0025, "c": 5.0, "d": 1e9, "e": 100.0, "f": "1.0.e9", "g": ".e1"}
    assert yaml.safe_load("a: 1.0e9") == {"a": "1.0e9"}


def test_workload_field_and_workload_set_accept_exponent_form(tmp_path):
    times = []
    for util in ("5e-1", "0.5", "5.0e-1"):
        p = tmp_path / f"w{len(times)}.yaml"
        p.write_text(WL.replace("UTIL", util))
        times.append(run_training(gpu_cluster(4, 1), str(p), backend="analytic")["iteration_time_s"])
    p = tmp_path / "w.yaml"
    p.write_text(WL.replace("UTIL", "0.9"))
    over = run_training(gpu_cluster(4, 1), str(p), backend="analytic",
                        workload_overrides={"compute.utilization": "5e-1"})["iteration_time_s"]
    assert times[0] == times[1] == times[2] == over
