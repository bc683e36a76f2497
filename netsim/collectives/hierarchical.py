"""Hierarchical all-reduce: inside servers, across servers on rails, inside again.

Modelled (the 2D / "hierarchical" all-reduce of Horovod, BlueConnect and
NCCL's CollNet-less multi-node ring split):

1. ring **reduce-scatter** inside every server (``G`` local ranks): local rank
   ``i`` ends up owning segment ``i`` (``S/G`` bytes) reduced over its server;
2. ring **all-reduce across servers** of segment ``i`` among the ranks with
   local index ``i`` (a *rail*: same-index GPUs, normally on the same NIC
   rail), all rails in parallel;
3. ring **all-gather** inside every server.

Phases are separated by barriers over the whole collective (a rank starts
phase 2 when every server has finished phase 1). Step numbers continue
across phases: ``0..G-2`` (phase 1), then ``2(m-1)`` steps for ``m``
servers, then ``G-1`` steps. Inter-server traffic only ever flows between
ranks of the same rail.

``node_groups`` lists the ranks of each server, in local-index order; all
servers must hold the same number of ranks.
"""
from __future__ import annotations

import simpy

from . import ring
from .engine import Run
from .steps import split_even


def allreduce(run: Run, nodes, size_bytes, channels, node_groups: list[list[str]]):
    """Reduce-scatter in servers, all-reduce per rail, all-gather in servers."""
    env: simpy.Environment = run.env
    G = len(node_groups[0])
    m = len(node_groups)
    # phase 1
    procs = [env.process(ring.reducescatter(run, grp, size_bytes, channels, 0)) for grp in node_groups if G > 1]
    if procs:
        yield env.all_of(procs)
    # phase 2: segment i (size as the ring's reduce-scatter split it) on rail i
    seg = _segment_sizes(size_bytes, channels, G)
    off = max(G - 1, 0)
    if m > 1:
        procs = [env.process(ring.allreduce(run, [grp[i] for grp in node_groups], seg[i], channels, off))
                 for i in range(G)]
        yield env.all_of(procs)
    off += 2 * (m - 1)
    # phase 3
    procs = [env.process(ring.allgather(run, grp, size_bytes, channels, off)) for grp in node_groups if G > 1]
    if procs:
        yield env.all_of(procs)


def _segment_sizes(size_bytes: int, channels: int, G: int) -> list[int]:
    """Bytes of segment ``i`` as :func:`ring.reducescatter` splits the buffer."""
    return split_even(size_bytes, G)
