"""Pipeline stages of an imported op graph, read from the graph itself.

A trace (Chakra in particular) does not say which pipeline stage a rank runs,
yet the summary's ``pipeline_bubble_s_per_stage`` and the breakdown's
``bubble`` (time a rank waits on another stage, :mod:`netsim.runtime.breakdown`)
need it. Ranks that take part in one non-pipeline op (a TP/DP/EP collective)
hold the same layers, so they are one stage; pipeline (``pp``) point-to-point
ops join different stages and join nothing. The stages are numbered in
pipeline order: by how deep in the op graph (dependency hops from a root) a
stage's first compute op lies — stage 0 starts without waiting for another
stage — ties by lowest rank.

Left out: a rank in two stages (interleaved/virtual stages are one stage per
rank here, as on the native path), and a trace whose stages cannot be told
apart by its collectives (no ``pp`` op: everything is stage 0).
"""
from __future__ import annotations

#: op kinds that join two pipeline stages rather than ranks of one stage
PIPELINE_KINDS = frozenset({"pp"})


def _depths(templates) -> list[int]:
    """Dependency hops from a root of each template (templates' ``deps`` index the list; a DAG)."""
    depth: list = [None] * len(templates)
    for i in range(len(templates)):
        stack = [i]
        while stack:
            j = stack[-1]
            if depth[j] is not None:
                stack.pop()
                continue
            todo = [d for d in templates[j].deps if depth[d] is None]
            if todo:
                stack.extend(todo)
            else:
                depth[j] = 1 + max((depth[d] for d in templates[j].deps), default=-1)
                stack.pop()
    return depth


def infer_stages(templates, world_size: int) -> tuple:
    """Stage of each rank (``tuple`` of int, length ``world_size``) from an imported iteration's templates.

    Parameters
    ----------
    templates : list of netsim.importers.job.OpTemplate
        One iteration's ops (``kind``, ``ranks``, ``deps``).
    world_size : int
        Ranks.

    Returns
    -------
    tuple of int
        All 0 without a pipeline op; else the stage index of every rank, in pipeline order.
    """
    if not any(t.kind in PIPELINE_KINDS for t in templates):
        return (0,) * world_size
    root = list(range(world_size))

    def find(r: int) -> int:
        while root[r] != r:
            root[r] = root[root[r]]
            r = root[r]
        return r

    for t in templates:
        if t.kind not in PIPELINE_KINDS and len(t.ranks) > 1:
            a = find(t.ranks[0])
            for r in t.ranks[1:]:
                b = find(r)
                if a != b:
                    root[max(a, b)] = min(a, b)
                    a = min(a, b)
    depth = _depths(templates)
    low: dict[int, int] = {}                 # stage (its root) -> its lowest rank
    for r in range(world_size):
        low.setdefault(find(r), r)
    first: dict[int, int] = {}               # stage -> depth of its first compute op
    for i, t in enumerate(templates):
        if t.kind == "compute":
            c = find(t.ranks[0])
            first[c] = min(first.get(c, depth[i]), depth[i])
    comps = sorted(low, key=lambda c: (first.get(c, len(templates)), low[c]))
    index = {c: s for s, c in enumerate(comps)}
    return tuple(index[find(r)] for r in range(world_size))
