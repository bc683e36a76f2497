"""``run_training``: topology + workload → iteration time, breakdown and traces.

The Python twin of ``netsim run``.  Models one run end to end: the job is
prepared (:mod:`.job`), the output sinks opened, the backend and executor
built and driven for the asked iterations, and the outputs written
(``summary.json``, ``ops.csv``, ``fct.csv`` (with iteration, op, group (the
instance, ``tp3``), group_kind (``tp``), collective, step),
``traffic_matrix.csv``, ``message_sizes.csv`` and the backend's
``queues.csv``/``pfc.csv``/``cc.csv``), a failed or interrupted run keeping
every row finished before it stopped.  Leaves out the summary's content
(:mod:`.summary`), the DAG execution (:mod:`.executor`) and the network
(:mod:`netsim.backends`).  See docs/run.md for every summary key.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

from ..backends.base import HOST_STACK, TraceSinks, create_backend
from ..records import CsvSink, ListSink, TeeSink, write_rows
from ..fctmodes import DEFAULT_FCT_MODE, check_fct_mode
from ..fctmodes import fct_sink as make_fct_sink
from ..runfiles import COMPLETE, close_sinks, prepare_out_dir, stopped_run, write_summary
from .executor import OPS_COLUMNS, Executor
from .job import hierarchical_grouper, prepare_job, topology_label
from .summary import PS, TrafficSink, message_sizes, sim_ns, stopped_summary, training_summary

#: columns of the backend traces a run writes beside fct.csv and ops.csv
TRACE_COLUMNS = {"queues": ("time_ns", "node", "port", "priority", "queue_bytes"),
                 "pfc": ("time_ns", "node", "port", "priority", "event"),
                 "cc": ("time_ns", "flow_id", "cc", "cwnd_bytes", "rate_bps", "alpha", "srtt_ns")}


@dataclass
class RunSinks:
    """Where a run's rows go: files under ``out_dir`` (if any), memory (``keep_records``), the traffic counter."""

    traffic: TrafficSink
    fct: TeeSink
    ops: TeeSink
    extra: dict                     # backend traces: {"queues"|"pfc"|"cc": CsvSink}
    files: dict                     # file name -> sink, for the summary's row counts
    paths: dict = field(default_factory=dict)
    fct_list: ListSink | None = None
    ops_list: ListSink | None = None


def run_training(graph, workload, *, backend: str = "packet", cc: str = "none", params: dict | None = None,
                 cc_params: dict | None = None, seed: int = 0, iterations: int = 1, out_dir=None,
                 workload_overrides=None, progress: bool | None = None, keep_records: bool = False,
                 topology_name: str | None = None, whatif=None, host_stack=None, allow_oom: bool = False,
                 workload_format: str | None = None, variability=None, overlap_slowdown=None,
                 fct: str = "per-flow") -> dict:
    """Simulate ``iterations`` training iterations of ``workload`` on ``graph``.

    Parameters
    ----------
    graph : networkx.Graph | str
        A topology graph, or a spec for :func:`netsim.topology.load_topology`.
    workload : str | dict | Workload
        A workload file, its content as a dict, or a loaded Workload.
    backend, cc, params, cc_params, seed
        As for :func:`netsim.backends.base.create_backend`.
    iterations : int
        Iterations to simulate (>= 1).
    out_dir : str, optional
        Where to write the traces and ``summary.json``.
    workload_overrides : dict or list of (field, value), optional
        ``--workload-set`` assignments.
    progress : bool, optional
        Progress line on stderr (default: when stderr is a terminal).
    whatif : netsim.whatif.WhatIf | dict, optional
        Delay injection, stragglers, link changes; added to the file's ``whatif:``.
    host_stack : netsim.hoststack.HostStack | False, optional
        The host-stack cost model given to the backend (``backend.host_stack``); default ``HostStack()``
        with ``params``' ``host.KEY`` entries; ``False`` (or ``params["host_stack"]`` off) turns it off
        (applied by the analytic and packet backends).
    allow_oom : bool
        Run a configuration whose per-GPU memory need exceeds the GPU's capacity
        (:mod:`netsim.workloads.memory`); ``summary["memory"]`` says which stages do not fit.
    workload_format : str, optional
        Force the workload format (:data:`netsim.importers.FORMATS`); default: detected from the
        content (a netsim YAML unless a Chakra trace, SimAI/AICB file is recognised).
    variability : Variability | dict | list of (key, value), optional
        Compute variability on top of the workload file's ``variability:``
        (:mod:`netsim.workloads.variability`; ``--variability KEY=VALUE``).
    overlap_slowdown : float, optional
        ``overlap.slowdown`` f, replacing the workload file's (``--overlap-slowdown``).
    fct : str
        Flow records written to ``out_dir`` (``--fct``, :data:`netsim.fctmodes.FCT_MODES`): ``per-flow``
        (``fct.csv``, default), ``per-op`` (``fct_ops.csv``) or ``off``.
    keep_records : bool
        Keep flows/ops in memory: ``summary["records"]`` = {"fct": [...], "ops": [...]},
        and the executor under ``summary["_executor"]`` (for tests/notebooks).

    Returns the summary (also written to ``summary.json``), plus ``paths``.
    """
    from ..errors import InputError
    check_fct_mode(fct)
    if not isinstance(iterations, int) or iterations < 1:
        raise InputError("must be a positive integer", where="--iterations", value=iterations)
    t0 = time.perf_counter()
    topo_label = topology_label(graph, topology_name)
    job = prepare_job(graph, workload, backend=backend, params=params, seed=seed, topo_label=topo_label,
                      workload_overrides=workload_overrides, workload_format=workload_format, allow_oom=allow_oom,
                      whatif=whatif, variability=variability, overlap_slowdown=overlap_slowdown)
    sinks = _open_sinks(out_dir, fct, keep_records)
    params, host_stack = _host_stack(params, host_stack)
    run = {"be": None, "ex": None}
    try:
        summary = _simulate(run, job, host_stack, sinks, backend=backend, cc=cc, params=params,
                            cc_params=cc_params, seed=seed, iterations=iterations, progress=progress, t0=t0,
                            topology=topo_label)
        summary["memory"] = job.memory
        if out_dir is not None:
            _write_outputs(out_dir, fct, summary, sinks, run)
    except BaseException as exc:
        if out_dir is not None:
            stopped_run(out_dir, stopped_summary(run, job.workload, sinks.traffic, backend=backend, cc=cc, seed=seed,
                                                 iterations=iterations, t0=t0, topology=topo_label),
                        sinks.files, exc, sim_ns(run["be"]))
        raise
    summary["paths"] = sinks.paths
    if keep_records:                # for tests and notebooks
        summary.update(records={"fct": sinks.fct_list.rows, "ops": sinks.ops_list.rows}, _executor=run["ex"],
                       _builder=job.builder, _placement=job.placement)
    return summary


def _open_sinks(out_dir, fct: str, keep_records: bool) -> RunSinks:
    """The run's sinks; with ``out_dir``, its files opened (``summary.json``, the commit marker, first)."""
    paths: dict[str, str] = {}
    fct_sinks, ops_sinks, extra = [], [], {}
    traffic = TrafficSink()
    fct_list = ListSink() if keep_records else None
    ops_list = ListSink(OPS_COLUMNS) if keep_records else None
    if out_dir is not None:
        prepare_out_dir(out_dir)    # summary.json (the commit marker) goes first
        p = {n: os.path.join(out_dir, n + ".csv") for n in ("fct", "ops", "queues", "pfc", "cc",
                                                           "traffic_matrix", "message_sizes")}
        paths.update(p)
        paths["summary"] = os.path.join(out_dir, "summary.json")
        fct_sinks.append(make_fct_sink(fct, out_dir))     # None for --fct off
        if fct != DEFAULT_FCT_MODE:
            del paths["fct"]
            if fct_sinks[-1] is not None:
                paths["fct_ops"] = fct_sinks[-1].path
        ops_sinks.append(CsvSink(p["ops"], OPS_COLUMNS))
        extra = {name: CsvSink(p[name], cols) for name, cols in TRACE_COLUMNS.items()}
    files = {os.path.basename(s.path): s for s in (*fct_sinks, *ops_sinks, *extra.values()) if s is not None}
    return RunSinks(traffic=traffic, fct=TeeSink(traffic, fct_list, *fct_sinks), ops=TeeSink(ops_list, *ops_sinks),
                    extra=extra, files=files, paths=paths, fct_list=fct_list, ops_list=ops_list)


def _host_stack(params, host_stack):
    """``params`` without its ``host.KEY`` entries, and the host-stack model (None when off)."""
    from ..hoststack import HostStack, split_host_params
    params, host_params = split_host_params(params)
    flag = str((params or {}).get("host_stack", "")).strip().lower()
    if host_stack is None:          # default on; --set host_stack=off turns it off
        host_stack = None if flag in ("0", "false", "no", "off") else HostStack(host_params)
    elif host_stack is False:
        host_stack = None
    return params, host_stack


def _write_outputs(out_dir, fct: str, summary: dict, sinks: RunSinks, run: dict) -> None:
    """Close the row files, write the traffic matrix and message sizes, then ``summary.json`` (complete)."""
    if fct != DEFAULT_FCT_MODE:
        summary["fct_mode"] = fct
    outputs = close_sinks(sinks.files)
    outputs["traffic_matrix.csv"] = write_rows(
        sinks.paths["traffic_matrix"], ("iteration", "src", "dst", "bytes"),
        [(i, s, d, b) for (i, s, d), b in sorted(sinks.traffic.matrix.items())])
    outputs["message_sizes.csv"] = write_rows(
        sinks.paths["message_sizes"], ("group_kind", "collective", "size_bytes", "count"),
        [(g, c, s, n) for (g, c, s), n in sorted(message_sizes(run["ex"]).items())])
    write_summary(out_dir, summary, COMPLETE, sim_ns(run["be"]), outputs)


def _simulate(run, job, host_stack, sinks: RunSinks, *, backend, cc, params, cc_params, seed, iterations,
              progress, t0, topology) -> dict:
    """Build the backend and executor (kept in ``run`` for the caller's error path), run, summarise."""
    graph, wl, placement, what, effects = job.graph, job.workload, job.placement, job.whatif, job.effects
    be = run["be"] = create_backend(backend, graph, params=params, seed=seed, cc=cc, cc_params=cc_params,
                                    sinks=TraceSinks(fct=sinks.fct, **sinks.extra))
    node_groups = hierarchical_grouper(wl, placement, graph)
    if host_stack is not None and HOST_STACK in be.capabilities:     # the host-stack cost model, where declared
        be.host_stack = host_stack
    run_builder = job.builder
    if what is not None:
        what.start(be, graph)
        run_builder = what.wrap_builder(job.builder)
    if effects["variability"] is not None:           # compute variability (runtime.variability): off by default
        from .variability import VariabilityBuilder
        run_builder = VariabilityBuilder(run_builder, effects["variability"], seed, placement.world_size)
    from .overlap import overlap_model               # compute / comm slowed beside each other; None when off
    overlap = overlap_model(be.env, effects["overlap"], wl)
    if progress is None:
        progress = sys.stderr.isatty()
    # no ops rows wanted (no out_dir, no keep_records): the executor makes none (one call per rank per op fewer)
    ex = run["ex"] = Executor(be, run_builder, placement.gpu_of, node_groups=node_groups,
                              ops_sink=sinks.ops if sinks.ops.sinks else None,
                              tag=wl.name, progress=progress, overlap=overlap)
    ex.run(iterations)
    ex.check_complete()
    be.close()
    sinks.fct.close()
    sinks.ops.close()
    for s in sinks.extra.values():
        s.close()
    wall = time.perf_counter() - t0
    out = training_summary(wl, placement, job.builder, ex, be, graph, sinks.traffic, backend=backend, cc=cc,
                           seed=seed, iterations=iterations, wall=wall, topology=topology)
    if effects["variability"] is not None:            # keys only when on: default summaries unchanged
        out["variability"] = run_builder.summary()
    if overlap is not None:
        out["overlap"] = {"slowdown": overlap.f, "compute_extra_s": overlap.extra_ps * PS}
        if overlap.g:
            out["overlap"].update(comm_slowdown=overlap.g, comm_extra_s=overlap.comm_extra_ps * PS)
    return out
