"""Anthony et al. 2024 (arXiv 2408.10197): message-size distribution per parallelism scheme for GPT.

Paper: the message-size distribution per collective is the key output; DP moves large buckets,
pipeline point-to-point messages are small, tensor-parallel collectives in between; sequence length
and ZeRO stage move the volume and the mix.
netsim: a GPT (h=1024, 8 layers) with t=2 p=2 d=2, Megatron's pipeline scatter/gather on, analytic
backend; sizes are the collective calls' sizes (what NCCL logs).
"""
import statistics
from collections import defaultdict

import pytest

from netsim.topology import gpu_cluster

from papers_sim import report, simulate


def job(seq_len=1024):
    return {"model": {"preset": "gpt-350m", "layers": 8, "seq_len": seq_len},
            "training": {"global_batch": 16, "micro_batch": 2},
            "parallelism": {"tp": 2, "pp": 2, "dp": 2, "scatter_gather": True}}


def sizes(r):
    out = defaultdict(list)
    for op in r.ex.iteration_ops[0]:
        if op.is_comm:
            out[op.kind].append(op.size_bytes)
    return out


@pytest.fixture(scope="module")
def graph():
    return gpu_cluster(2, 4, nic_kinds="roce", nic_rates_bps="100Gbps")


def test_dp_large_tp_middle_pp_small(graph):
    s = sizes(simulate(graph, job()))
    med = {k: statistics.median(v) for k, v in s.items()}
    print("\nkind,calls,median_bytes,min_bytes,max_bytes")
    for k in sorted(s):
        print(f"{k},{len(s[k])},{med[k]:.0f},{min(s[k])},{max(s[k])}")
    assert med["dp"] > med["tp"] > med["pp"]
    assert len(s["pp"]) > len(s["dp"])                  # many small p2p messages, few large buckets
    report("Anthony et al.", "median message size DP / TP / PP", "DP large, TP in between, PP small",
           f"{med['dp'] / 2**20:.1f} / {med['tp'] / 2**20:.2f} / {med['pp'] / 2**20:.2f} MiB")


def test_sequence_length_moves_tp_pp_not_dp(graph):
    a, b = sizes(simulate(graph, job(1024))), sizes(simulate(graph, job(2048)))
    for k in ("tp", "pp"):
        assert statistics.median(b[k]) == 2 * statistics.median(a[k])     # b·s·h·2 (÷ t)
    dp_a, dp_b = sum(a["dp"]), sum(b["dp"])
    assert dp_b - dp_a == 2 * 1024 * 1024 * 2       # only the position embeddings grow (s·h on each of t=2 ranks)
    report("Anthony et al.", "sequence 1024 -> 2048", "volume and mix move with sequence length",
           f"TP/PP messages x2, DP volume +{(dp_b - dp_a) / 2**20:.0f} MiB (position embeddings)")


def test_zero3_shifts_dp_mix(graph):
    z0 = sizes(simulate(graph, job()))
    z3 = sizes(simulate(graph, job(), zero_stage=3))
    assert len(z3["dp"]) > 5 * len(z0["dp"])                             # per-layer parameter gathers
    assert statistics.median(z3["dp"]) < statistics.median(z0["dp"])     # a layer, not a 25 MiB bucket
    assert z3["tp"] == z0["tp"] and z3["pp"] == z0["pp"]
    ratio = sum(z3["dp"]) / sum(z0["dp"])
    m = 16 // (2 * 2)
    assert ratio == pytest.approx(1 + 2 * m, rel=0.01)                  # RS + 2 AG per micro-batch
    report("Anthony et al.", "ZeRO-3 vs DDP DP calls / median size", "ZeRO stage changes volume and mix",
           f"{len(z3['dp'])} vs {len(z0['dp'])} calls, median {statistics.median(z3['dp']) / 2**20:.1f} vs "
           f"{statistics.median(z0['dp']) / 2**20:.1f} MiB, volume x{ratio:.1f} (m={m})")
