"""Mixture-of-experts blocks of the op graph: dispatch all-to-all, expert compute, combine.

A mixin of :class:`netsim.workloads.generate.OpGraphBuilder`.  An MoE block
runs, per micro-batch and phase (F, R, B), an all-to-all dispatch on the EP
group sized by the routed tokens of :func:`netsim.workloads.moe.route`, expert
compute proportional to the tokens the rank receives, and an all-to-all
combine (the transpose of the dispatch).  With t > 1 (expert tensor
parallelism = TP, Megatron-Core's default ``--expert-tensor-parallel-size``)
each TP rank runs its own all-to-alls on its EP group with the same routing,
computes 1/t of the expert FLOPs, and a TP all-reduce of the received tokens ×
h sums the partial expert outputs.  With context parallelism (cp > 1) a
rank routes its b·s/cp tokens.  Left out: the router's compute, the
permutation kernels, an expert TP degree other than t.
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
            tokens = self._tokens() // self.cp       # context parallelism: the rank's s/cp of every sequence
            self._routes[key] = route(self.w.model.moe, ep, tokens, self.it, (self.seed, li, j, eg))
        return self._routes[key]

    def _moe_block(self, s, tg, j, li, bi, blk, name: str, phase: str, last: bool, gi: int | None = None) -> None:
        """Dispatch, expert compute and combine of one MoE pass on every rank of TP group ``tg``.

        With t > 1 (expert tensor parallelism = TP) every TP rank routes the
        same tokens (the routing of TP index 0's EP group) over its own EP
        group, computes 1/t of each received token's expert FLOPs, and a TP
        all-reduce of the received tokens × h sums the partial outputs (after
        the experts, in every phase, like a dense MLP's).
        """
        w, pl = self.w, self.pl
        eg0 = pl.group_of["ep"][tg[0]]
        n_ep = len(pl.groups["ep"][eg0])
        tok, recv = self._route(li, j, eg0, n_ep)
        per_tok = w.model.hidden * w.act_bytes
        dispatch = [[n * per_tok for n in row] for row in tok]
        combine = [list(col) for col in zip(*dispatch)]
        flops = blk.fwd_flops if phase != "B" else blk.bwd_flops
        for r in tg:
            eg = pl.group_of["ep"][r]
            members = pl.groups["ep"][eg]
            me = members.index(r)
            if n_ep > 1:
                self._a2a(r, members, eg, f"{name}.dispatch", ("a2a", phase, eg, j, li, 0), dispatch)
            self._compute(r, name, round(recv[me] * flops / self.rate * PS_PER_S))
            if last and phase == "B":
                self.ready[(r, li, bi)] = self.cur[r]
        if len(tg) > 1:
            me = pl.groups["ep"][eg0].index(tg[0])
            self._tp_collective(tg, gi, name + ".allreduce", "allreduce", recv[me] * per_tok)
        if n_ep > 1:
            for r in tg:
                eg = pl.group_of["ep"][r]
                self._a2a(r, pl.groups["ep"][eg], eg, f"{name}.combine", ("a2a", phase, eg, j, li, 1), combine)

    def _a2a(self, r: int, members, eg: int, name: str, key: tuple, sizes) -> None:
        total = sum(map(sum, sizes))
        op, _ = self._shared_op(key, lambda: Op(f"ep{eg}.{name}", "ep", members, self.it, group=f"ep{eg}",
                                             collective="alltoall", size_bytes=total // len(members),
                                             spec=self.w.collectives["ep"], sizes=sizes))
        # this replica's rank joins the all-to-all; its compute waits for it
        op.deps.extend(self._deps(r))
        self.cur[r] = op
