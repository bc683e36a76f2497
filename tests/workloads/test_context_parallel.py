"""Context parallelism (ring attention): placement, ring-send counts and bytes, compute ÷ cp, overlap, memory.

Hand counts per rank, per attention layer and micro-batch: forward cp − 1
K/V sends, the recomputed forward cp − 1 more, backward cp − 1 K/V and cp
dK/dV sends, each 2·(s/cp)·b·(h/t) values × 2 bytes.
"""
from collections import Counter, defaultdict

import networkx as nx
import pytest

from netsim.errors import WorkloadError
from netsim.runtime import run_training
from netsim.workloads import OpGraphBuilder, load_workload, place
from netsim.workloads.extended import ExtendedBuilder
from netsim.workloads.gen_context import attention_split_ps, kv_chunk_bytes
from netsim.workloads.memory import memory_settings, stage_memory

PS = 1e-12


def star(n_gpus: int, rate_bps: float = 1e18) -> nx.Graph:
    """One switch, one GPU per server, zero-delay links of ``rate_bps``."""
    g = nx.Graph(name=f"star{n_gpus}")
    g.add_node("sw", kind="switch")
    for i in range(n_gpus):
        g.add_node(f"s{i}.gpu0", kind="gpu", server=f"s{i}", index=0)
        g.add_edge(f"s{i}.gpu0", "sw", rate_bps=rate_bps, delay_ns=0.0, kind="ethernet")
    return g


def doc(cp=2, tp=1, pp=1, dp=1, layers=2, recompute=True, seq=256, **par):
    return {"name": "cp", "model": {"preset": "gpt-125m", "layers": layers, "hidden": 128, "heads": 4,
                                    "seq_len": seq, "vocab": 512},
            "training": {"global_batch": 2 * dp, "micro_batch": 1, "recompute": recompute},
            "parallelism": {"cp": cp, "tp": tp, "pp": pp, "dp": dp, **par}, "compute": {"optimizer": "none"}}


def build(d):
    w = load_workload(d)
    pl = place(w, gpu_names=[f"g{i}" for i in range(w.world_size)])
    b = OpGraphBuilder(w, pl)
    return w, pl, b, b.build(0)


def test_placement_nests_cp_between_tp_and_dp():
    w, pl, _, _ = build(doc(cp=2, tp=2, pp=2, dp=2, layers=2))
    t, cp, dp = 2, 2, 2
    for r, (ti, dpc, s) in enumerate(pl.coords):   # megatron order: r = tp + t·(c + cp·(d + dp·pp))
        c, d = dpc % cp, dpc // cp
        assert r == ti + t * (c + cp * (d + dp * s))
    assert pl.groups["cp"][0] == (0, 2) and pl.groups["tp"][0] == (0, 1)
    assert pl.groups["dp"][0] == (0, 2, 4, 6)          # gradients are reduced over DP×CP
    assert w.world_size == 16


@pytest.mark.parametrize("cp,tp,recompute", [(2, 1, True), (4, 1, True), (4, 2, False), (3, 1, True)])
def test_ring_send_counts_and_bytes(cp, tp, recompute):
    seq = 384 if cp == 3 else 256
    w, pl, b, ops = build(doc(cp=cp, tp=tp, recompute=recompute, seq=seq))
    sends = [op for op in ops if op.group.startswith("cp")]
    chunk = 2 * (seq // cp) * 1 * (128 // tp) * 2
    assert {op.size_bytes for op in sends} == {chunk} == {kv_chunk_bytes(seq, 1, 128, tp, cp, 2)}
    per_src = Counter(op.ranks[0] for op in sends)
    fwd = (cp - 1) * (2 if recompute else 1)
    want = w.micro_batches * w.model.layers * (fwd + (cp - 1) + cp)
    assert set(per_src.values()) == {want} and len(per_src) == w.world_size
    for op in sends:                                    # every send goes to the next member of its CP ring
        ring = pl.groups["cp"][pl.group_of["cp"][op.ranks[0]]]
        i = ring.index(op.ranks[0])
        assert op.ranks[1] == ring[(i + 1) % cp] and op.kind == "pp" and op.collective == "send"


def _compute_ps(ops, rank):
    return sum(op.duration_ps for op in ops if op.kind == "compute" and op.ranks == (rank,))


def test_compute_tp_and_pp_bytes_divide_by_cp():
    _, _, _, ops1 = build(doc(cp=1, tp=2, pp=2))
    _, _, _, ops2 = build(doc(cp=2, tp=2, pp=2))
    n_ops = sum(1 for op in ops2 if op.kind == "compute" and op.ranks == (0,))
    assert abs(_compute_ps(ops2, 0) - _compute_ps(ops1, 0) / 2) <= n_ops   # rounding: ≤ 1 ps per op
    tp1 = sorted(op.size_bytes for op in ops1 if op.kind == "tp" and op.ranks == (0, 1))
    tp2 = sorted(op.size_bytes for op in ops2 if op.kind == "tp" and op.ranks == (0, 1))
    assert tp2 == [x // 2 for x in tp1] and tp1[0] == 256 * 128 * 2
    pp1 = [op.size_bytes for op in ops1 if op.group.startswith("pp")]
    pp2 = [op.size_bytes for op in ops2 if op.group.startswith("pp")]
    assert set(pp2) == {256 * 128 * 2 // 2} == {x // 2 for x in pp1}


def test_gradients_all_reduced_over_dp_times_cp():
    w, pl, b, ops = build(doc(cp=2, dp=2))
    per_rank = defaultdict(int)
    for op in ops:
        if op.kind == "dp":
            assert len(op.ranks) == 4 and op.collective == "allreduce"
            for r in op.ranks:
                per_rank[r] += op.size_bytes
    assert all(per_rank[r] == b.rank_params(r) * w.grad_bytes for r in range(w.world_size))


def test_attention_split_conserves_time():
    qkv, cores, proj = attention_split_ps(10**6 + 7, seq=2048, hidden=2560, cp=4)
    assert qkv + sum(cores) + proj == 10**6 + 7 and max(cores) - min(cores) <= 1
    assert qkv == (10**6 + 7) * 6 * 2560 // (8 * 2560 + 4 * 2048)


def test_iteration_is_compute_when_sends_are_free():
    s = run_training(star(2), doc(cp=2, layers=1), backend="analytic", keep_records=True)
    ops = s["_executor"].iteration_ops[0]
    assert s["iteration_time_s"] == pytest.approx(_compute_ps(ops, 0) * PS, rel=1e-6)


def test_ring_sends_overlap_attention_core():
    s = run_training(star(2, rate_bps=2e9), doc(cp=2, layers=1, recompute=False), backend="analytic",
                     keep_records=True)
    ops = s["_executor"].iteration_ops[0]
    core0 = next(op for op in ops if op.name == "F0.layer0.attn.core0" and op.ranks == (0,))
    core1 = next(op for op in ops if op.name == "F0.layer0.attn.core1" and op.ranks == (0,))
    kv = next(op for op in ops if op.name.endswith("F0.layer0.attn.kv0.c1-c0"))
    assert kv.start_ps < core0.end_ps                  # the send runs beside the current block's compute
    assert kv.end_ps > core0.end_ps                    # (slow link: the next block waits for it)
    assert core1.start_ps == max(core0.end_ps, kv.end_ps)
    serial = sum(op.end_ps - op.start_ps for op in ops if 0 in op.ranks)   # rank 0's ops one after another
    assert s["iteration_time_s"] > _compute_ps(ops, 0) * PS
    assert s["iteration_time_s"] < serial * PS


def test_activation_memory_divides_by_cp():
    per = {}
    for cp in (1, 4):
        w, pl, b, _ = build(doc(cp=cp, layers=2))
        st = stage_memory(w, b, memory_settings(w.raw, w.recompute, w.source))[0]
        per[cp] = (st.activation_per_layer, st.working_bytes, st.states.total)
    assert per[4][0] == per[1][0] / 4 and per[4][1] == per[1][1] / 4 and per[4][2] == per[1][2]


@pytest.mark.parametrize("change,msg", [
    ({"model": {"seq_len": 250}}, "not divisible by 2·cp"),
    ({"parallelism": {"cp": 0}}, "parallelism.cp"),
])
def test_cp_errors(change, msg):
    d = doc(cp=2, layers=2)
    for k, v in change.items():
        d[k].update(v)
    with pytest.raises(WorkloadError, match=msg) as e:
        load_workload(d)
    assert "\n" not in str(e.value)


def test_cp_needs_a_transformer():
    with pytest.raises(WorkloadError, match="needs a transformer"):
        load_workload({"model": "resnet50", "training": {"global_batch": 2}, "parallelism": {"cp": 2}})


def _moe_doc(cp):
    d = doc(cp=cp, dp=2, layers=2, ep=2)
    d["model"]["moe"] = {"experts": 4, "top_k": 2, "capacity_factor": None}   # no token dropping
    return d


def test_cp_with_moe_routes_s_over_cp_tokens_and_rings_the_attention():
    """MoE layers' attention is ring attention (hand counts as dense layers) and a rank routes b·s/cp
    tokens: every dispatch row carries (s/cp)·top_k tokens × h × 2 bytes, half the cp = 1 ones."""
    w1, _, _, ops1 = build(_moe_doc(1))
    w, pl, _, ops = build(_moe_doc(2))
    cp, seq, h = 2, 256, 128
    row = (seq // cp) * 2 * h * 2
    disp = [op for op in ops if op.collective == "alltoall" and op.name.endswith(".dispatch")]
    assert disp and all(len(op.ranks) == 2 and all(sum(r) == row for r in op.sizes) for op in disp)
    disp1 = [op for op in ops1 if op.collective == "alltoall" and op.name.endswith(".dispatch")]
    assert {sum(r) for op in disp1 for r in op.sizes} == {2 * row}
    sends = Counter(op.ranks[0] for op in ops if op.group.startswith("cp"))
    want = w.micro_batches * w.model.layers * (2 * (cp - 1) + (cp - 1) + cp)    # recompute on
    assert set(sends.values()) == {want} and len(sends) == w.world_size == 4
    s = run_training(star(4, rate_bps=100e9), _moe_doc(2), backend="analytic")
    assert s["iteration_time_s"] > 0 and s["parallelism"]["cp"] == 2


def _zb(schedule):
    return doc(cp=2, pp=2, layers=2, schedule=schedule)


def test_cp_with_zb_h1_keeps_the_ring_in_b_and_runs_w_alone():
    """ZB-H1 with cp = 2: the same K/V and dK/dV ring sends as 1F1B (W passes add none), the attention
    W pass is the block's weight-gradient share, and each rank's compute sums to 1F1B's."""
    _, _, _, ops1 = build(_zb("1f1b"))
    w, pl, _, ops = build(_zb("zb_h1"))
    ring = lambda o: sorted((op.name, op.ranks) for op in o if op.group.startswith("cp"))   # noqa: E731
    assert ring(ops) == ring(ops1)
    w_attn = [op for op in ops if op.kind == "compute" and op.name.startswith("W") and ".attn" in op.name]
    assert w_attn and not any(".core" in op.name for op in w_attn)
    for r in range(w.world_size):
        assert _compute_ps(ops, r) == _compute_ps(ops1, r)
    s = run_training(star(4, rate_bps=100e9), _zb("zb_h1"), backend="analytic")
    s1 = run_training(star(4, rate_bps=100e9), _zb("1f1b"), backend="analytic")
    assert s["iteration_time_s"] <= s1["iteration_time_s"]


def test_zero_shards_over_dp_times_cp():
    d = doc(cp=2, dp=1, layers=2, zero_stage=1)
    d["compute"]["optimizer"] = "auto"
    w = load_workload(d)
    pl = place(w, gpu_names=[f"g{i}" for i in range(w.world_size)])
    ops = ExtendedBuilder(w, pl).build(0)
    rs = [op for op in ops if op.kind == "dp" and op.collective == "reducescatter"]
    assert rs and all(len(op.ranks) == 2 for op in rs)        # the DP×CP group of 1×2 ranks
    b1 = OpGraphBuilder(w, pl)
    plain = {op.ranks: op.duration_ps for op in b1.build(0) if op.kind == "optimizer"}
    for op in ops:
        if op.kind == "optimizer":
            assert op.duration_ps == round(plain[op.ranks] / 2)
    st = stage_memory(w, b1, memory_settings(w.raw, w.recompute, w.source))[0]
    assert st.states.optimizer == 12 * st.params / 2           # 12 B/param of Adam state over dp·cp = 2


@pytest.mark.parametrize("setting,needle", [("parallelism.cp=3", "2·cp"), ("parallelism.vocab_parallel=1", "true or false"),
                                            ("parallelism.partition=speedy", "speed_balanced")])
def test_cli_one_line_errors(tmp_path, capsys, setting, needle):
    from netsim.cli import main
    code = main(["run", "topologies/leaf_spine_64gpu.yaml", "workloads/gpt-1.5b-t2p2d2c2-small.yaml", "--backend",
                 "analytic", "--workload-set", setting, "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--workload-set parallelism." in err and needle in err


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["gpt-1.5b-t2p2d2c2-small", "gpt-moe-350m-t2-small"])
def test_flow_and_packet_run_the_new_features_close_to_analytic(workload):
    """Ring attention, vocab-parallel, the embedding group (cp workload) and MoE tp > 1 on every backend."""
    times = {}
    for be in ("analytic", "flow", "packet"):
        s = run_training("topologies/leaf_spine_64gpu.yaml", f"workloads/{workload}.yaml", backend=be)
        times[be] = s["iteration_time_s"]
    for be in ("flow", "packet"):
        assert times[be] == pytest.approx(times["analytic"], rel=0.05), times
