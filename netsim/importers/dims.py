"""ASTRA-sim's per-dimension collectives on multi-dimensional topologies (``multi_dim``).

ASTRA-sim runs a collective over a multi-dimensional network one dimension at
a time (``Sys::generate_collective``, inter-dimension scheduling
``ascending``).  With ``collective-optimization: localBWAware`` (every system
JSON ASTRA-sim ships) an all-reduce of S bytes over dimensions 0…k is a
reduce-scatter in dimensions 0…k−1 (each on what the previous one left:
S, S/n₀, …), an all-reduce of S/(n₀⋯n_{k−1}) in dimension k, then
all-gathers back in dimensions k−1…0; with ``baseline`` it is an all-reduce
of S in every dimension in turn.  A reduce-scatter of S runs dimensions
0…k with buffers S, S/n₀, …; an all-gather of S (its output) dimensions 0…k
with outputs S/(n₁⋯n_k)·… growing to S; an all-to-all runs each dimension on
the full S.  Dimensions where the group has one member are skipped.

netsim applies it to an imported job's collectives whose group is a *box* of
the topology's coordinate grid (every combination of its members'
coordinates present — the whole machine, one dimension's groups, …): each
phase is one collective per line of the box along that dimension, and a phase
op waits for the previous phase's ops sharing a member.  Other groups, the MoE
all-to-all with a size matrix, broadcast/reduce and sends run as they are.
Sizes follow netsim's (nccl-tests) convention: the all-reduce buffer, the
reduce-scatter input, the all-gather output.  An all-reduce phase in
dimension d runs entry d of the system JSON's ``all-reduce-implementation``
list (``[ring, doubleBinaryTree]``…).  Left out: per-dimension
implementations of the other collectives (netsim runs them as rings), the
Themis/offline-greedy dimension schedulers.
"""
from __future__ import annotations

import dataclasses
import math

from ..errors import InputError

#: ``collective-optimization`` values (ASTRA-sim's system JSON), and netsim's ``off``
MODES = ("localBWAware", "baseline", "off")
_SPLIT = ("allreduce", "reducescatter", "allgather", "alltoall")


def grid(graph) -> list[int] | None:
    """The per-dimension GPU counts of a ``multi_dim`` topology (graph attribute ``dims``), else ``None``."""
    dims = graph.graph.get("dims") if graph is not None else None
    if not dims:
        return None
    return [int(x) for x in str(dims).split("|")]


def _coords(index: int, counts: list[int]) -> tuple:
    out = []
    for c in counts:
        out.append(index % c)
        index //= c
    return tuple(out)


def plan(coll: str, size: int, extent: list[int], mode: str) -> list[tuple[str, int, int]]:
    """(collective, dimension, size) phases of one collective over a box of ``extent`` members per dimension."""
    dims = [d for d, n in enumerate(extent) if n > 1]
    if coll == "alltoall" or (coll == "allreduce" and mode == "baseline"):
        return [(coll, d, size) for d in dims]
    if coll == "reducescatter":
        out, s = [], size
        for d in dims:
            out.append((coll, d, s))
            s //= extent[d]
        return out
    if coll == "allgather":
        out, s = [], size // math.prod(extent[d] for d in dims)
        for d in dims:
            s *= extent[d]
            out.append((coll, d, s))
        return out
    down = [("reducescatter", d, size // math.prod(extent[e] for e in dims[:i])) for i, d in enumerate(dims[:-1])]
    mid = size // math.prod(extent[e] for e in dims[:-1])
    up = [("allgather", d, size // math.prod(extent[e] for e in dims[:i]))
          for i, d in reversed(list(enumerate(dims[:-1])))]
    return down + [("allreduce", dims[-1], mid)] + up


def _box(members: tuple, coord_of: dict, nd: int):
    """Per-dimension distinct coordinates of ``members`` if they form a full box, else ``None``."""
    axes = [sorted({coord_of[m][d] for m in members}) for d in range(nd)]
    return axes if math.prod(len(a) for a in axes) == len(members) else None


def _phase_spec(spec, coll: str, d: int, impl: list | None, unmapped: set):
    """The op's spec, with dimension ``d``'s ``all-reduce-implementation`` on an all-reduce phase."""
    if coll != "allreduce" or not impl:
        return spec
    from .astra import _ALLREDUCE
    name = str(impl[d] if d < len(impl) else impl[-1])
    if name not in _ALLREDUCE:
        unmapped.add(name)
        return spec
    return dataclasses.replace(spec, algorithm=_ALLREDUCE[name])


def decompose(job, graph, mode: str = "localBWAware", allreduce_impl: list | None = None):
    """``job`` with its box-shaped collectives split per dimension of the ``multi_dim`` topology ``graph``.

    ``allreduce_impl``: the system JSON's ``all-reduce-implementation`` list, one entry per dimension; an
    all-reduce phase in dimension d runs entry d (``ring``, ``doubleBinaryTree``, ``halvingDoubling``…).
    """
    if mode not in MODES:
        raise InputError("unknown collective optimization", where="--workload-set dims", value=mode,
                         accepted=", ".join(MODES))
    counts = grid(graph)
    if mode == "off" or counts is None or len(counts) < 2:
        return job
    names = [f"s{i // counts[0]}.gpu{i % counts[0]}" for i in range(math.prod(counts))]
    index = {n: i for i, n in enumerate(names)}
    gpu_of = job.place(graph).gpu_of
    coord_of = {r: _coords(index[g], counts) for r, g in enumerate(gpu_of)}
    out, done, split, unmapped = [], {}, 0, set()
    for k, t in enumerate(job.templates):
        deps = tuple(sorted({i for d in t.deps for i in done[d]}))
        axes = _box(t.ranks, coord_of, len(counts)) if t.collective in _SPLIT and t.sizes is None else None
        phases = plan(t.collective, t.size_bytes, [len(a) for a in axes], mode) if axes else []
        if len(phases) < 2:
            out.append(dataclasses.replace(t, deps=deps))
            done[k] = (len(out) - 1,)
            continue
        split += 1
        prev = None
        for p, (coll, d, size) in enumerate(phases):
            lines: dict[tuple, list] = {}
            for r in t.ranks:
                lines.setdefault(coord_of[r][:d] + coord_of[r][d + 1:], []).append(r)
            now = []
            for j, key in enumerate(sorted(lines)):
                members = tuple(sorted(lines[key], key=lambda r: coord_of[r][d]))
                pdeps = deps if prev is None else tuple(i for i in prev if set(out[i].ranks) & set(members))
                out.append(dataclasses.replace(t, name=f"{t.name}.p{p}d{d}.{j}", ranks=members,
                                               group=f"{t.group}.d{d}.{j}", collective=coll, size_bytes=size,
                                               deps=pdeps, spec=_phase_spec(t.spec, coll, d, allreduce_impl,
                                                                            unmapped)))
                now.append(len(out) - 1)
            prev = now
        done[k] = tuple(prev)
    if not split:
        return job
    note = (f"{split} collectives run dimension by dimension over the {'x'.join(map(str, counts))} grid "
            f"(ASTRA-sim collective-optimization {mode})")
    extra = [f"all-reduce-implementation {sorted(unmapped)}: not in netsim, the op's algorithm kept"] if unmapped else []
    return dataclasses.replace(job, templates=out, notes=list(job.notes) + [note] + extra)
