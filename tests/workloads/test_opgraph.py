"""Counts and bytes of one iteration's operations equal the closed formulas exactly."""
from collections import Counter, defaultdict

import pytest

from netsim.workloads import OpGraphBuilder, Placement, ddp_buckets, load_workload


def _build(doc, iterations=1):
    w = load_workload(doc)
    pl = Placement.build(w.dp, w.tp, w.pp, w.order, [f"g{i}" for i in range(w.world_size)])
    b = OpGraphBuilder(w, pl)
    ops = [op for it in range(iterations) for op in b.build(it)]
    return w, pl, b, ops


GPT = {"model": {"preset": "gpt-1.5b", "layers": 8, "hidden": 256, "heads": 8, "seq_len": 64, "vocab": 1000},
       "training": {"global_batch": 24, "micro_batch": 3, "recompute": True},
       "parallelism": {"dp": 2, "tp": 2, "pp": 2}}


def _doc(**par):
    d = {k: (dict(v) if isinstance(v, dict) else v) for k, v in GPT.items()}
    d["parallelism"] = {**GPT["parallelism"], **{k: v for k, v in par.items() if k != "training"}}
    d["training"] = {**GPT["training"], **par.get("training", {})}
    return d


@pytest.mark.parametrize("recompute,per_layer", [(True, 6), (False, 4)])
@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
def test_tp_allreduce_count_and_size(recompute, per_layer, schedule):
    w, pl, b, ops = _build(_doc(schedule=schedule, training={"recompute": recompute}))
    l, p, m = w.model.layers, w.pp, w.micro_batches
    bsh2 = 2 * w.micro_batch * w.model.seq_len * w.model.hidden
    per_rank = Counter()
    for op in ops:
        if op.kind == "tp" and op.collective == "allreduce":
            assert op.size_bytes == bsh2
            assert len(op.ranks) == w.tp
            for r in op.ranks:
                per_rank[r] += 1
    assert set(per_rank) == set(range(w.world_size))
    assert set(per_rank.values()) == {per_layer * (l // p) * m}


@pytest.mark.parametrize("scatter_gather", [False, True])
def test_pp_transfers_per_boundary(scatter_gather):
    w, pl, b, ops = _build(_doc(pp=4, scatter_gather=scatter_gather, training={"global_batch": 24}))
    m, t = w.micro_batches, w.tp
    bsh2 = 2 * w.micro_batch * w.model.seq_len * w.model.hidden
    per_pair = Counter()
    for op in ops:
        if op.kind == "pp":
            src, dst = op.ranks
            assert abs(pl.stage(src) - pl.stage(dst)) == 1
            assert pl.coords[src][:2] == pl.coords[dst][:2]   # same tp index, same dp replica
            assert op.size_bytes == (bsh2 // t if scatter_gather else bsh2)
            per_pair[frozenset(op.ranks)] += 1
    # every pair of neighbouring ranks of a pipeline: m activations + m gradients
    assert len(per_pair) == w.dp * w.tp * (w.pp - 1)
    assert set(per_pair.values()) == {2 * m}
    gathers = [op for op in ops if op.kind == "tp" and op.collective == "allgather"]
    assert len(gathers) == (2 * m * (w.pp - 1) * w.dp if scatter_gather else 0)


@pytest.mark.parametrize("par", [dict(dp=4, tp=1, pp=1), dict(dp=2, tp=2, pp=2), dict(dp=3, tp=1, pp=4)])
def test_dp_bytes_equal_parameters_held(par):
    doc = _doc(**par, training={"global_batch": 12 * par["dp"]})
    w, pl, b, ops = _build(doc)
    per_rank = defaultdict(int)
    for op in ops:
        if op.kind == "dp":
            assert op.collective == "allreduce" and len(op.ranks) == w.dp
            for r in op.ranks:
                per_rank[r] += op.size_bytes
    for r in range(w.world_size):
        assert per_rank[r] == b.rank_params(r) * w.grad_bytes
    if w.tp == 1:
        # the stages hold the model once (plus the last stage's tied-embedding copy when p > 1)
        copy = w.model.vocab * w.model.hidden if w.pp > 1 else 0
        assert sum(b.rank_params(pl.rank_at(0, 0, s)) for s in range(w.pp)) == w.model.params() + copy


def test_fp32_gradients_are_4_bytes():
    w, pl, b, ops = _build(_doc(dp=2, tp=1, pp=1, training={"precision": "fp32", "global_batch": 6}))
    assert sum(op.size_bytes for op in ops if op.kind == "dp") == 4 * w.model.params()


def test_ddp_buckets_reverse_order_and_caps():
    w, pl, b, ops = _build({"model": "resnet50", "training": {"global_batch": 8, "micro_batch": 4},
                            "parallelism": {"dp": 2}})
    sizes = [op.size_bytes for op in ops if op.kind == "dp"]
    assert sum(sizes) == 25_557_032 * 2
    assert sizes[0] >= 2**20 and all(s >= 25 * 2**20 for s in sizes[1:-1])
    # the first bucket holds the last layer (fc: 2048*1000 + 1000 params)
    assert sizes[0] == (2048 * 1000 + 1000) * 2


def test_ddp_bucket_assignment_rule():
    assert ddp_buckets([10] * 10, 25, 35) == [[0, 1, 2], [3, 4, 5, 6], [7, 8, 9]]
    assert ddp_buckets([], 1, 1) == []


def test_dense_graph_identical_every_iteration():
    w, pl, b, ops = _build(_doc(), iterations=3)
    sig = defaultdict(list)
    for op in ops:
        sig[op.iteration].append((op.name, op.kind, op.ranks, op.size_bytes, op.duration_ps))
    assert sig[0] == sig[1] == sig[2]


def test_iteration_chains_after_optimizer():
    w, pl, b, ops = _build(_doc(), iterations=2)
    opt = {op.ranks[0]: op for op in ops if op.kind == "optimizer" and op.iteration == 0}
    first = {}
    for op in ops:
        if op.iteration == 1 and op.kind == "compute" and op.ranks[0] not in first:
            first[op.ranks[0]] = op
    for r, op in first.items():
        assert opt[r] in op.deps


def test_compute_time_from_flops():
    doc = _doc(dp=1, tp=1, pp=1, training={"global_batch": 3, "recompute": False})
    doc["compute"] = {"gpu": "v100-sxm2", "optimizer": "none"}
    w, pl, b, ops = _build(doc)
    total_ps = sum(op.duration_ps for op in ops if op.kind == "compute")
    flops = 3 * w.model.fwd_flops_per_sample() * w.global_batch
    assert total_ps == pytest.approx(flops / (125e12 * 0.4) * 1e12, rel=1e-6)


def test_measured_layer_times_replace_formula():
    doc = {"model": {"layer_list": [{"params": 10, "fwd_flops": 1e9, "out_elems": 4}] * 4},
           "training": {"global_batch": 2, "micro_batch": 1},
           "parallelism": {"pp": 2}, "compute": {"layer_times_ms": {"default": [1.5, 3.0]}, "optimizer": "none"}}
    w, pl, b, ops = _build(doc)
    durs = Counter(op.duration_ps for op in ops if op.kind == "compute" and op.duration_ps)
    assert set(durs) == {1_500_000_000, 3_000_000_000}
