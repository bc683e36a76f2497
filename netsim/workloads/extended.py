"""Op-graph generation for MoE expert parallelism, ZeRO stages 1–3 and sequence parallelism.

:class:`ExtendedBuilder` is an :class:`~netsim.workloads.generate.OpGraphBuilder`
using the extension points that builder documents, so dense DP/TP/PP
workloads keep exactly the base generator's graph.

* **MoE** (:mod:`.moe`): an MoE layer's MLP block becomes the rank's
  ``num_experts/ep`` experts (FLOPs × top_k per token; expert parameters
  replace the MLP's, its LayerNorm stays).  Around it, all-to-alls in the
  rank's EP group (kind ``ep``, group ``ep<k>``): forward dispatch (``M``)
  and combine (``Mᵀ``), the same again in a recomputed forward, backward
  combine-grad (``M``) and dispatch-grad (``Mᵀ``); ``M`` from the seeded
  :class:`~.moe.RoutingModel` for (iteration, layer, micro-batch, EP group).
  Each TP rank dispatches the micro-batch's ``b·s`` tokens within its own
  EP group (EP groups are ``ep``-slices of a DP group; experts are
  tensor-sliced like the dense MLP).  Expert gradients are reduced in the
  *expert-data-parallel* group (the ranks holding the same experts: one per
  EP slice, ``dp/ep`` ranks, group ``edp<k>``), non-expert ones in the DP
  group.
* **ZeRO** (:mod:`.zero`): stage ≥ 1 turns each gradient bucket's
  all-reduce into a reduce-scatter and shards the optimizer step (1/d of the
  time); stages 1–2 all-gather the updated parameters bucket by bucket after
  the step (the next iteration waits for them); stage 3 instead all-gathers
  every layer's parameters (non-expert, fp16/bf16) before its forward and
  before its backward in every micro-batch — blocking, no prefetch (so an
  upper bound on its exposed time).
* **Sequence parallelism**: every TP all-reduce becomes a reduce-scatter
  followed by an all-gather of the same size.

A collective spanning several TP groups (an EP all-to-all, a ZeRO-3 gather)
is one op created by the first participant that reaches it; the others add
their stream position to its dependencies (as pipeline sends do).
"""
from __future__ import annotations

from .generate import OpGraphBuilder, ddp_buckets
from .layers import Block, Layer
from .moe import MoEConfig, RoutingModel, transpose
from .ops import Op

_EXPERT = "expert."


class ExtendedBuilder(OpGraphBuilder):
    """Op graphs with MoE/EP, ZeRO and sequence parallelism.

    Parameters
    ----------
    workload, placement
        As for :class:`OpGraphBuilder`.
    moe : MoEConfig, optional
        Default: ``workload.moe`` if the workload has it.
    zero_stage : int, optional
        0–3; default ``workload.zero_stage`` or 0.
    sequence_parallel : bool, optional
        Default ``workload.sequence_parallel`` or False.
    seed : int
        Seeds the MoE routing model.
    """

    def __init__(self, workload, placement, *, moe: MoEConfig | None = None, zero_stage: int | None = None,
                 sequence_parallel: bool | None = None, seed: int = 0):
        super().__init__(workload, placement)
        w, pl = workload, placement
        self.moe = moe if moe is not None else getattr(w, "moe", None)
        self.zero_stage = zero_stage if zero_stage is not None else int(getattr(w, "zero_stage", 0) or 0)
        self.sp = bool(sequence_parallel if sequence_parallel is not None else getattr(w, "sequence_parallel", False))
        self.routing = RoutingModel(self.moe, seed) if self.moe else None
        self.moe_at: dict[tuple, int] = {}
        self.ep_of: dict[int, tuple] = {}
        self.edp_groups: dict[tuple, list] = {}
        self._shared: dict = {}
        self._mats: dict = {}
        if self.moe:
            self._make_moe_layers()
            self._make_ep_groups()
        self.times = [[self._block_times(l) for l in sl] for sl in self.stage_layers]
        self.buckets = [self._stage_buckets(s) for s in range(w.pp)]
        self.expert_buckets = [self._stage_buckets(s, experts=True) for s in range(w.pp)]

    # -- construction ------------------------------------------------------------------------------
    def _make_moe_layers(self) -> None:
        cfg, model = self.moe, self.w.model
        idx = set(cfg.moe_layer_indices(model.layers))
        h = model.hidden
        for s, sl in enumerate(self.stage_layers):
            for li, layer in enumerate(sl):
                if layer.role != "body" or not layer.name.startswith("layer"):
                    continue
                i = int(layer.name[5:])
                if i not in idx:
                    continue
                attn, mlp = layer.blocks
                expert = mlp.params - 2 * h          # the MLP without its replicated LayerNorm
                moe = Block("moe", mlp.fwd_flops * cfg.top_k, mlp.bwd_flops * cfg.top_k, mlp.recompute,
                            mlp.tp_elems, (("ln2", 2 * h), (_EXPERT + "mlp", cfg.experts_per_rank * expert)))
                sl[li] = Layer(layer.name, (attn, moe), layer.out_elems, layer.role)
                self.moe_at[(s, li)] = i

    def _make_ep_groups(self) -> None:
        ep, pl, w = self.moe.ep, self.pl, self.w
        gid = 0
        for dgi, ranks in enumerate(pl.groups["dp"]):
            for k in range(w.dp // ep):
                grp = tuple(ranks[k * ep:(k + 1) * ep])
                for r in grp:
                    self.ep_of[r] = (gid, grp)
                gid += 1
            for q in range(ep):
                self.edp_groups[(dgi, q)] = [ranks[k * ep + q] for k in range(w.dp // ep)]

    def _stage_buckets(self, s: int, experts: bool = False):
        """DDP buckets of stage ``s`` over its non-expert (or, ``experts=True``, expert) tensors."""
        items = []
        for li in range(len(self.stage_layers[s]) - 1, -1, -1):
            layer = self.stage_layers[s][li]
            for bi in range(len(layer.blocks) - 1, -1, -1):
                for name, n in reversed(layer.blocks[bi].tensors):
                    if n and name.startswith(_EXPERT) == experts:
                        items.append((n * self.w.grad_bytes, (li, bi)))
        groups = ddp_buckets([x[0] for x in items], self.w.first_bucket_bytes, self.w.bucket_bytes)
        return [(sum(items[i][0] for i in g), [items[i][1] for i in g]) for g in groups]

    # -- iteration ---------------------------------------------------------------------------------
    def build(self, it: int) -> list[Op]:
        self._shared, self._mats = {}, {}
        ops = super().build(it)
        if self.zero_stage in (1, 2):
            self._param_allgathers(ops)
        return ops

    def _join_shared(self, key, r: int, make, *, take_pending: bool = False) -> Op:
        op = self._shared.get(key)
        if op is None:
            op = self._shared[key] = self._add(make())
        if self.cur[r] is not None:
            op.deps.append(self.cur[r])
        if take_pending:
            op.deps.extend(self._pending_extra.pop(r, None) or ())
        self.cur[r] = op
        return op

    # -- MoE all-to-alls ---------------------------------------------------------------------------
    def _matrix(self, gid: int, j: int, layer_index: int):
        key = (gid, j, layer_index)
        m = self._mats.get(key)
        if m is None:
            w = self.w
            tokens = self.b * w.model.seq_len
            m = self._mats[key] = self.routing.dispatch_matrix(self.it, layer_index, j, tokens, w.model.hidden,
                                                               w.act_bytes, group=gid)
        return m

    def _a2a(self, tg, j: int, s: int, li: int, phase: str, what: str) -> None:
        if self.moe.ep < 2:
            return
        lidx = self.moe_at[(s, li)]
        for r in tg:
            gid, grp = self.ep_of[r]

            def make(gid=gid, grp=grp):
                m = self._matrix(gid, j, lidx)
                mat = m if what in ("dispatch", "combine_grad") else transpose(m)
                return Op(f"ep{gid}.{phase}{j}.layer{lidx}.{what}", "ep", grp, self.it, group=f"ep{gid}",
                          collective="alltoall", size_bytes=sum(map(sum, mat)) // len(grp),
                          spec=self.w.collectives["ep"], sizes=mat)
            self._join_shared(("ep", gid, j, lidx, phase, what), r, make, take_pending=True)

    # -- ZeRO-3 parameter gathers ------------------------------------------------------------------
    def _zero_gather(self, s: int, tg, j: int, layer: Layer, phase: str) -> None:
        w = self.w
        if self.zero_stage != 3 or w.dp < 2:
            return
        size = sum(n for b in layer.blocks for name, n in b.tensors if not name.startswith(_EXPERT)) * w.act_bytes
        if size <= 0:
            return
        for i, r in enumerate(tg):
            dgi = s * w.tp + i

            def make(dgi=dgi):
                return Op(f"dp{dgi}.{phase}{j}.{layer.name}.param_allgather", "dp", self.pl.groups["dp"][dgi],
                          self.it, group=f"dp{dgi}", collective="allgather", size_bytes=size,
                          spec=w.collectives["dp"])
            self._join_shared(("z3", dgi, j, layer.name, phase), r, make)

    # -- layers ------------------------------------------------------------------------------------
    def _fwd_layer(self, s, tg, gi, j, li, layer: Layer) -> None:
        self._zero_gather(s, tg, j, layer, "F")
        if (s, li) not in self.moe_at:
            return super()._fwd_layer(s, tg, gi, j, li, layer)
        attn, moe = layer.blocks
        self._run_block(s, tg, gi, f"F{j}.{layer.name}.attn", 0, li, 0, attn.tp_elems)
        self._a2a(tg, j, s, li, "F", "dispatch")
        self._run_block(s, tg, gi, f"F{j}.{layer.name}.moe", 0, li, 1, moe.tp_elems)
        self._a2a(tg, j, s, li, "F", "combine")

    def _bwd_layer(self, s, tg, gi, j, li, layer: Layer, last: bool) -> None:
        self._zero_gather(s, tg, j, layer, "B")
        if (s, li) not in self.moe_at:
            return super()._bwd_layer(s, tg, gi, j, li, layer, last)
        attn, moe = layer.blocks
        if self.w.recompute:
            if attn.recompute:
                self._run_block(s, tg, gi, f"R{j}.{layer.name}.attn", 2, li, 0, attn.tp_elems)
            if moe.recompute:
                self._a2a(tg, j, s, li, "R", "dispatch")
                self._run_block(s, tg, gi, f"R{j}.{layer.name}.moe", 2, li, 1, moe.tp_elems)
                self._a2a(tg, j, s, li, "R", "combine")
        self._a2a(tg, j, s, li, "B", "combine_grad")
        self._bwd_block(s, tg, gi, j, li, 1, layer, last)
        self._a2a(tg, j, s, li, "B", "dispatch_grad")
        self._bwd_block(s, tg, gi, j, li, 0, layer, last)

    def _bwd_block(self, s, tg, gi, j, li, bi, layer: Layer, last: bool) -> None:
        blk = layer.blocks[bi]
        name = f"B{j}.{layer.name}.{blk.name}"
        for r in tg:
            extra = self._pending_extra.pop(r, None)
            self._compute(r, name, self.times[s][li][bi][1], extra)
            if last:
                self.ready[(r, li, bi)] = self.cur[r]
        if blk.tp_elems and self.w.tp > 1:
            self._tp_collective(tg, gi, name + ".allreduce", "allreduce", blk.tp_elems * self.b * self.w.act_bytes)

    # -- sequence parallelism ----------------------------------------------------------------------
    def _tp_collective(self, tg, gi, name, coll, size, extra=None) -> None:
        if self.sp and coll == "allreduce":
            base = name[:-len(".allreduce")] if name.endswith(".allreduce") else name
            super()._tp_collective(tg, gi, base + ".reducescatter", "reducescatter", size, extra)
            super()._tp_collective(tg, gi, base + ".allgather", "allgather", size)
            return
        super()._tp_collective(tg, gi, name, coll, size, extra)

    # -- gradient sync -----------------------------------------------------------------------------
    def _bucket_ops(self, ranks, buckets, group: str, key, coll: str) -> None:
        for k, (size, blocks) in enumerate(buckets):
            li, bi = blocks[-1]
            deps = [self.ready.get((r, li, bi)) or self.cur[r] for r in ranks]
            deps.append(self.dp_last.get(key))
            op = self._add(Op(f"{group}.bucket{k}", "dp", tuple(ranks), self.it, group=group, collective=coll,
                              size_bytes=size, spec=self.w.collectives["dp"], deps=deps))
            self.dp_last[key] = op

    def _dp_sync(self, s: int, i: int) -> None:
        w = self.w
        coll = "allreduce" if self.zero_stage == 0 else "reducescatter"
        gi = s * w.tp + i
        if w.dp >= 2:
            self._bucket_ops(self.pl.groups["dp"][gi], self.buckets[s], f"dp{gi}", gi, coll)
        if self.moe:
            for q in range(self.moe.ep):
                ranks = self.edp_groups[(gi, q)]
                if len(ranks) >= 2 and self.expert_buckets[s]:
                    self._bucket_ops(ranks, self.expert_buckets[s], f"edp{gi * self.moe.ep + q}", ("e", gi, q), coll)

    def _optimizer(self, r: int) -> None:
        super()._optimizer(r)
        op = self.cur[r]
        if self.moe:
            s, i, d = self.pl.coords[r][2], self.pl.coords[r][0], self.pl.coords[r][1]
            last = self.dp_last.get(("e", s * self.w.tp + i, d % self.moe.ep))
            if last is not None:
                op.deps.append(last)
        if self.zero_stage >= 1 and self.w.dp > 1:
            op.duration_ps = round(op.duration_ps / self.w.dp)

    def _param_allgathers(self, ops: list) -> None:
        """ZeRO-1/2: all-gather the updated parameters after the optimizer step, bucket by bucket."""
        w = self.w
        if w.dp < 2:
            return
        groups = []
        for s in range(w.pp):
            for i in range(w.tp):
                gi = s * w.tp + i
                groups.append((self.pl.groups["dp"][gi], self.buckets[s], f"dp{gi}"))
                if self.moe:
                    for q in range(self.moe.ep):
                        ranks = self.edp_groups[(gi, q)]
                        if len(ranks) >= 2:
                            groups.append((ranks, self.expert_buckets[s], f"edp{gi * self.moe.ep + q}"))
        for ranks, buckets, group in groups:
            prev = None
            for k, (size, _) in enumerate(buckets):
                deps = [self.cur[r] for r in ranks] + [prev]
                prev = Op(f"{group}.param_allgather{k}", "dp", tuple(ranks), self.it, group=group,
                          collective="allgather", size_bytes=size, spec=w.collectives["dp"], deps=deps)
                ops.append(prev)
            if prev is not None:
                for r in ranks:
                    self.cur[r] = prev


def make_builder(workload, placement, *, seed: int = 0) -> OpGraphBuilder:
    """The base builder for plain DP/TP/PP workloads, :class:`ExtendedBuilder` when MoE/ZeRO/SP is on."""
    if getattr(workload, "moe", None) or getattr(workload, "zero_stage", 0) or getattr(workload, "sequence_parallel",
                                                                                       False):
        return ExtendedBuilder(workload, placement, seed=seed)
    return OpGraphBuilder(workload, placement)
