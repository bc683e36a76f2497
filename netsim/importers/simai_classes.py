"""Rank classes of a SimAI job: its data-parallel replicas built once, lifted to every rank on demand.

A SimAI/AICB file gives every rank the same rows; ranks differ only by their
(tp, dp, pp) index.  The op graph of a job with ``dp`` replicas is therefore
the op graph of a *class job* with ``dp_c`` = 2 · ``ep`` replicas (the fewest
in which every group kind the file can name — TP, EP, DP, expert-DP — has at
least two members, so the class job emits every collective the full job
does), repeated ``q = dp / dp_c`` times: a template of the class job is

* **replicated** (compute, update delays, TP and EP collectives, pipeline
  sends: ops whose ranks stay inside one block of ``dp_c`` consecutive DP
  indices): one instance per block ``b`` < ``q``, on the ranks
  ``(t, b · dp_c + d, s)`` of its class ranks ``(t, d, s)``; or
* **single** (DP and expert-DP collectives): one instance, on the full job's
  group of the same (tp, pp) index (and expert index).

Every dependency of the builder joins two ops sharing a rank (a rank's
stream, a collective's members, a send's receiver), so an instance of a
replicated template depends on the same block's instance of a replicated
dependency, and a single one on every block's.  Names and groups take the
full job's group numbers.  The order is the full builder's: the class
builder marks each emission loop (:meth:`~.simai_build._Gen.loop`), and the
instances of one loop are ordered as the full builder's loop visits them —
by rank, by group number, by owning op then member, by sender.
:func:`expand` yields exactly the templates :func:`~.simai_build.make_job`
builds for the full job (checked template by template in
``tests/importers/test_simai_classes.py``), so runs of an expanded job are
the runs of the explicit one.

:class:`LiftedGraph` serves the same instances one at a time to
:class:`netsim.runtime.lazy.LazyExecutor`, which never holds an iteration:
the class job has ``dp_c / dp`` of the templates (1/12 for SimAI's 9,216-GPU
example: 7,968,048 for 95,607,600 ops).  Left out: ``netsim run`` still
imports explicitly (its summary walks every op); class templates are Python
objects, not a column store.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..workloads.placement import Placement
from .job import OpTemplate

_new = object.__new__


@dataclass(frozen=True)
class ClassJob:
    """The class job's templates and emission loops, and the two placements they map between."""

    templates: list
    loops: list          # (first template index, loop kind), as recorded by simai_build._Gen.loop
    small: Placement     # dp = dp_c
    full: Placement      # dp = blocks · dp_c
    blocks: int

    def single(self, t: OpTemplate) -> bool:
        """Whether ``t`` has one instance (a DP or expert-DP collective) rather than one per block."""
        return t.group.startswith(("dp", "edp"))

    def lift(self, rank: int, block: int) -> int:
        """The full job's rank of class rank ``rank`` in DP block ``block``."""
        return self.lifts[rank][block]

    @property
    def lifts(self) -> list:
        """``lifts[rank][block]``: :meth:`lift` as a table (class ranks × blocks ints, built once)."""
        table = self.__dict__.get("_lifts")
        if table is None:
            small, full = self.small, self.full
            table = [[full.rank_at(t, b * small.dp + d, s) for b in range(self.blocks)]
                     for t, d, s in small.coords]
            object.__setattr__(self, "_lifts", table)
        return table

    def __len__(self) -> int:
        return sum(1 if self.single(t) else self.blocks for t in self.templates)


def class_dp(dp: int, ep: int) -> int | None:
    """Replicas of the class job for a job of ``dp`` replicas (None: no smaller class job)."""
    c = 2 * ep
    return c if dp > c and dp % c == 0 else None


def _instance(cj: ClassJob, t: OpTemplate, block: int | None) -> tuple[tuple, str, str]:
    """(ranks, group, name) of an instance (``block`` None: single)."""
    full = cj.full
    if block is None:
        kind = "dp" if t.group.startswith("dp") else "edp"
        gid = full.group_of[kind][cj.lift(t.ranks[0], 0)]
        ranks = full.groups[kind][gid]
    else:
        lifts = cj.lifts
        ranks = tuple(lifts[r][block] for r in t.ranks)
        if not t.group:
            return ranks, "", t.name
        kind = t.group.rstrip("0123456789")
        gid = full.group_of[kind][ranks[0]]
    group = f"{kind}{gid}"
    return ranks, group, group + t.name[len(t.group):]


def _key(kind: str, ranks: tuple, group: str, owner: int, pos: int):
    if kind == "coll":
        return int(group.lstrip("abcdefghijklmnopqrstuvwxyz"))
    if kind == "upd":
        return owner, pos
    return ranks[0]          # rank loops: by rank; p2p: by sender


def expand(cj: ClassJob):
    """The full job's templates, in the full builder's order (a generator; ``len(cj)`` of them)."""
    tmpl, blocks = cj.templates, cj.blocks
    index: list = [None] * len(tmpl)      # class template -> full index (single) or list per block
    bounds = [b for b, _ in cj.loops] + [len(tmpl)]
    if bounds[0] != 0:
        raise ValueError("class job: templates before the first emission loop")
    n = 0
    for (lo, kind), hi in zip(cj.loops, bounds[1:]):
        made = []
        for i in range(lo, hi):
            t = tmpl[i]
            for b in ((None,) if cj.single(t) else range(blocks)):
                ranks, group, name = _instance(cj, t, b)
                owner = pos = 0
                if kind == "upd":
                    dep = t.deps[0]
                    owner = index[dep] if cj.single(tmpl[dep]) else index[dep][b]
                    pos = _owner_ranks(cj, tmpl[dep], b).index(ranks[0])
                made.append((_key(kind, ranks, group, owner, pos), i, b, ranks, group, name))
        made.sort(key=lambda m: m[0])
        for _, i, b, ranks, group, name in made:
            t = tmpl[i]
            if b is None:
                index[i] = n
            else:
                if index[i] is None:
                    index[i] = [0] * blocks
                index[i][b] = n
            n += 1
            yield _lifted(t, ranks, group, name, _deps(cj, t, b, index))


def _owner_ranks(cj: ClassJob, t: OpTemplate, block: int | None) -> tuple:
    return _instance(cj, t, None if cj.single(t) else block)[0]


def _deps(cj: ClassJob, t: OpTemplate, block: int | None, index: list) -> tuple:
    out = set()
    for d in t.deps:
        x = index[d]
        if isinstance(x, int):
            out.add(x)
        elif block is None:
            out.update(x)
        else:
            out.add(x[block])
    return tuple(sorted(out))


def _lifted(t: OpTemplate, ranks: tuple, group: str, name: str, deps: tuple) -> OpTemplate:
    new = _new(OpTemplate)
    new.__dict__.update(t.__dict__)
    new.__dict__.update(name=name, ranks=ranks, group=group, deps=deps)
    return new


class LiftedGraph:
    """The full job's op graph, instance by instance, for :class:`netsim.runtime.lazy.LazyExecutor`.

    An instance is ``(v, b)``: class template ``v``, block ``b`` (-1 for a single template).  Successors
    are listed as the explicit executor would start them: in the full template order (by emission loop,
    then the loop's key, :func:`expand`), then the next iteration's (a rank's roots wait for its sinks, as
    :class:`~.job.TemplateBuilder` wires iterations).
    """

    def __init__(self, cj: ClassJob):
        from ..workloads.ops import Op
        self.cj, self.blocks, self._op = cj, cj.blocks, Op.of
        tmpl = cj.templates
        self.single = [cj.single(t) for t in tmpl]
        self.loop = [0] * len(tmpl)
        self.loop_kind = [k for _, k in cj.loops]
        bounds = [b for b, _ in cj.loops] + [len(tmpl)]
        for j, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
            for i in range(lo, hi):
                self.loop[i] = j
        self.succ: list[list] = [[] for _ in tmpl]
        self.cross: list[list] = [[] for _ in tmpl]
        for v, t in enumerate(tmpl):
            for d in t.deps:
                self.succ[d].append(v)
        xdeps = self._cross_deps(tmpl)
        self.npend = [self._count(v, t.deps) for v, t in enumerate(tmpl)]
        self.npend_next = [self.npend[v] + self._count(v, xdeps[v]) for v in range(len(tmpl))]
        for v in range(len(tmpl)):
            for s in xdeps[v]:
                self.cross[s].append(v)
        self.size = len(cj)

    def _cross_deps(self, tmpl) -> list[tuple]:
        """Per class template: the previous iteration's sinks of its root ranks (TemplateBuilder's rule)."""
        on_rank: dict[int, list[int]] = {}
        has_succ_on = set()
        roots = []
        for i, t in enumerate(tmpl):
            for r in t.ranks:
                on_rank.setdefault(r, []).append(i)
            dep_ranks = set()
            for d in t.deps:
                dep_ranks.update(tmpl[d].ranks)
                for r in set(t.ranks) & set(tmpl[d].ranks):
                    has_succ_on.add((d, r))
            roots.append([r for r in t.ranks if r not in dep_ranks])
        sinks = {r: [i for i in idx if (i, r) not in has_succ_on] for r, idx in on_rank.items()}
        return [tuple(sorted({s for r in rs for s in sinks[r]})) for rs in roots]

    def _count(self, v: int, deps) -> int:
        if not self.single[v]:
            return len(deps)
        return sum(1 if self.single[d] else self.blocks for d in deps)

    def _targets(self, u: int, b: int, vs) -> list:
        out = []
        for v in vs:
            if self.single[v]:
                out.append((v, -1))
            elif b < 0:
                out.extend((v, k) for k in range(self.blocks))
            else:
                out.append((v, b))
        if len(out) > 1:
            out.sort(key=self.order_key)
        return out

    def order_key(self, inst) -> tuple:
        """Where instance ``inst`` comes in the full template order (within its emission loop: the loop's key)."""
        v, b = inst
        cj, tmpl = self.cj, self.cj.templates
        t = tmpl[v]
        loop = self.loop[v]
        kind = self.loop_kind[loop]
        if kind == "upd":              # (owning op's group number, member position): _key of expand
            d = tmpl[t.deps[0]]
            if self.single[t.deps[0]]:
                ranks, group, _ = _instance(cj, d, None)
                return loop, int(group.lstrip("abcdefghijklmnopqrstuvwxyz")), ranks.index(cj.lifts[t.ranks[0]][b])
            first = cj.lifts[d.ranks[0]][b]
            return loop, cj.full.group_of[d.group.rstrip("0123456789")][first], d.ranks.index(t.ranks[0])
        if kind == "coll":
            if b < 0:
                return loop, int(_instance(cj, t, None)[1].lstrip("abcdefghijklmnopqrstuvwxyz")), 0
            return loop, cj.full.group_of[t.group.rstrip("0123456789")][cj.lifts[t.ranks[0]][b]], 0
        return loop, cj.lifts[t.ranks[0]][b], 0      # rank loops: by rank; p2p: by sender

    def roots(self) -> list:
        """Iteration 0's instances without dependencies, in order."""
        return self._targets(0, -1, [v for v, n in enumerate(self.npend) if n == 0])

    def successors(self, u: int, b: int) -> tuple[list, list]:
        """(this iteration's, the next iteration's) successor instances of instance ``(u, b)``, in order."""
        return self._targets(u, b, self.succ[u]), self._targets(u, b, self.cross[u])

    def pending(self, v: int, it: int) -> int:
        """Unfinished dependencies of an instance of ``v`` in iteration ``it`` before any finished."""
        return self.npend[v] if it == 0 else self.npend_next[v]

    def op(self, v: int, b: int, it: int):
        """The :class:`~netsim.workloads.ops.Op` of instance ``(v, b)`` in iteration ``it``."""
        t = self.cj.templates[v]
        ranks, group, name = _instance(self.cj, t, None if b < 0 else b)
        return self._op(name, t.kind, ranks, it, group, t.collective, t.duration_ps, t.size_bytes, t.spec,
                        [list(row) for row in t.sizes] if t.sizes is not None else None)
