"""MoE / ZeRO / SP op graphs: counts and bytes per iteration equal the formulas; runs complete."""
import collections

import pytest

from netsim.backends.base import TraceSinks, create_backend
from netsim.records import ListSink
from netsim.runtime.executor import Executor
from netsim.topology import gpu_cluster
from netsim.workloads import OpGraphBuilder, load_workload, place
from netsim.workloads.extended import ExtendedBuilder
from netsim.workloads.moe import MoEConfig, nonuniformity_from_flows

H, S, B = 256, 128, 2


def workload(dp, tp, pp, gb, recompute):
    return load_workload({"model": {"preset": "gpt-350m", "layers": 4, "hidden": H, "heads": 4, "seq_len": S,
                                    "vocab": 4096},
                          "training": {"global_batch": gb, "micro_batch": B, "recompute": recompute},
                          "parallelism": {"dp": dp, "tp": tp, "pp": pp}})


def run(wl, iterations=1, **kw):
    g = gpu_cluster(4, 4)
    pl = place(wl, g)
    b = ExtendedBuilder(wl, pl, seed=kw.pop("seed", 0), **kw)
    fct = ListSink()
    be = create_backend("analytic", g, sinks=TraceSinks(fct=fct))
    ex = Executor(be, b, pl.gpu_of)
    ex.run(iterations)
    ex.check_complete()
    return ex, fct.rows, b


def comm(ops):
    c, by = collections.Counter(), collections.Counter()
    for op in ops:
        if op.is_comm:
            c[(op.kind, op.collective)] += 1
            by[(op.kind, op.collective)] += op.size_bytes
    return c, by


def test_dense_graph_unchanged():
    wl = workload(4, 2, 2, 32, True)
    pl = place(wl, gpu_cluster(4, 4))
    a = OpGraphBuilder(wl, pl).build(0)
    b = ExtendedBuilder(wl, pl).build(0)
    assert [(o.name, o.kind, o.ranks, o.size_bytes, o.duration_ps) for o in a] == \
           [(o.name, o.kind, o.ranks, o.size_bytes, o.duration_ps) for o in b]


@pytest.mark.parametrize("dp, tp, pp, ep, recompute", [(8, 1, 1, 8, False), (4, 2, 2, 4, True), (4, 2, 2, 2, True)])
def test_moe_alltoall_counts_and_bytes(dp, tp, pp, ep, recompute):
    gb = 32
    wl = workload(dp, tp, pp, gb, recompute)
    ex, flows, _ = run(wl, moe=MoEConfig(8, 2, ep))
    m = wl.micro_batches
    moe_layers = 2                                  # layers 1 and 3 of 4 (every 2nd)
    per = 6 if recompute else 4                     # dispatch+combine, fwd (+recompute) and bwd
    groups_per_layer = tp * (dp // ep)              # EP groups in the stage holding the layer
    c, by = comm(ex.iteration_ops[0])
    assert c[("ep", "alltoall")] == moe_layers * m * per * groups_per_layer
    # each all-to-all: tokens·top_k·h·2 bytes in total across the group (dropless) = per rank b·s·k·h·2
    assert by[("ep", "alltoall")] == c[("ep", "alltoall")] * B * S * 2 * H * 2
    ep_flows = sum(r.size_bytes for r in flows if r.group == "ep")
    assert 0 < ep_flows < by[("ep", "alltoall")] * ep   # the diagonal stays local


def test_moe_nonuniformity_from_simulated_flows():
    wl = workload(8, 1, 1, 16, False)
    ex, flows, _ = run(wl, moe=MoEConfig(8, 2, 8))
    by_op = collections.defaultdict(list)
    for r in flows:
        if r.group == "ep":
            by_op[r.op].append((r.src, r.dst, r.size_bytes))
    # dispatch (and its gradient, combine_grad) carry the skew to the receivers; a combine returns
    # each rank its own tokens, so its receive side is uniform (the skew is on its send side)
    skewed = [nonuniformity_from_flows(rows) for op, rows in by_op.items() if op.endswith(("dispatch", "combine_grad"))]
    flat = [nonuniformity_from_flows(rows) for op, rows in by_op.items() if op.endswith(("combine", "dispatch_grad"))]
    assert len(skewed) == len(flat) == 4
    assert 0.3 < sum(skewed) / len(skewed) < 0.5    # APNet'24: ~0.4 at iteration 0
    assert max(flat) < 0.15


def test_moe_expert_grads_in_expert_dp_groups():
    wl = workload(8, 1, 1, 16, False)
    ex8, _, b8 = run(wl, moe=MoEConfig(8, 1, 8))
    ex2, _, b2 = run(wl, moe=MoEConfig(8, 1, 2))
    dense = sum(op.size_bytes for op in ex8.iteration_ops[0] if op.group.startswith("dp"))
    # ep = dp: every expert on one rank, no expert gradient sync; ep=2: experts replicated 4x
    assert not any(op.group.startswith("edp") for op in ex8.iteration_ops[0])
    edp = [op for op in ex2.iteration_ops[0] if op.group.startswith("edp")]
    assert {len(op.ranks) for op in edp} == {4}
    per_rank_expert = 4 * (2 * H * 4 * H + 4 * H + H) * 2 * 2   # 4 experts/rank, 2 MoE layers, fp16
    assert sum(op.size_bytes for op in edp) == 2 * per_rank_expert  # 2 expert groups (q) per DP group
    assert dense == sum(op.size_bytes for op in ex2.iteration_ops[0] if op.group.startswith("dp"))


def test_moe_traffic_varies_dense_does_not():
    wl = workload(8, 1, 1, 16, False)
    ex, flows, _ = run(wl, iterations=2, moe=MoEConfig(8, 2, 8))
    mats = collections.defaultdict(collections.Counter)
    for r in flows:
        mats[r.iteration][(r.src, r.dst)] += r.size_bytes
    assert mats[0] != mats[1]
    ex, flows, _ = run(wl, iterations=2)
    mats = collections.defaultdict(collections.Counter)
    for r in flows:
        mats[r.iteration][(r.src, r.dst)] += r.size_bytes
    assert mats[0] == mats[1]
