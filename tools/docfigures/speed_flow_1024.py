"""docs/flow-backend.md's ``flow_gpt_1024gpu`` row: one 1,024-GPU GPT-3B step on the flow backend (slow, ~40–90 s of CPU).

``netsim bench flow_gpt_1024gpu``: GPT-3B (``workloads/gpt-3b-t2p2d8.yaml``,
full size) with t=8 p=4 d=32 on ``gpu_cluster:servers=128,gpus_per_server=8``,
seed 0. Values: process CPU seconds (rechecked within 400 %: CPU time moves
with the load of a shared machine), flows, max-min recomputations and the
iteration time (deterministic, 1 %). Left out: wall seconds and peak RSS (the
RSS of a process that ran other scripts first says nothing about this step);
the doc keeps their history dated.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = True                    # 3.2 M flows
DOC = "docs/flow-backend.md"
TOLERANCE = {"cpu_s": 4.0}

FIGURES = [
    Figure("row", DOC, "128 × 8 GPUs, leaf-spine | {cpu_s:.1f} s of CPU, {flows:,.0f} flows, {recomputations:,.0f} "
           "recomputations, iteration {iteration_s:.12f} s (by `tools/docfigures/speed_flow_1024.py`). "
           "Dated wall-clock history:"),
]


def measure() -> dict:
    """CPU seconds, flows, recomputations and iteration time (s) of the step."""
    from netsim.bench.flowgpt import gpt_step
    r = gpt_step(128, tp=8, pp=4, dp=32, seed=SEED)
    return {"cpu_s": r["cpu_s"], "flows": r["flows"], "recomputations": r["recomputations"],
            "iteration_s": r["iteration_time_s"]}
