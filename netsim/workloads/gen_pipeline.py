"""Pipeline passes of the op graph: forward/backward/W passes, layers, blocks, point-to-point.

A mixin of :class:`netsim.workloads.generate.OpGraphBuilder` (it uses the
builder's state: ``w``, ``pl``, ``b``, ``v``, ``spans``, ``stage_layers``,
``times``, ``vboundary``, ``cur``, ``pending``).  Per pass of one micro-batch
on one model chunk: receive the activation (F) or gradient (B) from the
neighbouring virtual stage, run each layer's blocks (compute per rank, a TP
all-reduce after attention and MLP when t > 1; the recomputed forward before
the backward under activation recomputation), send the result on.  Megatron's
point-to-point is synchronous (the sender waits) unless ``overlap_p2p``.
Left out: the pipeline's warm-up allocation and kernel launch costs.
"""
from __future__ import annotations

from .chunks import split_ps
from .layers import Layer
from .ops import Op


class PipelinePasses:
    """Pipeline passes (mixin of the op-graph builder)."""

    # -- pipeline ------------------------------------------------------------------------------
    def _pp_size(self, b_stage: int) -> int:
        """Bytes sent across the boundary after virtual stage ``b_stage`` (per TP rank).

        1/t of the activation with scatter-gather, and with sequence parallelism,
        where the boundary activation is already split over the sequence (Megatron's
        p2p tensor shape is ``seq_length // tp``; no gather follows).
        """
        w = self.w
        full = self.vboundary[b_stage] // self.cp * self.b * w.act_bytes
        return full // w.tp if ((w.scatter_gather or getattr(self, "sp", False)) and w.tp > 1) else full

    def _p2p(self, key: tuple, src: int, dst: int, name: str, size: int) -> Op:
        pipe = self.pl.group_of["pp"][src]
        op, _ = self._shared_op(("pp",) + key, lambda: Op(f"pp{pipe}.{name}", "pp", (src, dst), self.it,
                                                          group=f"pp{pipe}", collective="send", size_bytes=size,
                                                          spec=self.w.collectives["pp"]))
        return op

    def _recv(self, s: int, d: int, tg, gi: int, j: int, direction: str, peer_stage: int) -> None:
        """Make virtual stage ``s``'s compute wait for the activation/gradient of micro-batch ``j``."""
        w, pl = self.w, self.pl
        b_stage = min(s, peer_stage)
        recvs = []
        for i, r in enumerate(tg):
            peer = pl.rank_at(i, d, peer_stage % w.pp)
            recvs.append(self._p2p((direction, b_stage, j, d, i), peer, r, f"{direction}{j}.s{peer_stage}-s{s}",
                                   self._pp_size(b_stage)))
        for r, op in zip(tg, recvs):
            self.pending.setdefault(r, []).append(op)
        if w.scatter_gather and w.tp > 1 and not getattr(self, "sp", False):
            full = self.vboundary[b_stage] // self.cp * self.b * w.act_bytes
            self._tp_collective(tg, gi, f"{direction}{j}.s{s}.gather", "allgather", full)

    def _send(self, s: int, d: int, tg, j: int, direction: str, peer_stage: int) -> None:
        w, pl = self.w, self.pl
        b_stage = min(s, peer_stage)
        for i, r in enumerate(tg):
            peer = pl.rank_at(i, d, peer_stage % w.pp)
            op = self._p2p((direction, b_stage, j, d, i), r, peer, f"{direction}{j}.s{s}-s{peer_stage}",
                           self._pp_size(b_stage))
            op.deps.extend(self._deps(r))
            if not w.overlap_p2p:
                self.cur[r] = op          # Megatron's p2p is synchronous: the sender waits for its send

    # -- passes, layers, blocks -----------------------------------------------------------------
    def _pass(self, s, d, tg, gi, j, kind: str, last: bool, chunk: int = 0) -> None:
        """Pass ``kind`` (F, B or W) of micro-batch ``j`` on chunk ``chunk`` of device ``s``, replica ``d``.

        ``last``: this pass produces the chunk's final gradients of the iteration.
        """
        sp = self.spans[s][chunk]
        u, top = sp.virtual, self.w.pp * self.v - 1     # the virtual stage and the last one
        if kind == "F":
            if u > 0:
                self._recv(u, d, tg, gi, j, "F", u - 1)
            for li in range(sp.start, sp.end):
                self._fwd_layer(s, tg, gi, j, li, self.stage_layers[s][li])
            if u < top:
                self._send(u, d, tg, j, "F", u + 1)
        elif kind == "B":
            if u < top:
                self._recv(u, d, tg, gi, j, "B", u + 1)
            for li in range(sp.end - 1, sp.start - 1, -1):
                self._bwd_layer(s, tg, gi, j, li, self.stage_layers[s][li], last and not self.split)
            if u > 0:
                self._send(u, d, tg, j, "B", u - 1)
        else:
            for li in range(sp.end - 1, sp.start - 1, -1):
                layer = self.stage_layers[s][li]
                for bi in range(len(layer.blocks) - 1, -1, -1):
                    self._block(s, tg, gi, j, li, bi, layer.blocks[bi], layer, "W", last)

    def _fwd_layer(self, s, tg, gi, j, li, layer: Layer) -> None:
        """Forward of one layer for micro-batch ``j`` on TP group ``tg``."""
        for bi, blk in enumerate(layer.blocks):
            self._block(s, tg, gi, j, li, bi, blk, layer, "F", False)

    def _bwd_layer(self, s, tg, gi, j, li, layer: Layer, last: bool) -> None:
        """Recomputation (if on) and backward of one layer; ``last``: the iteration's last micro-batch."""
        if self.w.recompute:
            for bi, blk in enumerate(layer.blocks):
                if blk.recompute:
                    self._block(s, tg, gi, j, li, bi, blk, layer, "R", False)
        for bi in range(len(layer.blocks) - 1, -1, -1):
            self._block(s, tg, gi, j, li, bi, layer.blocks[bi], layer, "B", last)

    def _block(self, s, tg, gi, j, li, bi, blk, layer, phase: str, last: bool) -> None:
        name = f"{phase}{j}.{layer.name}.{blk.name}"
        if blk.moe:
            self._moe_block(s, tg, j, li, bi, blk, name, phase, last, gi)
            return
        if self.cp > 1 and blk.name == "attn" and phase != "W":    # W (weight gradients): no ring traffic
            self._ring_attention(s, tg, li, bi, name, phase, last)
        else:
            ps = self._phase_ps(s, li, bi, phase, bool(blk.tensors))
            for r in tg:
                self._compute(r, name, ps)
                if last and phase in ("B", "W"):
                    self.ready[(r, li, bi)] = self.cur[r]
        if blk.tp_elems and self.w.tp > 1 and phase != "W":
            self._tp_collective(tg, gi, name + ".allreduce", "allreduce",
                                blk.tp_elems // self.cp * self.b * self.w.act_bytes)
        if layer.role != "body" and getattr(self.w, "vocab_parallel", False):
            self._vocab_collectives(tg, gi, layer, name, phase)

    def _phase_ps(self, s: int, li: int, bi: int, phase: str, has_params: bool) -> int:
        """Compute ps of one block's pass: F, R (recompute), B (whole, or input gradient if split) or W."""
        f, b, r = self.times[s][li][bi]
        if phase == "F":
            return f
        if phase == "R":
            return r
        if not self.split:
            return b
        b_in, w = split_ps(b, has_params)
        return b_in if phase == "B" else w
