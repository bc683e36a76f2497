"""Trial 7: an outside user's inputs that no other test uses (hand-written files under data7/).

Every test states what a hand computation, a closed form or another backend
says and is a strict xfail on the commit the trial ran on: each is a defect
reported to the lead (code outside tests/trial/ is not this session's to
edit). When one is fixed its xfail turns into a failure, and the mark goes.
"""
from __future__ import annotations

import csv
import json
import os

import pytest

from tests.trial.trialcli import run_cli as _cli

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data7")
MTU, HEADER = 1500, 62
PAYLOAD = (MTU - HEADER) / MTU  # payload share of the wire rate


def _d(name: str) -> str:
    return os.path.join(DATA, name)


def _fct(out_dir) -> dict:
    """fct.csv of a flows run as {flow_id: fct_ns}."""
    with open(os.path.join(out_dir, "fct.csv")) as f:
        return {int(r["flow_id"]): int(r["fct_ns"]) for r in csv.DictReader(f)}


def _summary(out_dir) -> dict:
    with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)


def test_negative_seed_is_a_one_line_error(tmp_path, capsys):
    rc, err = _cli(["run", _d("star4.yaml"), _d("dp4.yaml"), "--backend", "analytic", "--seed", "-1",
                    "--variability", "jitter=lognormal", "--out", tmp_path, "--quiet"], capsys)
    assert rc == 2 and len(err) == 1 and "--seed" in err[0]


#: after the pause gate (netsim/backends/flow/pausegate.py) no head-of-line blocking is left; HPCC's f1 is
#: HPCC holds every link at eta = 0.95 of line rate (default preset) and carries a 42-byte INT header
#: in each 1,438-byte payload: its max-min shares are those rates times 0.95 * 1396 / 1438 = 0.922.
#: Measured after the fix: f1 1,241,047 ns on flow against 1,209,549 on packet; hand 1.207 ms.
UTILISATION = {"none": 1.0, "hpcc": 0.95 * (1438 - 42) / 1438}


@pytest.mark.parametrize("cc", ["none", "hpcc"])
def test_flow_lossless_matches_maxmin_without_pfc_pauses(tmp_path, capsys, cc):
    # mm.yaml: h0,h1 -- s1 -- s2 -- h2 (100G), h3 at 25G.  f0 h0->h3, f1 h1->h2 (10 MB each at 0),
    # f2 h1->h3 1 MB at 5 us.  Max-min: s2->h3 gives f0 = f2 = 12.5G; s1->s2 leaves f1 75G.
    # Packet backend (same files), f1 / f2: none 1,090,504 / 670,449 ns (no PFC pause), hpcc 1,209,549 / 697,733 ns.
    # Flow: none 2,339,823 / 1,338,439 ns, hpcc 2,605,096 / 1,468,880 ns.
    rc, _ = _cli(["flows", _d("mm.yaml"), _d("hol3.csv"), "--backend", "flow", "--cc", cc,
                  "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    assert rc == 0
    fct = _fct(tmp_path)
    f1_ns = 10e6 * 8 / (75e9 * PAYLOAD * UTILISATION[cc]) * 1e9
    f2_ns = 1e6 * 8 / (12.5e9 * PAYLOAD * UTILISATION[cc]) * 1e9
    assert fct[1] == pytest.approx(f1_ns, rel=0.10)
    assert fct[2] == pytest.approx(f2_ns, rel=0.10)


def test_memory_check_covers_every_gpu_of_a_stage(tmp_path, capsys):
    # dp4 of 5M fp32 params, no ZeRO: 16 B/param = 80,000,000 B on every rank; star4mem.yaml gives G3 16 MiB.
    # With the small GPU as G0 instead, the same run is refused (needs 76.3 MiB of 16.0 MiB).
    rc, err = _cli(["run", _d("star4mem.yaml"), _d("dp4.yaml"), "--backend", "analytic",
                    "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    assert rc == 2 and len(err) == 1 and "G3" in err[0]


def test_memory_of_an_fp32_run_uses_fp32_weights(tmp_path, capsys):
    # fp32 Adam, ZeRO-1 over dp = 4: weights 4 B + gradients 4 B + (m, v) 8 B / dp = 10 B/param -> 50 MB for 5M params.
    # Measured: weights 10,000,000 B (2 B/param), gradients 10,000,000 B, total 35,000,000 B; the run's ZeRO-1
    # reduce-scatter + all-gather move 40,000,000 B = 2 x 4 B/param x 5M.
    rc, _ = _cli(["run", _d("star4.yaml"), _d("dp4.yaml"), "--backend", "analytic", "--workload-set",
                  "parallelism.zero_stage=1", "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    assert rc == 0
    s = _summary(tmp_path)
    assert s["collective_bytes_per_iteration"]["dp"] == 2 * 4 * 5_000_000
    stage = s["memory"]["stages"][0]
    assert stage["weights_bytes"] == 4 * 5_000_000
    assert stage["total_bytes"] == pytest.approx(10 * 5_000_000)


def test_fp32_activations_take_twice_the_fp16_bytes(tmp_path, capsys):
    # mem.yaml: s=2048, b=2, h=1024, a=16, t=2, 2 layers per stage; Korthikanti's s*b*h*(10 + 24/t + 5as/(ht)) is
    # for 2-byte activations: 427,819,008 B per layer at fp16, so 855,638,016 B on stage 1 (one micro-batch in flight).
    act, tp = {}, {}
    for prec in ("fp16", "fp32"):
        out = tmp_path / prec
        rc, _ = _cli(["run", _d("star4.yaml"), _d("mem.yaml"), "--backend", "analytic", "--workload-set",
                      f"training.precision={prec}", "--out", out, "--quiet", "--no-trace"], capsys)
        assert rc == 0
        s = _summary(out)
        act[prec] = s["memory"]["stages"][1]["activation_bytes"]
        tp[prec] = s["collective_bytes_per_iteration"]["tp"]
    assert act["fp16"] == 855_638_016
    assert tp["fp32"] == 2 * tp["fp16"]
    assert act["fp32"] == 2 * act["fp16"]


def test_zero_does_not_shard_experts_held_by_one_rank(tmp_path, capsys):
    # moe.yaml: h=256, f=4h, E=4, ep=dp=4, tp=2, every layer MoE (2 layers): a rank holds 1 expert per layer of
    # 2*h*f/t + f/t + h = 262,912 params -> 525,824 expert params.  The run's DP all-reduce moves exactly the
    # dense gradients ((params - 525,824) * 2 B per group), so experts are not data-parallel.
    # ZeRO-1 optimizer (12 B/param): dense * 12 / 4 + experts * 12.  Measured: params * 12 / 4 = 2,862,336 B.
    rc, _ = _cli(["run", _d("star8.yaml"), _d("moe.yaml"), "--backend", "analytic", "--workload-set",
                  "parallelism.zero_stage=1", "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    assert rc == 0
    s = _summary(tmp_path)
    stage = s["memory"]["stages"][0]
    experts = 2 * (2 * 256 * 1024 // 2 + 1024 // 2 + 256)
    dense = stage["params"] - experts
    assert s["collective_bytes_per_iteration"]["dp"] == 2 * 2 * (2 * dense)   # 2 TP groups x (RS + AG) x 2 B
    assert stage["optimizer_bytes"] == pytest.approx(dense * 12 / 4 + experts * 12)


@pytest.mark.parametrize("kind, workload, extra", [("dp", "dp4.yaml", ["--workload-set", "parallelism.zero_stage=2"]),
                                                   ("pp", "mem.yaml", [])])
def test_an_algorithm_no_collective_can_run_is_refused(tmp_path, capsys, kind, workload, extra):
    rc, err = _cli(["run", _d("star4.yaml"), _d(workload), "--backend", "analytic", *extra, "--workload-set",
                    f"collectives.{kind}={{algorithm: tree}}", "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    if rc == 0:   # what ran instead
        with open(os.path.join(tmp_path, "ops.csv")) as f:
            ran = {r["algorithm"] for r in csv.DictReader(f) if r["kind"] == kind}
        assert "tree" in ran, f"collectives.{kind}.algorithm=tree accepted, ran {sorted(ran)}"
    assert rc == 2 and len(err) == 1 and f"collectives.{kind}" in err[0]
