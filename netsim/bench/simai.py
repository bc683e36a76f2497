"""SimAI's 9,216-GPU MoE example on the flow backend through rank classes (``netsim bench simai_9216_flow``).

:func:`run_classes` imports a SimAI file as a class job
(:mod:`netsim.importers.simai_classes`), runs it with
:class:`netsim.runtime.lazy.LazyExecutor` on a backend and reports the
iteration time, or — under a CPU budget — how far the run got: simulated
time, simulated time per CPU second, instances done, peak RSS.  The
benchmark writes the example with :mod:`tools.simai_example` and runs it on a
rail-optimized 3-tier fabric (``gpu_clos3``, 8-GPU servers, 32-server pods).
"""
from __future__ import annotations

import os
import resource
import tempfile
import time

from . import benchmark


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def lifted_graph(path: str):
    """(ClassJob, LiftedGraph) of a SimAI file (``ValueError`` when it has no smaller class job)."""
    from ..importers.simai import parse_rows
    from ..importers.simai_build import class_job
    from ..importers.simai_classes import LiftedGraph
    with open(path, encoding="utf-8") as f:
        header, rows, _ = parse_rows(f.read(), path)
    cj = class_job(path, header, rows)
    if cj is None:
        raise ValueError(f"{path}: no smaller class job (dp must be a multiple of 2·ep above it)")
    return cj, LiftedGraph(cj)


def run_classes(path: str, graph, *, backend: str = "flow", iterations: int = 1, fct_sink=None, ops_sink=None,
                cpu_budget_s: float | None = None, step_ps: int = 10**9) -> dict:
    """Run SimAI file ``path`` on ``graph`` through rank classes; stop after ``cpu_budget_s`` of CPU if given.

    The backend is set up as :func:`netsim.runtime.api.run_training` sets it up by default (default
    network parameters, the default host stack); ``fct_sink``/``ops_sink`` receive its flow and op rows.
    """
    from ..backends.base import TraceSinks, create_backend
    from ..hoststack import HostStack
    from ..runtime.lazy import LazyExecutor
    from ..topology import gpus
    c0 = time.process_time()
    cj, lg = lifted_graph(path)
    c1 = time.process_time()
    rss_import = _rss_mib()
    be = create_backend(backend, graph, sinks=TraceSinks(fct=fct_sink))
    be.host_stack = HostStack({})
    gpu_of = list(gpus(graph))[:cj.full.world_size]
    ex = LazyExecutor(be, lg, gpu_of, ops_sink=ops_sink, tag=os.path.splitext(os.path.basename(path))[0])
    ex.start(iterations)
    env = be.env
    while not ex.finished.triggered:
        if cpu_budget_s is not None and time.process_time() - c1 > cpu_budget_s:
            break
        if env.peek() == float("inf"):   # nothing left to happen before the end: a deadlock
            ex.check_complete()
        env.run(until=env.now + step_ps)
    c2 = time.process_time()
    done = ex.finished.triggered
    if done:
        be.close()
    ends = [ex.iteration_end_ps[i] for i in range(iterations)] if done else []
    reached = ends[-1] if done else env.now      # a finished run: its end, not the last step's boundary
    return {"gpus": cj.full.world_size, "class_templates": len(cj.templates), "ops_per_iteration": lg.size,
            "blocks": cj.blocks, "import_cpu_s": round(c1 - c0, 2), "import_rss_mib": round(rss_import, 1),
            "run_cpu_s": round(c2 - c1, 2), "finished": done,
            "iteration_time_s": [(e - s) / 1e12 for s, e in zip([0] + ends[:-1], ends)] if done else None,
            "simulated_s": reached / 1e12, "simulated_s_per_cpu_s": reached / 1e12 / max(c2 - c1, 1e-9),
            "ops_done": ex._done_ops, "peak_waiting": ex.peak_waiting, "peak_running": ex.peak_running,
            "peak_rss_mib": round(_rss_mib(), 1)}


@benchmark("simai_9216_flow")
def simai_9216_flow(cpu_budget_s: float = 600.0) -> dict:
    """SimAI's 9,216-GPU example, flow backend, ``gpu_clos3:servers=1152,servers_per_pod=32``, CPU-budgeted."""
    import importlib
    from ..topology import load_topology
    example = importlib.import_module("tools.simai_example")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "workload_analytical.txt")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(example.text())
        graph = load_topology("gpu_clos3:servers=1152,servers_per_pod=32")
        from ..fctmodes import fct_sink
        sink = fct_sink("per-op", d)
        out = run_classes(path, graph, cpu_budget_s=cpu_budget_s, fct_sink=sink)
    return out
