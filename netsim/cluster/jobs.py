"""A cluster job made runnable: its workload loaded, its GPUs chosen, its op-graph builder built.

Netsim workloads go through the same steps as ``netsim run`` (load, place on
the chosen GPUs, balanced partition, builder, memory check); imported
workloads (Chakra, SimAI, AICB: :func:`netsim.importers.detect_job`) get the
chosen GPUs as their rank → GPU map. A workload's own ``placement.gpus`` is an
error here (the cluster file places its jobs), and so is a ``whatif:`` section
(not modelled for several jobs). The workload's ``variability:`` and
``overlap:`` sections apply as in ``netsim run`` (:mod:`netsim.cluster.runner`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import InputError
from .placement import check_disjoint, choose_gpus
from .spec import ClusterSpec, JobSpec


@dataclass
class BuiltJob:
    """A job ready to run: its spec, workload, placement and builder."""

    spec: JobSpec
    workload: object
    placement: object
    builder: object
    memory: dict | None
    seed: int = 0          #: the job's own seed for its random draws (:func:`job_seed`)

    @property
    def name(self) -> str:
        return self.spec.name


def _world_size(spec: JobSpec, graph, source: str):
    """(netsim Workload or None, ImportedJob or None, world size)."""
    from ..importers import detect_job
    from ..workloads import load_workload
    imported = detect_job(spec.workload, spec.workload_format, graph=graph)
    if imported is not None:
        return None, imported, imported.world_size
    wl = load_workload(spec.workload)
    if wl.gpus is not None:
        raise InputError("a cluster job's workload cannot fix its own GPUs", source=source,
                         where=f"job {spec.name}, workload field placement.gpus", value=list(wl.gpus)[:3],
                         accepted="the job's placement in the cluster file")
    if wl.whatif is not None:
        raise InputError("a cluster job cannot carry a what-if section", source=source,
                         where=f"job {spec.name}, workload field whatif", value="whatif:",
                         accepted="a workload without whatif: (run it alone with netsim run for what-ifs)")
    return wl, None, wl.world_size


def job_seed(seed: int, index: int, name: str) -> int:
    """The seed of a cluster's job ``index`` (file order): the run's seed for the first job (so a one-job
    cluster draws as ``netsim run`` does), a hash of (seed, name) for the others — jobs draw independently
    (compute jitter, stragglers, MoE routing), and a job's alone-run draws as it does in the cluster."""
    import zlib
    return seed if index == 0 else zlib.crc32(f"{seed}|job|{name}".encode()) & 0x7FFFFFFF


def _build(spec: JobSpec, graph, wl, imported, gpus: list, seed: int, allow_oom: bool) -> BuiltJob:
    if imported is not None:
        job = dataclasses.replace(imported, gpu_map=tuple(gpus))
        return BuiltJob(spec, job, job.place(graph), job.builder(), None, seed)
    from ..runtime.job import make_builder
    from ..workloads.memory import check_memory
    from ..workloads.placement import Placement, resolve_partition
    placement = Placement.build(wl.dp, wl.tp, wl.pp, wl.order, list(gpus), source=wl.source, ep=wl.ep,
                                cp=wl.cp)
    wl = resolve_partition(wl, placement, graph)
    builder = make_builder(wl, placement, seed)
    memory = check_memory(wl, builder, placement, graph, allow_oom=allow_oom)
    return BuiltJob(spec, wl, placement, builder, memory, seed)


def build_jobs(cluster: ClusterSpec, graph, *, seed: int = 0, allow_oom: bool = False,
               only: str | None = None) -> list[BuiltJob]:
    """Place and build every job of ``cluster`` (in file order), or only job ``only`` on its placement."""
    from ..topology import gpus as all_gpus
    taken: set = set()
    chosen: dict[str, list] = {}
    loaded = []
    for spec in cluster.jobs:
        wl, imported, n = _world_size(spec, graph, cluster.source)
        free = [g for g in all_gpus(graph) if g not in taken]
        gl = choose_gpus(graph, spec, n, free, workload=wl, source=cluster.source)
        chosen[spec.name] = gl
        check_disjoint(chosen, graph, cluster.source)
        taken.update(gl)
        loaded.append((spec, wl, imported, gl))
    return [_build(spec, graph, wl, imp, gl, job_seed(seed, k, spec.name), allow_oom)
            for k, (spec, wl, imp, gl) in enumerate(loaded) if only is None or spec.name == only]
