"""The training job a run simulates: topology graph, workload, placement, op-graph builder and effects.

Models what is fixed before the first event: the topology loaded and
validated, the workload read (or an imported Chakra/SimAI/AICB job detected),
ranks placed on GPUs, a ``balanced`` partition resolved on the topology, the
op-graph builder chosen (ZeRO / sequence parallelism through
:mod:`netsim.workloads.extended`), the memory check, the workload file's
what-if merged with the caller's, compute variability and overlap slowdown
resolved, and the scale-up domains a ``hierarchical`` collective needs.
Leaves out the backend, the executor and every output (:mod:`.api`,
:mod:`.summary`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..workloads import OpGraphBuilder, load_workload, place
from ..workloads.placement import resolve_partition


@dataclass
class TrainingJob:
    """A job ready to simulate (``memory`` is None for an imported job)."""

    graph: Any
    workload: Any
    placement: Any
    builder: Any
    memory: dict | None
    whatif: Any             # netsim.whatif.WhatIf | None
    effects: dict           # {"variability": Variability | None, "overlap": OverlapSpec | None}


def make_builder(wl, placement, seed: int):
    """The op-graph builder: ZeRO / sequence parallelism (``workloads.extended``) when asked for."""
    if getattr(wl, "zero_stage", 0) or getattr(wl, "sequence_parallel", False):
        from ..workloads.extended import ExtendedBuilder
        builder = ExtendedBuilder(wl, placement, seed=seed)
    else:
        builder = OpGraphBuilder(wl, placement, seed=seed)
    from ..workloads.section_fields import check_collective_algorithms
    check_collective_algorithms(wl, lambda: type(builder)(wl, placement, seed=seed))   # on a throwaway builder
    return builder


def merged_whatif(wl, extra):
    """The workload file's what-if merged with the caller's (None when both are empty)."""
    if wl.whatif is None and extra is None:
        return None
    from ..whatif import WhatIf
    w = WhatIf.coerce(wl.whatif)
    if extra is not None:
        w = w.merged(WhatIf.coerce(extra))
    return None if w.empty else w


def hierarchical_grouper(wl, placement, graph):
    """``node_groups`` for the executor: ranks grouped by server, else by scale-up domain.

    Every group kind whose collectives run ``hierarchical`` is checked here,
    before the simulation starts, so a topology that has no domains to offer
    (one GPU per domain, unequal domains) fails with the workload field named.
    """
    from ..topology.domains import domain_keys, hierarchical_groups
    keys = domain_keys(graph)
    uses = {"tp": "tp", "dp": "dp", "edp": "dp"}       # group kind -> collectives spec that runs its all-reduces
    if int(getattr(wl, "zero_stage", 0) or 0) >= 1:
        uses = {"tp": "tp"}     # ZeRO turns every DP/EDP all-reduce into a reduce-scatter (ring): none is hierarchical
    for kind, spec_kind in uses.items():
        spec = wl.collectives.get(spec_kind)
        if spec is None or spec.algorithm != "hierarchical":
            continue
        for ranks in placement.groups.get(kind, ()):
            if len(ranks) > 1:
                hierarchical_groups([placement.gpu_of[r] for r in ranks], keys,
                                    where=f"collectives.{spec_kind}.algorithm (group {kind}, ranks {list(ranks)})")

    def node_groups(nodes):
        return hierarchical_groups(nodes, keys)
    return node_groups


def resolve_graph(graph):
    """A topology spec loaded, or a caller's graph validated."""
    from ..topology import load_topology, validate
    if isinstance(graph, (str, os.PathLike)):
        return load_topology(os.fspath(graph))
    return validate(graph)


def topology_label(graph, name: str | None) -> str:
    """How the summary names the topology: ``name``, else the spec's path, else the graph's name."""
    return name or (os.fspath(graph) if isinstance(graph, (str, os.PathLike)) else
                    getattr(graph, "name", "") or "<graph>")


def prepare_job(graph, workload, *, backend: str, params, seed: int, topo_label: str, workload_overrides,
                workload_format, allow_oom: bool, whatif, variability, overlap_slowdown) -> TrainingJob:
    """Everything a run needs before its backend exists, each input checked in the order a user meets them."""
    graph = resolve_graph(graph)
    from ..checks import check_network_params
    check_network_params(backend, params, graph, source=topo_label)  # the check every backend shares
    from ..importers import detect_job
    job = detect_job(workload, workload_format, overrides=workload_overrides, graph=graph)
    if job is not None:             # an imported job (Chakra, SimAI, AICB): its own ops and placement
        wl, placement, builder, memory = job, job.place(graph), job.builder(), None
    else:
        wl = load_workload(workload, overrides=workload_overrides)
        placement = place(wl, graph)
        wl = resolve_partition(wl, placement, graph)
        builder = make_builder(wl, placement, seed)
        from ..workloads.memory import check_memory
        memory = check_memory(wl, builder, placement, graph, allow_oom=allow_oom)  # before any simulation
    what = merged_whatif(wl, whatif)
    from .variability import resolve_overlap, resolve_variability
    effects = {"variability": resolve_variability(wl, variability), "overlap": resolve_overlap(wl, overlap_slowdown)}
    if what is not None and what.links:
        graph = graph.copy()        # link events change the graph: never the caller's
    if what is not None:
        what.check_graph(graph, world_size=placement.world_size)
    return TrainingJob(graph, wl, placement, builder, memory, what, effects)
