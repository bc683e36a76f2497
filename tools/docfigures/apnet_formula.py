"""The README's GPT-3B t2p2d8 row: APNet'24's iteration-time formula and its stage-aware variant (fast).

``gpt-3b-t2p2d8`` (full size) on ``leaf_spine_64gpu``, placed as ``netsim run``
places it; the bandwidths C_TP, C_PP, C_DP the formula needs are netsim's
effective bandwidths of the placement (:func:`netsim.runtime.apnet.effective_bandwidths`).
:func:`~netsim.runtime.apnet.apnet_iteration_time` is the paper's formula as
published (FLOPs split evenly over the GPUs), ``apnet_stage_aware_iteration_time``
the slowest stage × m variant. Closed forms: no simulation (the simulated
value of the row is :mod:`tools.docfigures.apnet_gpt3b_sim`).
"""
from __future__ import annotations

import os

from . import ROOT, Figure

SEED = 0                        # the builder's seed; the formula has no randomness
SLOW = False
DOC = "README.md"
TOPOLOGY = "topologies/leaf_spine_64gpu.yaml"
WORKLOAD = "workloads/gpt-3b-t2p2d8.yaml"
#: closed forms: a rerun gives the same values to rounding
TOLERANCE = {"paper_s": 1e-9, "stage_aware_s": 1e-9}

FIGURES = [
    Figure("formula", DOC, "| APNet'24 formula as published (FLOPs split evenly over GPUs) {paper_s:.3f} s; "
           "its stage-aware variant (slowest stage × m) {stage_aware_s:.3f} s |"),
]


def measure() -> dict:
    """The paper formula's and the stage-aware variant's T_iter, in seconds."""
    from netsim.runtime.job import make_builder
    from netsim.runtime.apnet import apnet_iteration_time, apnet_stage_aware_iteration_time, effective_bandwidths
    from netsim.topology import load_topology
    from netsim.workloads import load_workload, place
    from netsim.workloads.placement import resolve_partition
    g = load_topology(os.path.join(ROOT, TOPOLOGY))
    wl = load_workload(os.path.join(ROOT, WORKLOAD))
    pl = place(wl, g)
    wl = resolve_partition(wl, pl, g)
    builder = make_builder(wl, pl, SEED)
    bw = effective_bandwidths(g, pl)
    return {"paper_s": apnet_iteration_time(wl, builder, bw)["T_iter"],
            "stage_aware_s": apnet_stage_aware_iteration_time(wl, builder, bw)["T_iter"]}
