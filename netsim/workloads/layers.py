"""The unit of work the op-graph generator consumes: layers made of blocks.

A :class:`Layer` is what a pipeline partition moves between stages; a
:class:`Block` is one compute kernel group of a layer as seen by *one rank*
(FLOPs already divided by the tensor-parallel degree).  A block may be followed
by a tensor-parallel all-reduce (Megatron's ``g`` operator in forward, ``f`` in
backward) and owns the parameter tensors whose gradients are ready when its
backward finishes (what DDP buckets are made of).

Both model families (transformers, CNNs) compile to this form, so the
generator knows nothing of either.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Block:
    """One rank's share of a kernel group of a layer.

    Attributes
    ----------
    name : str
        e.g. ``"attn"``, ``"mlp"``, ``"conv"``.
    fwd_flops, bwd_flops : float
        FLOPs per sample on one rank.
    recompute : bool
        Re-run (forward) before backward under full activation recomputation.
    tp_elems : int
        Elements per sample of the tensor all-reduced across the TP group after
        this block (forward and backward); 0 = no TP collective.
    tensors : tuple of (name, numel)
        Parameters this rank holds for the block, in forward order.
    expert_tensors : tuple of (name, numel)
        Expert (MoE) parameters this rank holds: synchronized over the
        expert-data-parallel group instead of the DP group.
    moe : bool
        An expert block: an all-to-all dispatch before it and a combine after
        it (forward, backward, recomputation); its FLOPs depend on the routed
        tokens (``fwd_flops`` is then per routed token).
    """

    name: str
    fwd_flops: float
    bwd_flops: float
    recompute: bool = True
    tp_elems: int = 0
    tensors: tuple = ()
    expert_tensors: tuple = ()
    moe: bool = False

    @property
    def params(self) -> int:
        return sum(n for _, n in self.tensors) + sum(n for _, n in self.expert_tensors)


@dataclass(frozen=True, slots=True)
class Layer:
    """A partitionable unit: blocks in forward order and the activation it emits.

    ``role`` is ``"body"`` for layers the pipeline partition counts, ``"first"``
    for a layer pinned to stage 0 (embedding) and ``"last"`` for one pinned to
    the last stage (logits/loss).  ``out_elems`` is the activation elements per
    sample sent to the next stage when a boundary falls after this layer.
    """

    name: str
    blocks: tuple
    out_elems: int
    role: str = "body"

    @property
    def params(self) -> int:
        return sum(b.params for b in self.blocks)

    @property
    def fwd_flops(self) -> float:
        return sum(b.fwd_flops for b in self.blocks)

    @property
    def bwd_flops(self) -> float:
        return sum(b.bwd_flops for b in self.blocks)
