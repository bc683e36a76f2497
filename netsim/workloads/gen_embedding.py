"""Megatron's vocabulary-parallel embedding/loss collectives and the embedding-group gradient all-reduce.

A mixin of :class:`netsim.workloads.generate.OpGraphBuilder`, used when the
workload turns the features on (both off by default):

* ``parallelism.vocab_parallel`` (Megatron-LM's ``VocabParallelEmbedding``,
  column-parallel output layer and ``vocab_parallel_cross_entropy``; Shoeybi
  et al. 2019 §3), per micro-batch on each TP group, with n = s·b/cp tokens:
  forward embedding output all-reduce of n·h values (activation bytes);
  forward loss: three all-reduces of n fp32 values — the logits' maximum,
  the target logit and the sum of exponentials (Megatron reduces all three;
  fp32 because Megatron's default computes the cross-entropy in fp32, no
  ``--fp16-lm-cross-entropy``) — never converted by sequence parallelism (the
  first is a MAX reduction); backward: the output layer's input-gradient
  all-reduce of n·h values (the backward of its ``copy_to_tensor_model_parallel_region``).
  The embedding's backward needs none (its forward all-reduce's backward is
  the identity).
* ``parallelism.embedding_grad_allreduce`` (Megatron's embedding group, tied
  embeddings, p > 1): after the DP gradient sync of the first and the last
  stage, one all-reduce between the pipeline's first and last rank of the
  word-embedding gradient, ceil(V/t)·h values × gradient bytes (kind ``pp``,
  group ``embN`` = the pipeline's index, ``collectives.pp`` settings); both
  ranks' optimizer steps wait for it.

Left out: the position-embedding all-reduce of Megatron's split-rank
encoder–decoder models, and the extra copy when embeddings are not tied.
"""
from __future__ import annotations

from .ops import Op

#: bytes per value of the vocabulary-parallel cross-entropy's reductions: fp32 (Megatron-LM casts the
#: logits to float for the loss unless --fp16-lm-cross-entropy; megatron/core/tensor_parallel/cross_entropy.py)
LOSS_BYTES = 4
#: the vocabulary-parallel cross-entropy's forward all-reduces (Megatron: logits_max, predicted_logits,
#: sum_exp_logits; the first a MAX reduction, the others SUM)
LOSS_REDUCTIONS = ("loss_max", "loss_target", "loss_sumexp")


class VocabEmbedding:
    """Vocabulary-parallel collectives and embedding-gradient sync (mixin of the op-graph builder)."""

    def _tokens_per_rank(self) -> int:
        return self.b * self.w.model.seq_len // self.cp

    def _vocab_collectives(self, tg, gi: int, layer, name: str, phase: str) -> None:
        """The embedding's / output layer's TP collectives after pass ``phase`` of ``layer``'s block."""
        w = self.w
        n = self._tokens_per_rank()
        if layer.role == "first" and phase == "F":
            self._tp_collective(tg, gi, name + ".allreduce", "allreduce", n * w.model.hidden * w.act_bytes)
        elif layer.role == "last" and phase == "F":
            for what in LOSS_REDUCTIONS:
                self._tp_collective(tg, gi, f"{name}.{what}.allreduce", "allreduce", n * LOSS_BYTES, sp=False)
        elif layer.role == "last" and phase == "B":
            self._tp_collective(tg, gi, name + ".input_grad.allreduce", "allreduce",
                                n * w.model.hidden * w.act_bytes)

    def _embedding_sync(self) -> None:
        """Word-embedding gradient all-reduce of every pipeline's first and last rank (after their DP sync)."""
        w, pl = self.w, self.pl
        self.emb_sync: dict[int, Op] = {}
        size = -(-w.model.vocab // w.tp) * w.model.hidden * w.grad_bytes
        for i in range(w.tp):
            for d in range(pl.dp):
                first, last = pl.rank_at(i, d, 0), pl.rank_at(i, d, w.pp - 1)
                pipe = pl.group_of["pp"][first]
                deps = [self.cur[first], self.cur[last]]
                for s in (0, w.pp - 1):
                    for _, gname, ranks in self._dp_groups(s, i, "dp"):
                        deps.append(self.chain.get(("dp", gname)))
                op = self._add(Op(f"emb{pipe}.word_embeddings.allreduce", "pp", (first, last), self.it,
                                  group=f"emb{pipe}", collective="allreduce", size_bytes=size,
                                  spec=w.collectives["pp"], deps=deps))
                self.emb_sync[first] = self.emb_sync[last] = op
