"""docs/reproducing-papers.md's NeuronaBox table: BERT-large iteration time vs delay injected per DP all-reduce.

The runs of ``tests/validation/test_papers_neuronabox.py`` (harness
``tests/validation/papers_sim.py``, analytic backend): BERT-large DP on 8 GPUs
(2 PCIe servers × 4 GPUs, one 100 Gb/s RoCE NIC per server), with DELAY
injected before every DP bucket all-reduce (``allreduce@dp=DELAY``), seed 0.
Iteration times in ms, the increase over the undelayed run divided by the
total injected delay (calls × DELAY), the number of calls, the calls' worth
of delay exposed at 2 ms, and the slope between the two largest delays per call.
"""
from __future__ import annotations

from . import Figure
from ._papers import harness

SEED = 0
SLOW = False                   # nine analytic runs: about 2 s of CPU
DOC = "docs/reproducing-papers.md"
DELAYS_MS = (0, 0.1, 0.5, 1, 2, 5, 10, 15, 20)   # the doc's columns
INDEX_2MS = DELAYS_MS.index(2)

FIGURES = [
    Figure("calls", DOC, "every DP bucket all-reduce ({calls:.0f} per iteration)"),
    Figure("iteration_row", DOC, "| iteration time (ms) | "
           + " | ".join(f"{{it_ms_{i}:.1f}}" for i in range(len(DELAYS_MS))) + " |"),
    Figure("ratio_row", DOC, "| increase ÷ injected total | — | "
           + " | ".join(f"{{ratio_{i}:.3f}}" if DELAYS_MS[i] <= 5 else f"{{ratio_{i}:.2f}}"
                        for i in range(1, len(DELAYS_MS))) + " |"),
    Figure("prose_2ms", DOC, f"+{{increase_2ms_ms:.0f}} ms on {{it_ms_0:.0f}} ms at 2 ms per call "
           f"({{exposed_calls_2ms:.0f}} of {{calls:.0f}} calls exposed)"),
    Figure("prose_slope", DOC, "adds {calls:.0f} ms (slope {slope_per_call:.2f} per call)"),
]


def measure() -> dict:
    """Iteration times (ms) and ratios for each delay of :data:`DELAYS_MS`."""
    from netsim.topology import gpu_cluster
    papers_sim = harness()
    g = gpu_cluster(2, 4, gpus_per_nic=4, nvswitch=False, nic_kinds="roce", nic_rates_bps="100Gbps",
                    pcie_rate_bps="256Gbps")
    out: dict = {}
    calls = None
    for i, d in enumerate(DELAYS_MS):
        r = papers_sim.simulate(g, papers_sim.workload_path("bert-large.yaml"), seed=SEED,
                                whatif={"inject_delay": [f"allreduce@dp={d}ms"]} if d else None)
        if calls is None:
            calls = sum(1 for op in r.ex.iteration_ops[0] if op.kind == "dp" and 0 in op.ranks)
        out[f"it_ms_{i}"] = r.iteration_time_s * 1e3
        if d:
            out[f"ratio_{i}"] = (out[f"it_ms_{i}"] - out["it_ms_0"]) / (calls * d)
    out["calls"] = calls
    out["increase_2ms_ms"] = out[f"it_ms_{INDEX_2MS}"] - out["it_ms_0"]
    out["exposed_calls_2ms"] = out["increase_2ms_ms"] / 2
    last, prev = len(DELAYS_MS) - 1, len(DELAYS_MS) - 2
    out["slope_per_call"] = ((out[f"it_ms_{last}"] - out[f"it_ms_{prev}"])
                             / (DELAYS_MS[last] - DELAYS_MS[prev]) / calls)
    return out
