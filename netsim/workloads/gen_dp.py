"""Data-parallel gradient synchronization and the optimizer step of the op graph.

A mixin of :class:`netsim.workloads.generate.OpGraphBuilder`: per DDP bucket
of a stage, one all-reduce on the DP group of each TP index (and on the
expert-data-parallel groups for expert gradients), chained on the group's DP
stream and started when every member has produced the bucket's last
gradient; then one optimizer step per rank (its duration from the parameters
it holds and the HBM bandwidth, or the workload's fixed time).  Left out:
gradient clipping's norm all-reduce.
"""
from __future__ import annotations

from .ops import PS_PER_S, Op


class DataParallelSync:
    """DP gradient sync and optimizer (mixin of the op-graph builder)."""

    # -- data parallelism ----------------------------------------------------------------------
    def _dp_groups(self, s: int, i: int, kind: str) -> list[tuple[int, str, tuple]]:
        w, pl = self.w, self.pl
        g = s * w.tp + i
        if kind == "dp":
            return [(g, f"dp{g}", pl.groups["dp"][g])]
        return [(g * w.ep + k, f"edp{g * w.ep + k}", pl.groups["edp"][g * w.ep + k]) for k in range(w.ep)]

    def _dp_sync(self, s: int, i: int) -> None:
        """Gradient all-reduce per DDP bucket of DP group (stage s, TP index i) and its expert-DP groups."""
        w = self.w
        for k, (size, blocks, kind) in enumerate(self.buckets[s]):
            for gidx, gname, ranks in self._dp_groups(s, i, kind):
                if len(ranks) < 2:
                    continue
                li, bi = blocks[-1]
                deps = [self.ready.get((r, li, bi)) or self.cur[r] for r in ranks]
                deps.append(self.chain.get(("dp", gname)))
                op = self._add(Op(f"{gname}.bucket{k}", "dp", ranks, self.it, group=gname, collective="allreduce",
                                  size_bytes=size, spec=w.collectives["dp"], deps=deps))
                self.chain[("dp", gname)] = op

    def _optimizer(self, r: int) -> None:
        w = self.w
        deps = self._deps(r)
        s, i = self.pl.coords[r][2], self.pl.coords[r][0]
        for kind in ("dp", "edp"):
            for _, gname, ranks in self._dp_groups(s, i, kind):
                if r in ranks:
                    deps.append(self.chain.get(("dp", gname)))
        deps.append(getattr(self, "emb_sync", {}).get(r))      # the embedding group's all-reduce, if any
        if w.optimizer_ns is not None:
            ps = w.optimizer_ns * 1000
        else:
            ps = round(self.rank_params(r) * w.optimizer_bytes_per_param / w.mem_bw_Bps * PS_PER_S)
        self.cur[r] = self._add(Op("optimizer", "optimizer", (r,), self.it, duration_ps=ps, deps=deps))
