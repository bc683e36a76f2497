"""Validation of the context-parallel and embedding fields of a workload's ``parallelism`` section.

``cp`` (context parallelism: ring attention over the CP group),
``vocab_parallel`` (Megatron's vocabulary-parallel embedding and
cross-entropy collectives over TP) and ``embedding_grad_allreduce`` (the
tied word embedding's gradient all-reduce between the first and last
pipeline stage, Megatron's embedding group).  Every problem is one
:class:`~netsim.errors.WorkloadError` line naming the field, the value and
what is accepted.  All three are off by default, so a workload without them
generates exactly the operations it did before they existed.
"""
from __future__ import annotations

from dataclasses import dataclass

from .fields import Fields
from .transformer import TransformerModel


@dataclass(frozen=True)
class ContextEmbeddingFields:
    """The validated values (see docs/workloads.md, ``parallelism``)."""

    cp: int = 1
    vocab_parallel: bool = False
    embedding_grad_allreduce: bool = False


def context_embedding_fields(f: Fields, par: dict, model, *, tp: int, pp: int, schedule: str,
                             split_backward: bool) -> ContextEmbeddingFields:
    """Validate ``parallelism.cp``, ``vocab_parallel`` and ``embedding_grad_allreduce``."""
    cp = f.pos_int(par, "parallelism.cp", default=1)
    transformer = isinstance(model, TransformerModel)
    if cp > 1:
        if not transformer:
            f.fail("parallelism.cp", "context parallelism needs a transformer model", cp,
                   "cp: 1 for CNN/layer-list models")
        if model.seq_len % (2 * cp):
            f.fail("parallelism.cp", f"seq_len = {model.seq_len} is not divisible by 2·cp (Megatron's "
                   "load-balanced causal split into 2·cp chunks)", cp, f"a cp with 2·cp dividing {model.seq_len}")
    vp = f.boolean(par, "parallelism.vocab_parallel", default=False)
    if vp:
        if not transformer:
            f.fail("parallelism.vocab_parallel", "vocabulary parallelism needs a transformer model", vp, "false")
        if tp == 1:
            f.fail("parallelism.vocab_parallel", "vocabulary-parallel collectives need tp > 1", vp,
                   "tp >= 2 or false")
    emb = f.boolean(par, "parallelism.embedding_grad_allreduce", default=False)
    if emb:
        if not transformer or not model.tied_embeddings:
            f.fail("parallelism.embedding_grad_allreduce", "needs a transformer with tied embeddings", emb,
                   "model.tied_embeddings: true, or false")
        if pp == 1:
            f.fail("parallelism.embedding_grad_allreduce", "the embedding group needs a pipeline (first and "
                   "last stage differ)", emb, "pp >= 2 or false")
    return ContextEmbeddingFields(cp, vp, emb)
