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

Left out: the executor still instantiates a whole iteration (``expand`` is
the full template list); what this saves is the import (the class job has
``dp_c / dp`` of the templates: 1/12 for SimAI's 9,216-GPU example).
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
        t, d, s = self.small.coords[rank]
        return self.full.rank_at(t, block * self.small.dp + d, s)

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
        ranks = tuple(cj.lift(r, block) for r in t.ranks)
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
