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

The switch of rail ``i`` is the ``sharp: true`` switch that the NIC of every
rank of the rail links to directly (a rail switch, or the one switch of a
single-switch fabric): multi-level SHARP aggregation trees (leaf switches
reducing before the spine) are not modelled and are an error, as is a
rail whose NICs sit on different switches. Chunks: the caller's
``chunk_bytes``, else :data:`.nvls.NVLS_PARAMS` ``nvls_chunk_bytes`` (the
in-network unit). Transfers end or start at the switch through
``send_in_network`` (analytic, flow and packet). Left out: the switch's reduction
time, SHARP's limited concurrent aggregation trees, pipelining across the
three phases, and CollNet chain.
"""
from __future__ import annotations

import simpy

from ..errors import InputError
from . import ring
from .engine import Run, split_even

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


def rail_switches(graph, node_groups: list[list[str]]) -> list[str]:
    """The ``sharp: true`` switch of each rail (local index), or a one-line InputError."""
    out = []
    for i in range(len(node_groups[0])):
        rail = [grp[i] for grp in node_groups]
        common = None
        for x in rail:
            sw = {s for s in _first_switches(graph, x) if graph.nodes[s].get("sharp") is True}
            common = sw if common is None else common & sw
        if not common:
            raise InputError("collnet needs the NICs of each rail's ranks on one switch with sharp: true "
                             "(multi-level SHARP trees are not modelled)", where="collective algorithm",
                             value="collnet", accepted="a rail or single-switch fabric with sharp: true, "
                             "or algorithm ring/tree/hierarchical")
        out.append(sorted(common)[0])
    return out


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


def _sharp_allreduce(run_in: Run, rail: list[str], switch: str, size_bytes: int, channels: int, step: int):
    """Every rail rank sends each chunk up; the switch joins the m parts and sends the sum to all m."""
    m = len(rail)
    jobs = [(ch, nb) for ch, part in enumerate(split_even(size_bytes, channels)) for nb in run_in.pieces(part)]
    done, tick = run_in.counter(len(jobs) * m)
    for ch, nb in jobs:
        left = [m]

        def arrived(_rec, ch=ch, nb=nb, left=left):
            left[0] -= 1
            if left[0] == 0:
                for x in rail:
                    run_in.send(ch, switch, x, nb, step + 1, tick)
        for x in rail:
            run_in.send(ch, x, switch, nb, step, arrived)
    yield done


def allreduce(run: Run, run_in: Run, size_bytes: int, channels: int, node_groups: list[list[str]],
              switches: list[str]):
    """Reduce-scatter in servers, SHARP all-reduce per rail, all-gather in servers; a generator."""
    env: simpy.Environment = run.env
    G = len(node_groups[0])
    if G > 1:
        yield env.all_of([env.process(ring.reducescatter(run, grp, size_bytes, channels, 0)) for grp in node_groups])
    seg = split_even(size_bytes, G)
    off = max(G - 1, 0)
    yield env.all_of([env.process(_sharp_allreduce(run_in, [grp[i] for grp in node_groups], switches[i], seg[i],
                                                   channels, off)) for i in range(G)])
    if G > 1:
        yield env.all_of([env.process(ring.allgather(run, grp, size_bytes, channels, off + 2))
                          for grp in node_groups])

