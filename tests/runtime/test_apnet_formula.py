"""APNet'24's iteration-time formula, checked against a hand computation from the paper's equations.

The paper (Li et al., APNet'24) for GPT under PTD parallelism, fp16 (2 bytes a value):

    T_iter   = T_comp + T_TP + T_PP + T_DP + T_bubble
    T_comp   = m · T_mb,   T_mb = FLOPs(one micro-batch of the whole model) / (p·t) / (peak·μ)
    T_TP     = m · (l/p) · 6 · 2bsh · 2(t−1) / (t · C_TP)
    T_PP     = m · 2 · 2bsh / C_PP
    T_DP     = (2N / (p·t)) · 2(d−1) / (d · C_DP)
    T_bubble = (p−1) · (T_mb + T_PP/m + T_TP/m)

FLOPs of one micro-batch with full recomputation (Narayanan et al., SC'21):
96·b·s·l·h²·(1 + s/(6h) + V/(16·l·h)) — forward, backward and recomputed forward of every
layer, and the logits' forward and backward. N for tied embeddings: l·(12h² + 13h) + (V + s)·h.
Bandwidths are in bit/s, so bytes are × 8.
"""
import os
import re

import pytest

from netsim.runtime.apnet import apnet_iteration_time, apnet_stage_aware_iteration_time, effective_bandwidths
from netsim.runtime.job import make_builder
from netsim.topology import load_topology
from netsim.workloads import load_workload, place
from netsim.workloads.placement import resolve_partition
from tests.conftest import ROOT, TOPOLOGIES, WORKLOADS

GPT_CONFIGS = ["gpt-3b-t2p2d8", "gpt-1.5b-t2p2d2", "gpt-1.5b-t4p2d4", "gpt-3b-t4p2d4", "gpt-3b-t1p4d8"]
#: chosen so that every term matters; bit/s
BANDWIDTHS = {"C_TP": 1.7e12, "C_PP": 9.0e10, "C_DP": 2.3e10}


def _setup(name, topology="leaf_spine_64gpu.yaml"):
    g = load_topology(os.path.join(TOPOLOGIES, topology))
    wl = load_workload(os.path.join(WORKLOADS, name + ".yaml"))
    pl = place(wl, g)
    wl = resolve_partition(wl, pl, g)
    return g, wl, pl, make_builder(wl, pl, 0)


def paper_formula_by_hand(wl, c_tp, c_pp, c_dp) -> float:
    """T_iter from the paper's equations and the model's shape alone (no netsim code)."""
    md = wl.model
    assert md.ffn_hidden in (0, 4 * md.hidden) and md.tied_embeddings and wl.recompute
    l, h, s, v = md.layers, md.hidden, md.seq_len, md.vocab
    m, b, p, t, d = wl.micro_batches, wl.micro_batch, wl.pp, wl.tp, wl.dp
    flops_mb = 96 * b * s * l * h ** 2 * (1 + s / (6 * h) + v / (16 * l * h))
    t_mb = flops_mb / (p * t) / (wl.peak_flops * wl.utilization)
    act_bits = 2 * b * s * h * 8
    n = l * (12 * h * h + 13 * h) + (v + s) * h
    t_tp = m * (l / p) * 6 * act_bits * 2 * (t - 1) / (t * c_tp) if t > 1 else 0.0
    t_pp = m * 2 * act_bits / c_pp if p > 1 else 0.0
    t_dp = (2 * n * 8 / (p * t)) * 2 * (d - 1) / (d * c_dp) if d > 1 else 0.0
    return m * t_mb + t_tp + t_pp + t_dp + (p - 1) * (t_mb + t_pp / m + t_tp / m)


@pytest.mark.parametrize("name", GPT_CONFIGS)
def test_paper_formula_equals_hand_computation(name):
    _, wl, _, builder = _setup(name)
    got = apnet_iteration_time(wl, builder, BANDWIDTHS)
    want = paper_formula_by_hand(wl, BANDWIDTHS["C_TP"], BANDWIDTHS["C_PP"], BANDWIDTHS["C_DP"])
    assert got["T_iter"] == pytest.approx(want, rel=1e-9)
    assert got["T_iter"] == pytest.approx(sum(v for k, v in got.items() if k != "T_iter"), rel=1e-12)


@pytest.mark.parametrize("name", GPT_CONFIGS)
def test_stage_aware_variant_is_above_the_paper_formula(name):
    """Uneven stages (logits on the last one) make the slowest stage set the pace: 2-8 % above the paper."""
    g, wl, pl, builder = _setup(name)
    bw = effective_bandwidths(g, pl)
    paper = apnet_iteration_time(wl, builder, bw)["T_iter"]
    staged = apnet_stage_aware_iteration_time(wl, builder, bw)["T_iter"]
    assert paper == pytest.approx(paper_formula_by_hand(wl, bw["C_TP"] or 1, bw["C_PP"] or 1, bw["C_DP"] or 1),
                                  rel=1e-9)
    assert 1.02 * paper < staged < 1.08 * paper


def _readme_row():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        row = next(line for line in f if line.startswith("| GPT-3B t2p2d8 iteration, full size"))
    nums = [float(x) for x in re.findall(r"(\d+\.\d+) s\b", row)]
    assert "as published" in row and "stage-aware" in row, row
    return nums


def test_readme_validation_row_matches_fresh_formula_values():
    """README: paper formula and stage-aware variant for GPT-3B t2p2d8 on leaf_spine_64gpu, ±0.5 ms (3 decimals)."""
    paper_s, staged_s, _ = _readme_row()
    g, wl, pl, builder = _setup("gpt-3b-t2p2d8")
    bw = effective_bandwidths(g, pl)
    assert paper_s == pytest.approx(apnet_iteration_time(wl, builder, bw)["T_iter"], abs=5e-4)
    assert staged_s == pytest.approx(apnet_stage_aware_iteration_time(wl, builder, bw)["T_iter"], abs=5e-4)


def _run_md_example() -> list[str]:
    """The three output lines of docs/run.md's `netsim run` example."""
    with open(os.path.join(ROOT, "docs", "run.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("$ netsim run topologies/leaf_spine_64gpu.yaml"))
    return lines[i + 1:i + 4]


def test_run_md_example_formula_values_match_fresh_computation():
    """docs/run.md's example prints both formula values (3 decimals of ms)."""
    apnet_line = _run_md_example()[2]
    paper_ms, staged_ms = (float(x) for x in re.findall(r"(\d+\.\d+) ms", apnet_line))
    g, wl, pl, builder = _setup("gpt-3b-t2p2d8")
    bw = effective_bandwidths(g, pl)
    assert paper_ms == pytest.approx(apnet_iteration_time(wl, builder, bw)["T_iter"] * 1e3, abs=5e-4)
    assert staged_ms == pytest.approx(apnet_stage_aware_iteration_time(wl, builder, bw)["T_iter"] * 1e3, abs=5e-4)


@pytest.mark.slow
def test_readme_and_run_md_simulated_values():
    """README's simulated (analytic backend) GPT-3B t2p2d8 iteration, ±0.5 ms, and docs/run.md's example
    output lines exactly (about 15 s of CPU)."""
    from netsim.cli.run import format_result
    from netsim.runtime import run_training
    *_, simulated_s = _readme_row()
    s = run_training(os.path.join(TOPOLOGIES, "leaf_spine_64gpu.yaml"), os.path.join(WORKLOADS, "gpt-3b-t2p2d8.yaml"),
                     backend="analytic", topology_name="topologies/leaf_spine_64gpu.yaml")
    assert simulated_s == pytest.approx(s["iteration_time_s"], abs=5e-4)
    assert format_result(s).splitlines() == _run_md_example()
