"""Vocabulary-parallel embedding/loss collectives and the embedding-group gradient all-reduce (hand counts)."""
import pytest

from netsim.errors import WorkloadError
from netsim.workloads import OpGraphBuilder, load_workload, place
from netsim.workloads.extended import ExtendedBuilder

S, B, H, V = 64, 2, 128, 1000


def doc(tp=2, pp=2, dp=2, cp=1, **par):
    return {"name": "vp", "model": {"preset": "gpt-125m", "layers": 2, "hidden": H, "heads": 4, "seq_len": S,
                                    "vocab": V},
            "training": {"global_batch": 3 * B * dp, "micro_batch": B},
            "parallelism": {"tp": tp, "pp": pp, "dp": dp, "cp": cp, **par}}


def ops_of(d, builder=OpGraphBuilder):
    w = load_workload(d)
    pl = place(w, gpu_names=[f"g{i}" for i in range(w.world_size)])
    b = builder(w, pl)
    return w, pl, b.build(0)


@pytest.mark.parametrize("cp", [1, 2])
def test_vocab_parallel_adds_exactly_the_megatron_collectives(cp):
    w, _, base = ops_of(doc(cp=cp))
    _, _, ops = ops_of(doc(cp=cp, vocab_parallel=True))
    old = {(op.name, op.ranks) for op in base}
    new = [op for op in ops if (op.name, op.ranks) not in old]
    assert all(op.kind == "tp" and op.collective == "allreduce" for op in new)
    n = S * B // cp                                   # tokens per rank
    groups = w.dp * cp                                # TP groups per stage
    m = w.micro_batches
    by_size = sorted(op.size_bytes for op in new)
    # per micro-batch and TP group: stage 0 one embedding all-reduce (n·h fp16); the last stage three
    # loss all-reduces of n fp32 values (max, target logit, sum-exp) and one input-gradient all-reduce
    assert by_size == sorted([n * 4] * (3 * m * groups) + [n * H * 2] * (2 * m * groups))
    names = {op.name.split(".", 1)[1] for op in new}
    assert names == {f"F{j}.embedding.embedding.allreduce" for j in range(m)} | {
        f"F{j}.logits.logits.{x}.allreduce" for j in range(m) for x in ("loss_max", "loss_target", "loss_sumexp")} | {
        f"B{j}.logits.logits.input_grad.allreduce" for j in range(m)}


def test_loss_reductions_stay_all_reduces_under_sequence_parallelism():
    _, _, ops = ops_of(doc(vocab_parallel=True, sequence_parallel=True), ExtendedBuilder)
    loss = [op for op in ops if ".loss_" in op.name]
    assert loss and all(op.collective == "allreduce" for op in loss)
    assert any(op.name.endswith("embedding.embedding.reducescatter") for op in ops)


def test_embedding_group_all_reduce():
    w, pl, ops = ops_of(doc(tp=2, pp=2, dp=2, embedding_grad_allreduce=True))
    emb = [op for op in ops if op.group.startswith("emb")]
    assert len(emb) == w.tp * w.dp                    # one per pipeline
    size = -(-V // 2) * H * 2                          # ceil(V/t)·h values × 2 gradient bytes
    opt = {op.ranks[0]: op for op in ops if op.kind == "optimizer"}
    for op in emb:
        first, last = op.ranks
        assert pl.stage(first) == 0 and pl.stage(last) == 1 and op.size_bytes == size
        assert pl.coords[first][:2] == pl.coords[last][:2]
        assert op in opt[first].deps and op in opt[last].deps
        dp_ops = [d for d in op.deps if d.kind == "dp"]
        assert {pl.stage(d.ranks[0]) for d in dp_ops} == {0, 1}   # after both stages' DP sync
    _, _, off = ops_of(doc(tp=2, pp=2, dp=2))
    assert len(ops) - len(off) == len(emb)


@pytest.mark.parametrize("par,msg", [
    ({"tp": 1, "vocab_parallel": True}, "need tp > 1"),
    ({"pp": 1, "embedding_grad_allreduce": True}, "needs a pipeline"),
    ({"vocab_parallel": "yes"}, "must be true or false"),
])
def test_errors(par, msg):
    with pytest.raises(WorkloadError, match=msg) as e:
        load_workload(doc(**par))
    assert "\n" not in str(e.value)


def test_untied_embeddings_have_no_embedding_group():
    d = doc(embedding_grad_allreduce=True)
    d["model"]["tied_embeddings"] = False
    with pytest.raises(WorkloadError, match="tied embeddings"):
        load_workload(d)
