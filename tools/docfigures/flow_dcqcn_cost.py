"""docs/flow-backend.md's cost of fluid DCQCN in a training step (slow, ~1–4 min).

GPT-3B (``workloads/gpt-3b-t2p2d8.yaml``, full size) on the flow backend,
seed 0, ``--cc none`` and ``--cc dcqcn`` (default preset): t=2 p=2 d=8 on 32
GPUs (``gpu_cluster:servers=4``) and t=8 p=4 d=8 with global batch 128 on 256
GPUs (``gpu_cluster:servers=32``). Values: iteration times, flows, the fluid
DCQCN model's evaluations (``dcqcn_ticks``) and CNPs, and the ratio of the
two wall times (each step's dcqcn run against its none run, measured back to
back). The deterministic values are rechecked at 1 %; the wall-time ratios
move with the machine's load and are rechecked only within 100 %
(:data:`TOLERANCE`).
"""
from __future__ import annotations

import os
import time

from . import ROOT, Figure

SEED = 0
SLOW = True                    # four full-size steps, 716,544 flows each at 256 GPUs
DOC = "docs/flow-backend.md"
TOLERANCE = {"wall_ratio32": 1.0, "wall_ratio256": 1.0}
CASES = {"32": ("gpu_cluster:servers=4,gpus_per_server=8", {}),
         "256": ("gpu_cluster:servers=32,gpus_per_server=8",
                 {"parallelism.tp": 8, "parallelism.pp": 4, "parallelism.dp": 8, "training.global_batch": 128})}

FIGURES = [
    Figure("cost", DOC, "GPT-3B t=2 p=2 d=8 on 32 GPUs, full size, `--cc dcqcn`: {wall_ratio32:.1f}× the wall time "
           "of `none` ({evals32:,.0f} evaluations, {cnps32:,.0f} CNPs), iteration {iter32_dcqcn_s:.6f} s against "
           "{iter32_none_s:.6f} s. GPT-3B t=8 p=4 d=8 on 256 GPUs (global batch 128, {flows256:,.0f} flows): "
           "{wall_ratio256:.1f}× ({evals256:,.0f} evaluations, {cnps256:,.0f} CNPs), iteration "
           "{iter256_dcqcn_s:.6f} s against {iter256_none_s:.6f} s"),
]


def measure() -> dict:
    """Iteration times (s), flows, DCQCN evaluations and CNPs, wall seconds."""
    from netsim.runtime import run_training
    wl = os.path.join(ROOT, "workloads", "gpt-3b-t2p2d8.yaml")
    out = {}
    for gpus, (topo, over) in CASES.items():
        wall = {}
        for cc in ("none", "dcqcn"):
            t0 = time.perf_counter()
            s = run_training(topo, wl, backend="flow", cc=cc, seed=SEED, progress=False, workload_overrides=over)
            wall[cc] = time.perf_counter() - t0
            out[f"iter{gpus}_{cc}_s"] = s["iteration_time_s"]
            if cc == "dcqcn":
                out[f"evals{gpus}"] = s["network"]["dcqcn_ticks"]
                out[f"cnps{gpus}"] = s["network"]["dcqcn_cnps"]
                out[f"flows{gpus}"] = s["flows"]
        out[f"wall_ratio{gpus}"] = wall["dcqcn"] / wall["none"]
    return out
