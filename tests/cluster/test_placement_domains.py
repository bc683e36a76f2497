"""Placement policies on a hand-written topology without ``server:``: servers are its scale-up domains.

Regression (trial 2): ``spread`` took two GPUs of one server (as ``packed``) and
``rail_aligned`` failed with "not enough free GPUs ... 8 are left" on a 2 x 4-GPU
hand-written fabric whose ``topo show`` lists two scale-up domains.
"""
import json
import os

import pytest

from netsim.cli import main

DATA = os.path.join(os.path.dirname(__file__), "data")


@pytest.mark.parametrize("policy,expect", [("spread", ["srv0/gpu0", "srv1/gpu0"]),
                                           ("packed", ["srv0/gpu0", "srv0/gpu1"]),
                                           ("rail_aligned", ["srv0/gpu0", "srv0/gpu1"])])
def test_policies_use_scale_up_domains(tmp_path, policy, expect):
    cl = tmp_path / "cl.yaml"
    cl.write_text(f"jobs:\n  - {{name: c, workload: {os.path.join(DATA, 'dp2.yaml')}, placement: {policy}}}\n")
    out = tmp_path / "o"
    assert main(["run", os.path.join(DATA, "hand8.yaml"), str(cl), "--backend", "analytic", "--no-alone",
                 "--out", str(out), "--quiet", "--no-trace"]) == 0
    jobs = json.loads((out / "summary.json").read_text())["jobs"]
    assert jobs["c"]["gpus"] == expect


def test_jobs_draw_independently_and_the_first_as_netsim_run(tmp_path):
    """Regression (trial 2): two jobs with the same variability drew identical iteration times."""
    from netsim.runtime import run_training
    wl = os.path.join(DATA, "dp2_jitter.yaml")
    cl = tmp_path / "cl.yaml"
    cl.write_text(f"jobs:\n  - {{name: a, workload: {wl}, placement: [srv0/gpu0, srv0/gpu1], iterations: 3}}\n"
                  f"  - {{name: b, workload: {wl}, placement: [srv1/gpu0, srv1/gpu1], iterations: 3}}\n")
    out = tmp_path / "o"
    topo = os.path.join(DATA, "hand8.yaml")
    assert main(["run", topo, str(cl), "--backend", "analytic", "--seed", "7", "--out", str(out), "--quiet",
                 "--no-trace"]) == 0
    jobs = json.loads((out / "summary.json").read_text())["jobs"]
    assert jobs["a"]["iteration_times_s"] != jobs["b"]["iteration_times_s"]
    alone = run_training(topo, wl, backend="analytic", seed=7, iterations=3,
                         workload_overrides={"placement.gpus": ["srv0/gpu0", "srv0/gpu1"]})
    assert jobs["a"]["iteration_times_s"] == alone["iteration_times_s"]    # no shared link: job a as alone
