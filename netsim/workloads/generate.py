"""Workload + placement → the operation graph of each iteration.

Per pipeline stage replica (a TP group), per micro-batch, following the stage's
schedule (:mod:`.schedules`: ``1f1b``, ``gpipe``, ``interleaved_1f1b``,
``zb_h1`` or ``custom``; with v virtual stages a device runs each pass per
model chunk, :mod:`.chunks`):

* forward: per layer, per block (attention, MLP, conv, …) one compute op per
  rank, then — when t > 1 — one TP all-reduce of b·s·h values (2 per
  transformer layer); the activation (b·s·h values, ÷ t with scatter/gather,
  then a TP all-gather on the receiving stage) goes to the next stage as one
  point-to-point op per TP rank;
* backward: per layer in reverse, the recomputed forward (with its 2 TP
  all-reduces) under activation recomputation, then the backward of each block
  in reverse with its TP all-reduce; the input gradient goes back one stage;
  with the backward split (W passes) this is the input-gradient pass B, and a
  separate W pass later runs each block's weight-gradient compute (no
  communication);
* point-to-point: between consecutive *virtual* stages (chunk c of device d is
  virtual stage c·p + d, so device p−1 sends to device 0 for the next chunk);
* DP: gradients are bucketed as PyTorch DDP does (reverse forward order, first
  bucket ``first_bucket_bytes``, then ``bucket_bytes``; a bucket closes once it
  reaches its cap) and each bucket's all-reduce starts when every rank of the
  DP group has finished the backward (of the last micro-batch) of the block
  that produces the bucket's last gradient — its W pass when the backward is
  split;
* optimizer step per rank, after its last backward and its last DP bucket.

MoE blocks get an all-to-all dispatch before and a combine after (forward,
recomputation, backward) on the EP group, sized by the routed tokens of
:func:`netsim.workloads.moe.route`, and expert compute proportional to the
tokens a rank receives; expert gradients are reduced over the
expert-data-parallel group.

With context parallelism (cp > 1, :mod:`.gen_context`) each rank runs its s/cp
tokens: compute, TP all-reduces and pipeline messages are 1/cp, and every
attention pass becomes ring attention over the CP group; replicas are then
the dp·cp positions of the placement's DP×CP axis.  Vocabulary-parallel
embedding/loss collectives and the embedding group's gradient all-reduce
(:mod:`.gen_embedding`) are added when the workload turns them on.  The
builder is assembled from mixins: :mod:`.gen_pipeline` (passes, layers,
blocks, point-to-point), :mod:`.gen_moe`, :mod:`.gen_dp` (DP sync and the
optimizer), :mod:`.gen_context` and :mod:`.gen_embedding`.

Extension points (used by :mod:`.extended` for ZeRO and sequence parallelism,
and by :mod:`netsim.whatif`): ``_fwd_layer`` / ``_bwd_layer`` (per-layer
collectives, e.g. ZeRO-3 parameter gathers), ``_tp_collective`` (every TP
collective), ``_dp_sync`` / ``_optimizer`` (gradient sync), ``build``'s op
list (post-processing), ``Op.delay_ps`` (latency injection) and
``Op.duration_ps`` (stragglers).  Shared state: ``cur[rank]`` = the op the
rank's next compute waits for, ``pending[rank]`` = extra ops it must also
wait for, ``it`` = the iteration being built.

Compute ops of a rank chain in stream order; a TP all-reduce blocks the
compute stream (Megatron's are synchronous); so does a pipeline send unless
``overlap_p2p`` (Megatron's ``--overlap-p2p-communication``) is set; DP buckets
chain on the DP stream.  The next iteration's ops of a rank wait for its
optimizer step.
"""
from __future__ import annotations

from .chunks import device_layers
from .gen_context import ContextParallel
from .gen_dp import DataParallelSync
from .gen_embedding import VocabEmbedding
from .gen_moe import MoePasses
from .gen_pipeline import PipelinePasses
from .layers import Layer
from .ops import PS_PER_S, Op
from .schedules import stage_orders
from .schema import Workload

__all__ = ["OpGraphBuilder", "ddp_buckets", "PS_PER_S"]


def ddp_buckets(sizes_bytes: list[int], first_cap: int, cap: int) -> list[list[int]]:
    """Split tensors (given in gradient-ready order) into DDP buckets.

    A bucket closes as soon as its size reaches the current cap (the first
    bucket's cap is ``first_cap``), as ``torch.distributed``'s
    ``_compute_bucket_assignment_by_size`` does.

    >>> ddp_buckets([600, 600, 600, 2000, 10], 1000, 2500)
    [[0, 1], [2, 3], [4]]
    """
    out, cur, size, limit = [], [], 0, first_cap
    for i, s in enumerate(sizes_bytes):
        cur.append(i)
        size += s
        if size >= limit:
            out.append(cur)
            cur, size, limit = [], 0, cap
    if cur:
        out.append(cur)
    return out


class OpGraphBuilder(PipelinePasses, MoePasses, DataParallelSync, ContextParallel, VocabEmbedding):
    """Builds the ops of iteration after iteration, chaining each rank's streams.

    Parameters
    ----------
    workload : Workload
    placement : Placement
    seed : int
        Seeds data-dependent choices (MoE routing).
    """

    def __init__(self, workload: Workload, placement, *, seed: int = 0):
        self.w, self.pl, self.seed = workload, placement, seed
        w = workload
        self.m = w.micro_batches
        self.b = w.micro_batch
        self.cp = getattr(w, "cp", 1)          # context parallelism: each rank computes 1/cp of the tokens
        self.rate = w.peak_flops * w.utilization
        layers = w.layers()
        body = [l for l in layers if l.role == "body"]
        first = [l for l in layers if l.role == "first"]
        last = [l for l in layers if l.role == "last"]
        self.v = getattr(w, "virtual_stages", 1)
        self.stage_layers: list[list[Layer]]
        self.stage_layers, self.spans = device_layers(body, first, last, w.stage_layer_counts(), w.pp, self.v)
        self.times = [[self._block_times(l) for l in sl] for sl in self.stage_layers]
        self._check_times()
        self.boundary_elems = [sl[-1].out_elems for sl in self.stage_layers]
        #: activation elements leaving each virtual stage (index c·p + d)
        self.vboundary = [0] * (w.pp * self.v)
        for d in range(w.pp):
            for sp in self.spans[d]:
                self.vboundary[sp.virtual] = self.stage_layers[d][sp.end - 1].out_elems
        self.cur: dict[int, Op | None] = {r: None for r in range(placement.world_size)}
        self.pending: dict[int, list] = {}
        self.chain: dict[tuple, Op] = {}
        if w.schedule == "custom":
            self.orders = [list(o) for o in w.schedule_actions]
        else:
            self.orders = stage_orders(w.schedule, w.pp, self.m, self.v)
        self.split = any(a.kind == "W" for o in self.orders for a in o)
        grad_kind = "W" if self.split else "B"
        #: per stage, the order positions of each chunk's last gradient-producing pass
        self.last_pass = [{max(i for i, a in enumerate(o) if a.kind == grad_kind and a.chunk == c)
                           for c in range(self.v)} for o in self.orders]
        self.buckets = [self._stage_buckets(s) for s in range(w.pp)]
        self._routes: dict[tuple, tuple] = {}

    # -- compute durations ---------------------------------------------------------------------
    def _check_times(self) -> None:
        """A block longer than :data:`netsim.values.MAX_OP_NS` (FLOPs over a tiny rate) is an input error."""
        from ..errors import WorkloadError
        from ..values import MAX_OP_NS
        for sl, times in zip(self.stage_layers, self.times):
            for layer, blocks in zip(sl, times):
                longest = max((max(t) for t in blocks), default=0)
                if longest > MAX_OP_NS * 1000:
                    raise WorkloadError(f"layer {layer.name!r}: one micro-batch's compute takes {longest / 1e12:.3g} s",
                                        source=getattr(self.w, "source", None), where="compute",
                                        value=f"peak_flops x utilization = {self.rate:g} FLOP/s",
                                        accepted="at most one day per op (86400 s); check the FLOP/s and "
                                                 "fwd_flops units")

    def _tokens(self) -> int:
        return self.b * getattr(self.w.model, "seq_len", 1)

    def _block_times(self, layer: Layer) -> list[tuple[int, int, int]]:
        """Per block (forward, backward, recompute) ps for one micro-batch on one rank.

        MoE blocks: for the mean routed load (b·s·top_k tokens per rank).
        """
        w = self.w
        lt = w.layer_times_ms
        if lt is not None and (layer.name in lt or "default" in lt):
            f_ms, b_ms = lt.get(layer.name, lt.get("default"))
            tot = layer.fwd_flops
            n = len(layer.blocks)
            out = []
            for blk in layer.blocks:
                share = blk.fwd_flops / tot if tot > 0 else 1 / n
                f = round(f_ms * 1e9 * share)
                out.append((f, round(b_ms * 1e9 * share), f if blk.recompute else 0))
            return out
        out = []
        for blk in layer.blocks:
            work = self.b
            if blk.moe:
                work = self._tokens() * w.model.moe.top_k
            if self.cp > 1:
                work = work / self.cp
            f = round(blk.fwd_flops * work / self.rate * PS_PER_S)
            out.append((f, round(blk.bwd_flops * work / self.rate * PS_PER_S), f if blk.recompute else 0))
        return out

    def _stage_buckets(self, s: int) -> list[tuple[int, list, str]]:
        """DDP buckets of stage ``s``: (bytes, [(layer, block) of its tensors], "dp" or "edp")."""
        out = []
        for attr, kind in (("tensors", "dp"), ("expert_tensors", "edp")):
            items = []
            for li in range(len(self.stage_layers[s]) - 1, -1, -1):
                layer = self.stage_layers[s][li]
                for bi in range(len(layer.blocks) - 1, -1, -1):
                    for _, n in reversed(getattr(layer.blocks[bi], attr)):
                        if n:
                            items.append((n * self.w.grad_bytes, (li, bi)))
            groups = ddp_buckets([x[0] for x in items], self.w.first_bucket_bytes, self.w.bucket_bytes)
            out += [(sum(items[i][0] for i in g), [items[i][1] for i in g], kind) for g in groups]
        return out

    def rank_params(self, rank: int) -> int:
        """Parameters rank ``rank`` holds (its stage's layers, its TP shard, its experts)."""
        return sum(l.params for l in self.stage_layers[self.pl.stage(rank)])

    def stage_compute_ps(self, s: int) -> tuple[int, int]:
        """(forward, backward incl. recompute) ps of one micro-batch on stage ``s``."""
        f = sum(t[0] for lt in self.times[s] for t in lt)
        b = sum(t[1] + (t[2] if self.w.recompute else 0) for lt in self.times[s] for t in lt)
        return f, b

    # -- graph ---------------------------------------------------------------------------------
    def build(self, it: int) -> list[Op]:
        """All ops of iteration ``it`` (dependencies into earlier iterations included)."""
        w, pl = self.w, self.pl
        self.ops: list[Op] = []
        self.it = it
        self.shared_ops: dict[tuple, Op] = {}
        self.ready: dict[tuple, Op] = {}   # (rank, layer idx, block idx) -> op after which grads exist
        for s in range(w.pp):
            for d in range(pl.dp):            # with cp > 1: the DP×CP positions
                tg = pl.groups["tp"][s * pl.dp + d]
                gi = s * pl.dp + d
                for k, a in enumerate(self.orders[s]):
                    self._pass(s, d, tg, gi, a.micro_batch, a.kind, last=k in self.last_pass[s], chunk=a.chunk)
        for s in range(w.pp):
            for i in range(w.tp):
                self._dp_sync(s, i)
        if getattr(w, "embedding_grad_allreduce", False):
            self._embedding_sync()
        for r in range(pl.world_size):
            self._optimizer(r)
        return self.ops

    def _add(self, op: Op) -> Op:
        self.ops.append(op)
        return op

    def _deps(self, r: int) -> list:
        return [self.cur[r]] + self.pending.pop(r, [])

    def _compute(self, r: int, name: str, ps: int) -> None:
        """Rank ``r``'s next compute op (none when it lasts 0 ps and waits for nothing new).

        The hot path of generation (one call per rank per block per pass): the same op as
        ``Op(name, "compute", (r,), it, duration_ps=ps, deps=self._deps(r))``, built directly.
        """
        cur = self.cur[r]
        extra = self.pending.pop(r, None)
        if extra:
            deps = [cur] + extra
            if None in deps:
                deps = [d for d in deps if d is not None]
        elif ps <= 0:
            return
        else:
            deps = [] if cur is None else [cur]
        op = Op.compute(name, r, self.it, ps, deps)
        self.ops.append(op)
        self.cur[r] = op

    def _tp_collective(self, tg, gi: int, name: str, coll: str, size: int, extra=None, sp: bool = True) -> None:
        """A collective of TP group ``tg``; it blocks the ranks' compute (Megatron's are synchronous).

        ``sp``: sequence parallelism may turn it into reduce-scatter + all-gather (:mod:`.extended`).
        """
        cur, pending = self.cur, self.pending
        deps = []
        for r in tg:                          # = [d for r in tg for d in self._deps(r)], inlined
            deps.append(cur[r])
            more = pending.pop(r, None)
            if more:
                deps += more
        if extra:
            deps += extra
        op = self._add(Op(f"tp{gi}.{name}", "tp", tg, self.it, group=f"tp{gi}", collective=coll,
                          size_bytes=size, spec=self.w.collectives["tp"], deps=deps))
        for r in tg:
            self.cur[r] = op

    def _shared_op(self, key: tuple, make) -> tuple[Op, bool]:
        """An op several replicas' generation reaches (p2p, all-to-alls): (op, created now)."""
        op = self.shared_ops.get(key)
        if op is None:
            op = self.shared_ops[key] = self._add(make())
            return op, True
        return op, False
