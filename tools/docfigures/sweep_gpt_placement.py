"""The GPT placement sweep example of docs/sweep.md: the (t, p, d) = (4, 2, 1) points.

Runs, with the exact command lines ``netsim sweep`` gives them
(:func:`netsim.sweep.expand` of ``workloads/sweeps/gpt_placement_tpd.yaml``,
packet backend, ``--cc none``, seed 0), the four points the doc quotes:
(4, 2, 1) under the three placement orders with 2 GPUs per server, and
megatron order with 8 GPUs per server (one server); iteration times in ms.
"""
from __future__ import annotations

import os

from . import ROOT, Figure
from ._run import netsim

SEED = 0
SLOW = True
DOC = "docs/sweep.md"
SWEEP = "workloads/sweeps/gpt_placement_tpd.yaml"
#: (gpus per server, placement order) of the quoted points, all at (t, p, d) = (4, 2, 1)
POINTS = {"s2_megatron": (2, "megatron"), "s2_dp_first": (2, "dp_first"), "s2_pp_first": (2, "pp_first"),
          "s8_megatron": (8, "megatron")}

FIGURES = [
    Figure("tpd421", DOC, "(t,p,d) = (4,2,1) takes {s2_megatron_ms:.2f} ms under megatron/dp_first order and "
           "{s2_pp_first_ms:.2f} ms under pp_first (TP across servers), vs {s8_megatron_ms:.2f} ms inside one "
           "server"),
]


def measure() -> dict:
    """Iteration time (ms) of each quoted point; megatron and dp_first must agree to be quoted together."""
    from netsim.sweep import expand, load_sweep
    want = {v: k for k, v in POINTS.items()}
    out = {}
    for p in expand(load_sweep(os.path.join(ROOT, SWEEP))):
        a = p.axes
        if (a["workload.parallelism.tp"], a["workload.parallelism.pp"], a["workload.parallelism.dp"]) != (4, 2, 1):
            continue
        key = want.get((a["topology.gpus_per_server"], a["workload.placement.order"]))
        if key:
            out[f"{key}_ms"] = netsim(*p.argv).summary["iteration_time_s"] * 1e3
    return out
