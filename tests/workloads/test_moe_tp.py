"""MoE with tp > 1 (expert tensor parallelism = TP): expert shards, per-TP-rank all-to-alls, TP all-reduces."""
from collections import Counter, defaultdict

import pytest

from netsim.workloads import OpGraphBuilder, Placement, load_workload
from netsim.workloads.ops import PS_PER_S

H, F, E = 64, 256, 8


def _wl(tp=2, dp=4, ep=4, recompute=True):
    return load_workload({"model": {"preset": "gpt-350m", "layers": 4, "hidden": H, "heads": 4, "seq_len": 32,
                                    "vocab": 128, "moe": {"experts": E, "top_k": 2, "capacity_factor": None}},
                          "training": {"global_batch": 2 * dp * 2, "micro_batch": 2, "recompute": recompute},
                          "parallelism": {"dp": dp, "ep": ep, "tp": tp}})


def _ops(w):
    pl = Placement.build(w.dp, w.tp, w.pp, w.order, [f"g{i}" for i in range(w.world_size)], ep=w.ep)
    b = OpGraphBuilder(w, pl, seed=3)
    return pl, b, b.build(0)


def test_expert_params_are_split_over_tp():
    for tp in (1, 2, 4):
        w = _wl(tp=tp)
        moe = [b for l in w.layers() for b in l.blocks if b.moe]
        assert moe and all(b.expert_tensors[0][1] == E // w.ep * (2 * H * F // tp + F // tp + H) for b in moe)
        assert all(b.fwd_flops == 4 * H * F // tp for b in moe)


def test_each_tp_rank_has_its_own_ep_all_to_alls_with_equal_routing():
    w = _wl(tp=2)
    pl, b, ops = _ops(w)
    a2a = [op for op in ops if op.kind == "ep"]
    n_moe = sum(w.model.moe.is_moe_layer(i) for i in range(w.model.layers))
    per_rank = Counter(r for op in a2a for r in op.ranks)
    assert set(per_rank.values()) == {6 * n_moe * w.micro_batches} and len(per_rank) == w.world_size
    by_tp = defaultdict(list)
    for op in a2a:
        assert len({pl.coords[r][0] for r in op.ranks}) == 1      # one TP index per EP group
        by_tp[pl.coords[op.ranks[0]][0]].append(op.sizes)
    assert by_tp[0] == by_tp[1]                                   # TP ranks route the same tokens


def test_tp_all_reduce_after_experts_sums_received_tokens():
    w = _wl(tp=2)
    pl, b, ops = _ops(w)
    dispatch = {op.name.split(".", 1)[1]: op for op in ops if op.kind == "ep" and op.name.endswith("dispatch")
                and pl.coords[op.ranks[0]][0] == 0}
    ar = [op for op in ops if op.kind == "tp" and ".moe." in op.name]
    n_moe = sum(w.model.moe.is_moe_layer(i) for i in range(w.model.layers))
    assert len(ar) == 3 * n_moe * w.micro_batches * w.dp     # F, R, B per MoE layer, micro-batch, TP group
    for op in ar:
        key = op.name.split(".", 1)[1].replace(".allreduce", ".dispatch")
        d = dispatch[key]
        me = d.ranks.index(op.ranks[0])
        received = sum(row[me] for row in d.sizes)           # bytes = tokens received × h × 2
        assert op.size_bytes == received
    comp = [o for o in ops if o.kind == "compute" and o.name.startswith("F0.layer1.moe") and o.ranks == (0,)]
    d = dispatch["F0.layer1.moe.dispatch"]
    tokens = sum(row[d.ranks.index(0)] for row in d.sizes) // (H * 2)
    assert comp[0].duration_ps == round(tokens * 4 * H * F / 2 / b.rate * PS_PER_S)


def test_gradient_bytes_conserved_with_tp():
    w = _wl(tp=2, dp=4, ep=2)                                    # expert-DP groups of 2
    pl, b, ops = _ops(w)
    per_rank = defaultdict(int)
    for op in ops:
        if op.kind == "dp":
            for r in op.ranks:
                per_rank[r] += op.size_bytes
    assert all(per_rank[r] == b.rank_params(r) * w.grad_bytes for r in range(w.world_size))


def test_tp1_unchanged_count():
    pl, b, ops = _ops(_wl(tp=1))
    assert not [op for op in ops if op.kind == "tp"]
