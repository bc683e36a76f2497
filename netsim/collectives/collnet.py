"""CollNet (SHARP): all-reduce across servers reduced in a switch with ``sharp: true``.

Modelled as NCCL's CollNet-direct all-reduce moves data, in three phases
separated by barriers (as :mod:`.hierarchical`):

1. ring **reduce-scatter inside every server** (``G`` local ranks): local
   rank ``i`` holds segment ``i`` (``S/G``) reduced over its server;
2. **in-network all-reduce of segment i** among the ranks of local index
   ``i`` of all ``m`` servers (a rail): each sends its segment, chunk by
   chunk, to the SHARP switch its NIC links to; when the ``m`` parts of a
   chunk have arrived (the reduction is a join) the switch sends the reduced
   chunk to each of the ``m`` ranks — ``S/G`` up and ``S/G`` down per rank,
   against a ring's ``2(m-1)/m · S/G`` each way;
3. ring **all-gather inside every server**.

The aggregation tree of rail ``i`` (:class:`SharpTree`): when one
``sharp: true`` switch is linked to the NIC of every rank of the rail (a rail
switch, or the one switch of a single-switch fabric) it reduces alone. Else
each rank's **leaf** is the first ``sharp: true`` switch past its NIC and the
**root** a ``sharp: true`` switch linked to every leaf (a spine; rail ``i``
takes the ``i mod k``-th of the k candidates by name, spreading rails over the
spines): a leaf joins the parts of its own ranks and sends one partial up, the
root joins the leaves' partials and sends the sum to every leaf, which sends
it to its ranks — so a leaf-root link carries S/G each way per rail it
serves. A rail with no such root (three or more levels) is an error. Chunks:
the caller's ``chunk_bytes``, else :data:`.nvls.NVLS_PARAMS`
``nvls_chunk_bytes`` (the in-network unit). Transfers end or start at the
switches through ``send_in_network`` (analytic, flow and packet); the
leaf-root hop of each rail is its own connection. Left out: the switches'
reduction time, SHARP's limited concurrent aggregation trees, pipelining
across the three phases, and CollNet chain.
"""
from __future__ import annotations

from typing import NamedTuple

import simpy

from ..errors import InputError
from . import ring
from .engine import Run
from .steps import split_even

#: node kinds a GPU reaches its NIC's switch through (never another switch, NVSwitch or GPU)
_TRANSIT_KINDS = ("pcie_switch", "nic")


def _first_switches(graph, gpu: str) -> set:
    """Switches (kind ``switch``) one hop past the GPU's own PCIe switches and NICs."""
    seen, todo, out = {gpu}, [gpu], set()
    while todo:
        x = todo.pop()
        for y in graph.neighbors(x):
            if y in seen:
                continue
            seen.add(y)
            kind = graph.nodes[y].get("kind")
            if kind == "switch":
                out.add(y)
            elif kind in _TRANSIT_KINDS:
                todo.append(y)
    return out


class SharpTree(NamedTuple):
    """The SHARP aggregation tree of one rail."""

    leaves: tuple      #: per rank of the rail (in rail order), the switch it sends its part to
    root: str          #: the switch that joins the leaves' partials (every leaf, for a one-switch rail)


def _no_tree(why: str) -> InputError:
    return InputError(f"collnet needs {why}", where="collective algorithm", value="collnet",
                      accepted="sharp: true on the rail switches, or on the leaves and a spine linked to every "
                      "leaf; or algorithm ring/tree/hierarchical")


def _sharp(graph, x) -> bool:
    return graph.nodes[x].get("kind") == "switch" and graph.nodes[x].get("sharp") is True


def sharp_tree(graph, rail: list[str], index: int = 0) -> SharpTree:
    """The :class:`SharpTree` of ``rail`` (its ``index``-th), or a one-line InputError."""
    firsts = [sorted((s for s in _first_switches(graph, x) if _sharp(graph, s)), key=str) for x in rail]
    if not all(firsts):
        raise _no_tree("every rank's NIC linked to a switch with sharp: true")
    common = set(firsts[0]).intersection(*firsts[1:])
    if common:
        root = sorted(common, key=str)[0]
        return SharpTree((root,) * len(rail), root)
    leaves = tuple(f[0] for f in firsts)
    ups = None
    for leaf in dict.fromkeys(leaves):
        above = {y for y in graph.neighbors(leaf) if _sharp(graph, y)}
        ups = above if ups is None else ups & above
    if not ups:
        raise _no_tree("the leaf switches of each rail's ranks linked to one switch with sharp: true "
                       "(SHARP trees of three or more levels are not modelled)")
    ups = sorted(ups, key=str)
    return SharpTree(leaves, ups[index % len(ups)])


def rail_switches(graph, node_groups: list[list[str]]) -> list[SharpTree]:
    """The :class:`SharpTree` of each rail (local index), or a one-line InputError."""
    return [sharp_tree(graph, [grp[i] for grp in node_groups], i) for i in range(len(node_groups[0]))]


def check_groups(node_groups: list[list[str]]) -> None:
    """InputError unless the ranks span several servers (CollNet reduces across servers)."""
    if len(node_groups) < 2:
        raise InputError("collnet reduces across servers, but every rank is on one server",
                         where="collective algorithm", value="collnet",
                         accepted="ranks on two or more servers, or nvls/ring/tree inside one")


def check_kind(kind: str) -> None:
    """InputError unless netsim's CollNet runs ``kind`` (all-reduce only)."""
    if kind != "allreduce":
        raise InputError(f"collnet runs allreduce only in netsim, not {kind}", where="collective algorithm",
                         value="collnet", accepted="collnet for allreduce; ring for other collectives")


def _join(count: int, then):
    """A callback that runs ``then()`` on its ``count``-th call (a reduction: all parts have arrived)."""
    left = [count]

    def arrived(_rec=None):
        left[0] -= 1
        if left[0] == 0:
            then()
    return arrived


def _chunk(run_in: Run, rail, tree: SharpTree, ch: int, up_ch: int, nb: int, step: int, tick) -> None:
    """One chunk through the tree: ranks -> leaves (joined) [-> root (joined) -> leaves] -> ranks."""
    if all(leaf == tree.root for leaf in tree.leaves):
        sw = tree.root
        down = _join(len(rail), lambda: [run_in.send(ch, sw, x, nb, step + 1, tick) for x in rail])
        for x in rail:
            run_in.send(ch, x, sw, nb, step, down)
        return
    ranks = {}
    for x, leaf in zip(rail, tree.leaves):
        ranks.setdefault(leaf, []).append(x)

    def to_ranks(leaf):
        return lambda _rec=None: [run_in.send(ch, leaf, x, nb, step + 3, tick) for x in ranks[leaf]]
    at_root = _join(len(ranks), lambda: [run_in.send(up_ch, tree.root, leaf, nb, step + 2, to_ranks(leaf))
                                         for leaf in ranks])
    for leaf, xs in ranks.items():
        up = _join(len(xs), lambda leaf=leaf: run_in.send(up_ch, leaf, tree.root, nb, step + 1, at_root))
        for x in xs:
            run_in.send(ch, x, leaf, nb, step, up)


def _sharp_allreduce(run_in: Run, rail: list[str], tree: SharpTree, size_bytes: int, channels: int, step: int,
                     index: int = 0):
    """Every rail rank sends each chunk up its tree; the sum comes back to all m (:func:`_chunk`)."""
    jobs = [(ch, nb) for ch, part in enumerate(split_even(size_bytes, channels)) for nb in run_in.pieces(part)]
    done, tick = run_in.counter(len(jobs) * len(rail))
    for ch, nb in jobs:
        _chunk(run_in, rail, tree, ch, ch + channels * (index + 1), nb, step, tick)
    yield done


def allreduce(run: Run, run_in: Run, size_bytes: int, channels: int, node_groups: list[list[str]],
              trees: list[SharpTree]):
    """Reduce-scatter in servers, SHARP all-reduce per rail, all-gather in servers; a generator."""
    env: simpy.Environment = run.env
    G = len(node_groups[0])
    if G > 1:
        yield env.all_of([env.process(ring.reducescatter(run, grp, size_bytes, channels, 0)) for grp in node_groups])
    seg = split_even(size_bytes, G)
    off = max(G - 1, 0)
    yield env.all_of([env.process(_sharp_allreduce(run_in, [grp[i] for grp in node_groups], trees[i], seg[i],
                                                   channels, off, i)) for i in range(G)])
    deep = any(leaf != t.root for t in trees for leaf in t.leaves)
    if G > 1:
        yield env.all_of([env.process(ring.allgather(run, grp, size_bytes, channels, off + (4 if deep else 2)))
                          for grp in node_groups])

