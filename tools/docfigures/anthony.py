"""docs/reproducing-papers.md's Anthony et al. rows: message sizes per parallelism scheme.

The runs of ``tests/validation/test_papers_anthony.py`` (analytic backend,
seed 0): GPT (``gpt-350m`` preset, 8 layers) t2 p2 d2 with Megatron's pipeline
scatter/gather, global batch 16, micro-batch 2, on ``gpu_cluster`` 2 × 4 GPUs
with 100 Gb/s RoCE NICs. Sizes are the collective calls' sizes of iteration 0
(what NCCL logs): the median and count per kind; the TP/PP median ratio and DP
volume growth from sequence length 1024 to 2048; ZeRO-3 against DDP.
"""
from __future__ import annotations

import statistics
from collections import defaultdict

from . import Figure
from ._papers import harness

SEED = 0
SLOW = False                   # four analytic runs of an 8-GPU job: under a second
DOC = "docs/reproducing-papers.md"
MIB = 2 ** 20

FIGURES = [
    Figure("sizes", DOC, "| median {dp_median_mib:.1f} / {tp_median_mib:.2f} / {pp_median_mib:.2f} MiB "
           "(DP {dp_calls:.0f} calls, TP {tp_calls:.0f}, PP {pp_calls:.0f}) |"),
    Figure("seq_len", DOC, "| TP and PP messages ×{tp_seq_ratio:.0f}; DP volume +{dp_seq_growth_mib:.0f} MiB "
           "(position embeddings only) |"),
    Figure("zero3", DOC, "| ZeRO-3: {z3_dp_calls:.0f} vs {dp_calls:.0f} DP calls, median {z3_dp_median_mib:.1f} vs "
           "{dp_median_mib:.1f} MiB, DP volume ×{z3_volume_ratio:.1f} (= 1 + 2m, m = {micro_batches:.0f} "
           "micro-batches) |"),
]


def _job(seq_len: int) -> dict:
    return {"model": {"preset": "gpt-350m", "layers": 8, "seq_len": seq_len},
            "training": {"global_batch": 16, "micro_batch": 2},
            "parallelism": {"tp": 2, "pp": 2, "dp": 2, "scatter_gather": True}}


def _sizes(r) -> dict:
    out = defaultdict(list)
    for op in r.ex.iteration_ops[0]:
        if op.is_comm:
            out[op.kind].append(op.size_bytes)
    return out


def measure() -> dict:
    """Median sizes in MiB, call counts, ratios."""
    from netsim.topology import gpu_cluster
    sim = harness()
    g = gpu_cluster(2, 4, nic_kinds="roce", nic_rates_bps="100Gbps")
    base = sim.simulate(g, _job(1024), seed=SEED)
    s = _sizes(base)
    long_ = _sizes(sim.simulate(g, _job(2048), seed=SEED))
    z3 = _sizes(sim.simulate(g, _job(1024), zero_stage=3, seed=SEED))
    out = {f"{k}_median_mib": statistics.median(s[k]) / MIB for k in ("dp", "tp", "pp")}
    out.update({f"{k}_calls": len(s[k]) for k in ("dp", "tp", "pp")})
    tp_ratio, pp_ratio = (statistics.median(long_[k]) / statistics.median(s[k]) for k in ("tp", "pp"))
    if tp_ratio != pp_ratio:
        raise RuntimeError(f"anthony: TP ×{tp_ratio} and PP ×{pp_ratio} differ; the doc states one factor")
    out.update(tp_seq_ratio=tp_ratio, dp_seq_growth_mib=(sum(long_["dp"]) - sum(s["dp"])) / MIB,
               z3_dp_calls=len(z3["dp"]), z3_dp_median_mib=statistics.median(z3["dp"]) / MIB,
               z3_volume_ratio=sum(z3["dp"]) / sum(s["dp"]), micro_batches=base.workload.micro_batches)
    return out
