"""Op-graph generation for ZeRO stages 1–3 and sequence parallelism.

:class:`ExtendedBuilder` is an :class:`~netsim.workloads.generate.OpGraphBuilder`
using the extension points that builder documents, so plain DP/TP/PP (and
MoE, which the base builder generates) keep exactly the base graph when both
features are off.

* **ZeRO** (:mod:`.zero`, Rajbhandari et al. SC'20): stage ≥ 1 turns every
  gradient bucket's all-reduce (DP and expert-DP groups) into a
  reduce-scatter and shards the optimizer step (1/d of its time); stages 1–2
  all-gather the updated parameters bucket by bucket after the step (the next
  iteration waits for them); stage 3 instead all-gathers each layer's
  (non-expert) parameters before its forward and before its backward in every
  micro-batch — blocking, no prefetch, so an upper bound on its exposed time.
With context parallelism the ZeRO groups are the DP×CP groups (Megatron-Core's
distributed optimizer shards over data-parallel × context-parallel ranks).

* **Sequence parallelism** (Korthikanti et al. 2022): every TP all-reduce
  becomes a reduce-scatter followed by an all-gather of the same size.

A ZeRO-3 gather spans several TP groups: it is one op, created by the first
participant that reaches it; the others add their stream position to its
dependencies (as pipeline sends do).
"""
from __future__ import annotations

from .generate import OpGraphBuilder
from .layers import Layer
from .ops import Op
from .zero import check_stage


class ExtendedBuilder(OpGraphBuilder):
    """Op graphs with ZeRO and sequence parallelism on top of the base generator.

    Parameters
    ----------
    workload, placement
        As for :class:`OpGraphBuilder`.
    zero_stage : int, optional
        0–3; default ``workload.zero_stage`` (0 when absent).
    sequence_parallel : bool, optional
        Default ``workload.sequence_parallel`` (False when absent).
    **kwargs
        Passed to the base builder (e.g. ``seed`` when it takes one).
    """

    def __init__(self, workload, placement, *, zero_stage: int | None = None,
                 sequence_parallel: bool | None = None, **kwargs):
        super().__init__(workload, placement, **kwargs)
        w = workload
        self.zero_stage = check_stage(zero_stage if zero_stage is not None else int(getattr(w, "zero_stage", 0) or 0))
        self.sp = bool(sequence_parallel if sequence_parallel is not None else getattr(w, "sequence_parallel", False))
        self._z3_ops: dict = {}

    # -- iteration ---------------------------------------------------------------------------------
    def build(self, it: int) -> list[Op]:
        self._z3_ops = {}
        ops = super().build(it)
        if self.zero_stage >= 1 and self.pl.dp > 1:      # pl.dp: DP×CP with context parallelism
            self._zero_postprocess(ops)
        return ops

    def _zero_postprocess(self, ops: list) -> None:
        """Bucket all-reduces → reduce-scatters; sharded optimizer; stages 1–2: parameter all-gathers."""
        chains: dict[str, list] = {}
        for op in ops:
            if op.kind == "dp" and op.collective == "allreduce":
                op.collective = "reducescatter"
                chains.setdefault(op.group, []).append(op)
            elif op.kind == "optimizer":
                op.duration_ps = round(op.duration_ps / self.pl.dp)
        if self.zero_stage == 3:
            return
        spec = self.w.collectives["dp"]
        for group in sorted(chains):
            rs = chains[group]
            ranks = rs[0].ranks
            prev = None
            for k, r_op in enumerate(rs):
                deps = [self.cur[r] for r in ranks] + [prev]
                prev = Op(f"{group}.param_allgather{k}", "dp", ranks, self.it, group=group, collective="allgather",
                          size_bytes=r_op.size_bytes, spec=spec, deps=deps)
                ops.append(prev)
            for r in ranks:
                self.cur[r] = prev

    # -- ZeRO-3 parameter gathers ------------------------------------------------------------------
    def _zero_gather(self, s: int, tg, j: int, layer: Layer, phase: str) -> None:
        w = self.w
        if self.zero_stage != 3 or self.pl.dp < 2:
            return
        size = sum(n for b in layer.blocks for _, n in b.tensors) * w.act_bytes
        if size <= 0:
            return
        for i, r in enumerate(tg):
            dgi = s * w.tp + i
            key = (dgi, j, layer.name, phase)
            op = self._z3_ops.get(key)
            if op is None:
                op = self._z3_ops[key] = self._add(Op(
                    f"dp{dgi}.{phase}{j}.{layer.name}.param_allgather", "dp", self.pl.groups["dp"][dgi], self.it,
                    group=f"dp{dgi}", collective="allgather", size_bytes=size, spec=w.collectives["dp"]))
            if self.cur[r] is not None:
                op.deps.append(self.cur[r])
            self.cur[r] = op

    def _fwd_layer(self, s, tg, gi, j, li, layer: Layer) -> None:
        self._zero_gather(s, tg, j, layer, "F")
        super()._fwd_layer(s, tg, gi, j, li, layer)

    def _bwd_layer(self, s, tg, gi, j, li, layer: Layer, last: bool) -> None:
        self._zero_gather(s, tg, j, layer, "B")
        super()._bwd_layer(s, tg, gi, j, li, layer, last)

    # -- sequence parallelism ----------------------------------------------------------------------
    def _tp_collective(self, tg, gi, name, coll, size, extra=None, **kwargs) -> None:
        if self.sp and coll == "allreduce" and kwargs.pop("sp", True):
            base = name[:-len(".allreduce")] if name.endswith(".allreduce") else name
            super()._tp_collective(tg, gi, base + ".reducescatter", "reducescatter", size, extra, **kwargs)
            super()._tp_collective(tg, gi, base + ".allgather", "allgather", size, **kwargs)
            return
        super()._tp_collective(tg, gi, name, coll, size, extra, **kwargs)
