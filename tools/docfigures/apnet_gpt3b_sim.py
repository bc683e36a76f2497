"""The README's GPT-3B t2p2d8 row: the simulated iteration time, analytic backend (slow, ~15 s).

``netsim run topologies/leaf_spine_64gpu.yaml workloads/gpt-3b-t2p2d8.yaml
--backend analytic`` (full size, one iteration, seed 0): the iteration time
beside APNet'24's formula values (:mod:`tools.docfigures.apnet_formula`).
"""
from __future__ import annotations

from . import Figure
from ._run import netsim

SEED = 0
SLOW = True                     # about 15 s of CPU
DOC = "README.md"

FIGURES = [
    Figure("simulated", DOC, "(slowest stage × m) {stage_aware_s:.3f} s | {simulated_s:.3f} s (analytic) |"),
]


def measure() -> dict:
    """The simulated iteration time in seconds (and the stage-aware value the phrase joins)."""
    from . import apnet_formula
    out = netsim("run", apnet_formula.TOPOLOGY, apnet_formula.WORKLOAD, "--backend", "analytic",
                 "--seed", str(SEED))
    return {"simulated_s": float(out.summary["iteration_time_s"]),
            "stage_aware_s": apnet_formula.measure()["stage_aware_s"]}
