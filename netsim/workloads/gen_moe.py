"""Mixture-of-experts blocks of the op graph: dispatch all-to-all, expert compute, combine.

A mixin of :class:`netsim.workloads.generate.OpGraphBuilder`.  An MoE block
runs, per micro-batch and phase (F, R, B), an all-to-all dispatch on the EP
group sized by the routed tokens of :func:`netsim.workloads.moe.route`, expert
compute proportional to the tokens the rank receives, and an all-to-all
combine (the transpose of the dispatch).  Left out: the router's compute and
the permutation kernels.
"""
from __future__ import annotations

from .moe import route
from .ops import PS_PER_S, Op


class MoePasses:
    """MoE blocks (mixin of the op-graph builder)."""

    # -- MoE -----------------------------------------------------------------------------------
    def _route(self, li: int, j: int, eg: int, ep: int) -> tuple:
        key = (self.it, li, j, eg)
        if key not in self._routes:
            if len(self._routes) > 4096:
                self._routes.clear()
            self._routes[key] = route(self.w.model.moe, ep, self._tokens(), self.it, (self.seed, li, j, eg))
        return self._routes[key]

    def _moe_block(self, s, tg, j, li, bi, blk, name: str, phase: str, last: bool) -> None:
        w, pl = self.w, self.pl
        r = tg[0]                                   # MoE implies tp = 1
        eg = pl.group_of["ep"][r]
        members = pl.groups["ep"][eg]
        me = members.index(r)
        tok, recv = self._route(li, j, eg, len(members))
        per_tok = w.model.hidden * w.act_bytes
        dispatch = [[n * per_tok for n in row] for row in tok]
        combine = [list(col) for col in zip(*dispatch)]
        first, second = (dispatch, combine)
        if len(members) > 1:
            self._a2a(r, members, eg, f"{name}.dispatch", ("a2a", phase, eg, j, li, 0), first)
        flops = blk.fwd_flops if phase != "B" else blk.bwd_flops
        self._compute(r, name, round(recv[me] * flops / self.rate * PS_PER_S))
        if last and phase == "B":
            self.ready[(r, li, bi)] = self.cur[r]
        if len(members) > 1:
            self._a2a(r, members, eg, f"{name}.combine", ("a2a", phase, eg, j, li, 1), second)

    def _a2a(self, r: int, members, eg: int, name: str, key: tuple, sizes) -> None:
        total = sum(map(sum, sizes))
        op, _ = self._shared_op(key, lambda: Op(f"ep{eg}.{name}", "ep", members, self.it, group=f"ep{eg}",
                                             collective="alltoall", size_bytes=total // len(members),
                                             spec=self.w.collectives["ep"], sizes=sizes))
        # this replica's rank joins the all-to-all; its compute waits for it
        op.deps.extend(self._deps(r))
        self.cur[r] = op
