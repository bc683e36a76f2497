"""MoE / expert parallelism in the op graph: all-to-all counts, routed bytes, skew, expert gradients."""
from collections import Counter, defaultdict

import numpy as np
import pytest

from netsim.errors import WorkloadError
from netsim.workloads import OpGraphBuilder, Placement, load_workload
from netsim.workloads.moe import MoeSpec, route


def _wl(recompute=True, cf=None, dp=8, ep=4, **moe):
    return load_workload({"model": {"preset": "gpt-350m", "layers": 4, "hidden": 64, "heads": 4, "seq_len": 32,
                                    "vocab": 128, "moe": {"experts": 8, "top_k": 2, "capacity_factor": cf, **moe}},
                          "training": {"global_batch": 2 * dp * 3, "micro_batch": 2, "recompute": recompute},
                          "parallelism": {"dp": dp, "ep": ep}})


def _ops(w, iterations=1, seed=0):
    pl = Placement.build(w.dp, w.tp, w.pp, w.order, [f"g{i}" for i in range(w.world_size)], ep=w.ep)
    b = OpGraphBuilder(w, pl, seed=seed)
    return pl, b, [op for it in range(iterations) for op in b.build(it)]


@pytest.mark.parametrize("recompute,per_layer", [(True, 6), (False, 4)])
def test_alltoall_count_per_moe_layer(recompute, per_layer):
    w = _wl(recompute)
    pl, b, ops = _ops(w)
    n_moe = sum(w.model.moe.is_moe_layer(i) for i in range(w.model.layers))
    per_rank = Counter(r for op in ops if op.kind == "ep" for r in op.ranks)
    assert set(per_rank.values()) == {per_layer * n_moe * w.micro_batches}
    for op in ops:
        if op.kind == "ep":
            assert op.collective == "alltoall" and len(op.ranks) == w.ep
            assert pl.groups["ep"][pl.group_of["ep"][op.ranks[0]]] == op.ranks


def test_routed_bytes_without_capacity_are_all_tokens():
    w = _wl(cf=None)
    pl, b, ops = _ops(w)
    per_rank_tokens = w.micro_batch * w.model.seq_len * w.model.moe.top_k
    for op in ops:
        if op.kind == "ep":
            assert sum(map(sum, op.sizes)) == w.ep * per_rank_tokens * w.model.hidden * w.act_bytes


def test_capacity_drops_overflow():
    spec = MoeSpec(8, 2, capacity_factor=1.0, skew_start=0.8)
    cap = -(-1.0 * 512 * 2 // 8)
    for k in range(20):
        tok, recv = route(spec, 4, 512, 0, (0, k, 0, 0))
        assert sum(tok[0]) <= 512 * 2
    dropped = [sum(route(spec, 4, 512, 0, (0, k, 0, 0))[0][0]) < 1024 for k in range(20)]
    assert any(dropped)
    assert cap == 128


def test_skew_decays_from_apnet_start_to_below_0_1():
    spec = MoeSpec(16, 2, capacity_factor=None)
    def mean_cv(it):
        cvs = []
        for k in range(200):
            _, recv = route(spec, 8, 1024, it, (1, k, 0, 0))
            r = np.array(recv, dtype=float)
            cvs.append(r.std() / r.mean())
        return float(np.mean(cvs))
    assert 0.3 < mean_cv(0) < 0.5          # APNet'24: ≈ 0.4 early in training
    assert mean_cv(100) < 0.1              # and < 0.1 after ~100 iterations


def test_moe_traffic_changes_between_iterations_dense_does_not():
    w = _wl()
    pl, b, ops = _ops(w, iterations=2)
    per_it = defaultdict(list)
    for op in ops:
        if op.kind == "ep":
            per_it[op.iteration].append(op.sizes)
    assert per_it[0] != per_it[1]
    pl2, b2, ops2 = _ops(w, iterations=1, seed=0)
    assert [op.sizes for op in ops2 if op.kind == "ep"] == per_it[0]   # seeded: reproducible


def test_expert_gradients_on_expert_dp_groups():
    w = _wl(dp=8, ep=4)
    pl, b, ops = _ops(w)
    per_rank = defaultdict(int)
    for op in ops:
        if op.kind == "dp":
            for r in op.ranks:
                per_rank[r] += op.size_bytes
            assert len(op.ranks) in (w.dp, w.dp // w.ep)
    for r in range(w.world_size):
        assert per_rank[r] == b.rank_params(r) * w.grad_bytes


@pytest.mark.parametrize("par,msg", [({"ep": 3, "dp": 4}, "ep does not divide dp")])
def test_bad_ep(par, msg):
    doc = {"model": {"preset": "gpt-350m", "moe": {"experts": 8}}, "training": {"global_batch": 24},
           "parallelism": {"dp": 6, **par}}
    with pytest.raises(WorkloadError, match=msg):
        load_workload(doc)


def test_ep_must_divide_experts():
    with pytest.raises(WorkloadError, match="ep does not divide the 6 experts"):
        load_workload({"model": {"preset": "gpt-350m", "moe": {"experts": 6}}, "training": {"global_batch": 8},
                       "parallelism": {"dp": 4, "ep": 4}})


def test_unknown_moe_key():
    with pytest.raises(WorkloadError, match="did you mean top_k"):
        load_workload({"model": {"preset": "gpt-350m", "moe": {"experts": 8, "topk": 2}},
                       "training": {"global_batch": 8}})
