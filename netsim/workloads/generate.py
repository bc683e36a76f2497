"""Workload + placement → the operation graph of each iteration.

Per pipeline stage replica (a TP group), per micro-batch, following the stage's
schedule (``1f1b``/``gpipe``):

* forward: per layer, per block (attention, MLP, conv, …) one compute op per
  rank, then — when t > 1 — one TP all-reduce of b·s·h values (2 per
  transformer layer); the activation (b·s·h values, ÷ t with scatter/gather,
  then a TP all-gather on the receiving stage) goes to the next stage as one
  point-to-point op per TP rank;
* backward: per layer in reverse, the recomputed forward (with its 2 TP
  all-reduces) under activation recomputation, then the backward of each block
  in reverse with its TP all-reduce; the input gradient goes back one stage;
* DP: gradients are bucketed as PyTorch DDP does (reverse forward order, first
  bucket ``first_bucket_bytes``, then ``bucket_bytes``; a bucket closes once it
  reaches its cap) and each bucket's all-reduce starts when every rank of the
  DP group has finished the backward (of the last micro-batch) of the block
  that produces the bucket's last gradient;
* optimizer step per rank, after its last backward and its last DP bucket.

Compute ops of a rank chain in stream order; a TP all-reduce blocks the
compute stream (Megatron's are synchronous); so does a pipeline send unless
``overlap_p2p`` (Megatron's ``--overlap-p2p-communication``) is set; DP buckets
chain on the DP stream.  The next iteration's ops of a
rank wait for its optimizer step.  Extension points for issue 5: ``_fwd_layer``
/ ``_bwd_layer`` (per-layer collectives such as MoE all-to-alls, ZeRO-3
all-gathers), ``_dp_sync`` (ZeRO reduce-scatter/all-gather) and
``Op.delay_ps`` (what-if latency injection).
"""
from __future__ import annotations

from .layers import Layer
from .ops import Op
from .schedules import schedule
from .schema import CollectiveSpec, Workload

PS_PER_S = 10**12
P2P_SPEC = CollectiveSpec("ring", 1, None)


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


class OpGraphBuilder:
    """Builds the ops of iteration after iteration, chaining each rank's streams.

    Parameters
    ----------
    workload : Workload
    placement : Placement
    """

    def __init__(self, workload: Workload, placement):
        self.w, self.pl = workload, placement
        w = workload
        self.m = w.micro_batches
        self.b = w.micro_batch
        layers = w.layers()
        body = [l for l in layers if l.role == "body"]
        first = [l for l in layers if l.role == "first"]
        last = [l for l in layers if l.role == "last"]
        counts = w.stage_layer_counts()
        self.stage_layers: list[list[Layer]] = []
        start = 0
        for s, n in enumerate(counts):
            sl = body[start:start + n]
            start += n
            if s == 0:
                sl = first + sl
            if s == len(counts) - 1:
                sl = sl + last
            self.stage_layers.append(sl)
        self.times = [[self._block_times(l) for l in sl] for sl in self.stage_layers]
        self.boundary_elems = [sl[-1].out_elems for sl in self.stage_layers]
        self.cur: dict[int, Op | None] = {r: None for r in range(placement.world_size)}
        self.dp_last: dict[int, Op | None] = {}
        self.orders = [schedule(w.schedule, s, w.pp, self.m) for s in range(w.pp)]
        self.buckets = [self._stage_buckets(s) for s in range(w.pp)]

    # -- compute durations ---------------------------------------------------------------------
    def _block_times(self, layer: Layer) -> list[tuple[int, int, int]]:
        """Per block (forward, backward, recompute) ps for one micro-batch on one rank."""
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
        rate = w.peak_flops * w.utilization
        out = []
        for blk in layer.blocks:
            f = round(blk.fwd_flops * self.b / rate * PS_PER_S)
            out.append((f, round(blk.bwd_flops * self.b / rate * PS_PER_S), f if blk.recompute else 0))
        return out

    def _stage_buckets(self, s: int) -> list[tuple[int, list[tuple[int, int]]]]:
        """DDP buckets of stage ``s``: (bytes, [(layer index, block index) of its tensors])."""
        items = []
        for li in range(len(self.stage_layers[s]) - 1, -1, -1):
            layer = self.stage_layers[s][li]
            for bi in range(len(layer.blocks) - 1, -1, -1):
                for _, n in reversed(layer.blocks[bi].tensors):
                    if n:
                        items.append((n * self.w.grad_bytes, (li, bi)))
        groups = ddp_buckets([x[0] for x in items], self.w.first_bucket_bytes, self.w.bucket_bytes)
        return [(sum(items[i][0] for i in g), [items[i][1] for i in g]) for g in groups]

    def rank_params(self, rank: int) -> int:
        """Parameters rank ``rank`` holds (its stage's layers, its TP shard)."""
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
        self.p2p: dict[tuple, Op] = {}
        self.ready: dict[tuple, Op] = {}   # (rank, layer idx, block idx) -> op after which grads exist
        for s in range(w.pp):
            for d in range(w.dp):
                tg = pl.groups["tp"][s * w.dp + d]
                gi = s * w.dp + d
                for kind, j in self.orders[s]:
                    if kind == "F":
                        self._forward(s, d, tg, gi, j)
                    else:
                        self._backward(s, d, tg, gi, j, last=(j == self.orders[s][-1][1]))
        for s in range(w.pp):
            for i in range(w.tp):
                self._dp_sync(s, i)
        for r in range(pl.world_size):
            self._optimizer(r)
        return self.ops

    def _add(self, op: Op) -> Op:
        self.ops.append(op)
        return op

    def _compute(self, r: int, name: str, ps: int, extra=None) -> None:
        deps = [self.cur[r]] + (extra or [])
        if ps <= 0 and not extra:
            return
        self.cur[r] = self._add(Op(name, "compute", (r,), self.it, duration_ps=ps, deps=deps))

    def _tp_collective(self, tg, gi: int, name: str, coll: str, size: int, extra=None) -> None:
        deps = [self.cur[r] for r in tg] + (extra or [])
        op = self._add(Op(f"tp{gi}.{name}", "tp", tg, self.it, group=f"tp{gi}", collective=coll,
                          size_bytes=size, spec=self.w.collectives["tp"], deps=deps))
        for r in tg:
            self.cur[r] = op

    def _p2p(self, key: tuple, src: int, dst: int, name: str, size: int) -> Op:
        op = self.p2p.get(key)
        if op is None:
            pipe = self.pl.group_of["pp"][src]
            op = self._add(Op(f"pp{pipe}.{name}", "pp", (src, dst), self.it, group=f"pp{pipe}",
                              collective="send", size_bytes=size, spec=self.w.collectives["pp"]))
            self.p2p[key] = op
        return op

    def _recv(self, s: int, d: int, tg, gi: int, j: int, direction: str, peer_stage: int) -> None:
        """Make the stage's compute wait for the activation/gradient of micro-batch ``j``."""
        w, pl = self.w, self.pl
        b_stage = min(s, peer_stage)
        full = self.boundary_elems[b_stage] * self.b * w.act_bytes
        size = full // w.tp if (w.scatter_gather and w.tp > 1) else full
        recvs = []
        for i, r in enumerate(tg):
            peer = pl.rank_at(i, d, peer_stage)
            key = (direction, b_stage, j, d, i)
            tag = f"{direction}{j}.s{peer_stage}-s{s}"
            recvs.append(self._p2p(key, peer, r, tag, size))
        if w.scatter_gather and w.tp > 1:
            self._tp_collective(tg, gi, f"{direction}{j}.s{s}.gather", "allgather", full, extra=recvs)
        else:
            for r, op in zip(tg, recvs):
                self.cur[r] = self._join(r, op)

    def _join(self, r: int, op: Op) -> Op:
        """A zero-time marker is not needed: the next compute op carries the extra dependency."""
        self._pending_extra.setdefault(r, []).append(op)
        return self.cur[r]

    def _send(self, s: int, d: int, tg, j: int, direction: str, peer_stage: int) -> None:
        w, pl = self.w, self.pl
        b_stage = min(s, peer_stage)
        full = self.boundary_elems[b_stage] * self.b * w.act_bytes
        size = full // w.tp if (w.scatter_gather and w.tp > 1) else full
        for i, r in enumerate(tg):
            peer = pl.rank_at(i, d, peer_stage)
            key = (direction, b_stage, j, d, i)
            op = self._p2p(key, r, peer, f"{direction}{j}.s{s}-s{peer_stage}", size)
            op.deps.append(self.cur[r])
            if not w.overlap_p2p:
                self.cur[r] = op          # Megatron's p2p is synchronous: the sender waits for its send

    def _run_block(self, s, tg, gi, name: str, ps_index: int, li: int, bi: int, tp_elems: int) -> None:
        for r in tg:
            ps = self.times[s][li][bi][ps_index]
            extra = self._pending_extra.pop(r, None)
            self._compute(r, name, ps, extra)
        if tp_elems and self.w.tp > 1:
            self._tp_collective(tg, gi, name + ".allreduce", "allreduce", tp_elems * self.b * self.w.act_bytes)

    def _forward(self, s, d, tg, gi, j) -> None:
        self._pending_extra = {}
        if s > 0:
            self._recv(s, d, tg, gi, j, "F", s - 1)
        for li, layer in enumerate(self.stage_layers[s]):
            self._fwd_layer(s, tg, gi, j, li, layer)
        self._flush_extra(tg, f"F{j}.recv")
        if s < self.w.pp - 1:
            self._send(s, d, tg, j, "F", s + 1)

    def _fwd_layer(self, s, tg, gi, j, li, layer: Layer) -> None:
        for bi, blk in enumerate(layer.blocks):
            self._run_block(s, tg, gi, f"F{j}.{layer.name}.{blk.name}", 0, li, bi, blk.tp_elems)

    def _backward(self, s, d, tg, gi, j, last: bool) -> None:
        self._pending_extra = {}
        if s < self.w.pp - 1:
            self._recv(s, d, tg, gi, j, "B", s + 1)
        for li in range(len(self.stage_layers[s]) - 1, -1, -1):
            self._bwd_layer(s, tg, gi, j, li, self.stage_layers[s][li], last)
        self._flush_extra(tg, f"B{j}.recv")
        if s > 0:
            self._send(s, d, tg, j, "B", s - 1)

    def _bwd_layer(self, s, tg, gi, j, li, layer: Layer, last: bool) -> None:
        if self.w.recompute:
            for bi, blk in enumerate(layer.blocks):
                if blk.recompute:
                    self._run_block(s, tg, gi, f"R{j}.{layer.name}.{blk.name}", 2, li, bi, blk.tp_elems)
        for bi in range(len(layer.blocks) - 1, -1, -1):
            blk = layer.blocks[bi]
            name = f"B{j}.{layer.name}.{blk.name}"
            for r in tg:
                extra = self._pending_extra.pop(r, None)
                self._compute(r, name, self.times[s][li][bi][1], extra)
                if last:
                    self.ready[(r, li, bi)] = self.cur[r]
            if blk.tp_elems and self.w.tp > 1:
                self._tp_collective(tg, gi, name + ".allreduce", "allreduce", blk.tp_elems * self.b * self.w.act_bytes)

    def _flush_extra(self, tg, name: str) -> None:
        """A stage with no compute left still has to wait for what it received."""
        for r in tg:
            extra = self._pending_extra.pop(r, None)
            if extra:
                self.cur[r] = self._add(Op(name, "compute", (r,), self.it, duration_ps=0,
                                           deps=[self.cur[r]] + extra))

    def _dp_sync(self, s: int, i: int) -> None:
        """Gradient all-reduce per DDP bucket of DP group (stage s, TP index i)."""
        w, pl = self.w, self.pl
        if w.dp < 2:
            return
        gi = s * w.tp + i
        ranks = pl.groups["dp"][gi]
        for k, (size, blocks) in enumerate(self.buckets[s]):
            li, bi = blocks[-1]
            deps = [self.ready.get((r, li, bi)) or self.cur[r] for r in ranks]
            deps.append(self.dp_last.get(gi))
            op = self._add(Op(f"dp{gi}.bucket{k}", "dp", ranks, self.it, group=f"dp{gi}", collective="allreduce",
                              size_bytes=size, spec=w.collectives["dp"], deps=deps))
            self.dp_last[gi] = op

    def _optimizer(self, r: int) -> None:
        w = self.w
        deps = [self.cur[r]]
        s, i = self.pl.coords[r][2], self.pl.coords[r][0]
        if w.dp > 1:
            deps.append(self.dp_last.get(s * w.tp + i))
        if w.optimizer_ns is not None:
            ps = w.optimizer_ns * 1000
        else:
            ps = round(self.rank_params(r) * w.optimizer_bytes_per_param / w.mem_bw_Bps * PS_PER_S)
        self.cur[r] = self._add(Op("optimizer", "optimizer", (r,), self.it, duration_ps=ps, deps=deps))
