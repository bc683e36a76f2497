"""Flow backend against packet backend, per-flow FCT: the agreement table of docs/flow-backend.md.

Scenarios of ``tests/validation/flow_scenarios.py`` (packet defaults: 100 Gb/s,
1 µs links, PFC on priority 3): a dumbbell of 4 × 2 MB, a 16-to-1 incast of
1 MB, and 16 × 2 MB permutations of seeds 1–4 (flows pooled). For each
congestion control — ``none``, ``dcqcn`` (default preset, ``hpcc``),
``dcqcn:paper`` (``--cc-param preset=paper``), ``cubic`` — the median and 95th
percentile of per-flow |flow − packet| / packet, the mean-FCT and
last-completion errors, the p99 FCT of each backend and the packet drops.
The README's validation row quotes the DCQCN rows of the first two scenarios.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "validation"))  # flow_scenarios

from . import Figure

SEED = 0                      # the backends' default seed (random_seed 0); permutations name their own
SLOW = True
DOC = "docs/flow-backend.md"
#: scenario key -> (label in the table, scenarios factory)
SCENARIOS = ("dumbbell", "incast", "perm")
LABELS = {"dumbbell": "dumbbell 4 x 2 MB", "incast": "incast 16-to-1 x 1 MB",
          "perm": "permutation 16 x 2 MB, seeds 1-4"}
CCS = {"none": "none", "dcqcn": "dcqcn", "paper": "dcqcn:paper", "cubic": "cubic"}


def _scenarios(key):
    from flow_scenarios import dumbbell_long, incast, permutation
    if key == "dumbbell":
        return [dumbbell_long(4, 2_000_000)]
    if key == "incast":
        return [incast(16, 1_000_000)]
    return [permutation(4, 2, 4, 2_000_000, seed=k) for k in range(1, 5)]


def _row(key, cc):
    p = f"{key}_{cc}_"
    return Figure(f"table_{key}_{cc}", DOC,
                  f"| {LABELS[key]} | {CCS[cc]} | {{{p}flows:.0f}} | {{{p}median:.1%}} | {{{p}p95:.1%}} "
                  f"| {{{p}mean:.1%}} | {{{p}last:.1%}} | {{{p}p99_flow_us:.0f}} / {{{p}p99_packet_us:.0f}} "
                  f"| {{{p}drops:.0f}} |")


FIGURES = [_row(k, c) for k in SCENARIOS for c in CCS] + [
    Figure("readme_dcqcn", "README.md",
           "median / p95 error {dumbbell_dcqcn_median:.1%} / {dumbbell_dcqcn_p95:.1%} and "
           "{incast_dcqcn_median:.1%} / {incast_dcqcn_p95:.1%} (`paper` preset: "
           "{dumbbell_paper_median:.1%} / {dumbbell_paper_p95:.1%} and {incast_paper_median:.1%} / "
           "{incast_paper_p95:.1%})"),
]


def measure() -> dict:
    """Every table cell, as fractions (errors), µs (p99) and counts."""
    from flow_scenarios import compare_fct, load_graph, p99_fct_ns, run_flows_on
    out = {}
    for key in SCENARIOS:
        for cc, label in CCS.items():
            name, _, preset = label.partition(":")
            ccp = {name: {"preset": preset}} if preset else None
            F, P, drops = [], [], 0
            for sc in _scenarios(key):
                g = load_graph(sc.topology)
                F += run_flows_on("flow", g, sc.flows, cc=name, cc_params=ccp, seed=SEED)[0]
                p, st, _ = run_flows_on("packet", g, sc.flows, cc=name, cc_params=ccp, seed=SEED)
                P += p
                drops += st.get("drops", 0)
            c = compare_fct(F, P)
            p = f"{key}_{cc}_"
            out.update({p + "flows": c["flows"], p + "median": c["median_rel_err"], p + "p95": c["p95_rel_err"],
                        p + "mean": c["mean_fct_rel_err"], p + "last": c["last_completion_rel_err"],
                        p + "p99_flow_us": p99_fct_ns(F) / 1000, p + "p99_packet_us": p99_fct_ns(P) / 1000,
                        p + "drops": drops})
    return out
