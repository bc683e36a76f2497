"""``run_training``: topology + workload → iteration time, breakdown and traces.

The Python twin of ``netsim run``.  Writes (when ``out_dir`` is given)
``summary.json``, ``ops.csv``, ``fct.csv`` (with iteration, op, group (the
instance, ``tp3``), group_kind (``tp``), collective, step), ``traffic_matrix.csv``, ``message_sizes.csv`` and the
backend's ``queues.csv``/``pfc.csv``/``cc.csv``.  See docs/run.md for every
summary key.
"""
from __future__ import annotations

import os
import sys
import time
from collections import defaultdict

from ..backends.base import ROUTER, TraceSinks, create_backend
from ..records import CsvSink, ListSink, TeeSink, write_rows
from ..fctmodes import DEFAULT_FCT_MODE, check_fct_mode
from ..fctmodes import fct_sink as make_fct_sink
from ..runfiles import COMPLETE, close_sinks, prepare_out_dir, stopped_run, write_summary
from ..units import PS_PER_NS
from ..workloads import OpGraphBuilder, load_workload, place
from ..workloads.placement import resolve_partition
from .apnet import apnet_iteration_time, apnet_stage_aware_iteration_time, effective_bandwidths
from .breakdown import KEYS, breakdowns, stage_bubbles
from .executor import OPS_COLUMNS, Executor

PS = 1e-12


class _TrafficSink:
    """Aggregates flows into the per-iteration traffic matrix and per-group bytes.

    One counter per (iteration, src, dst, group kind), updated once per flow (the hot path: one
    call per flow); :attr:`matrix` and :attr:`group_bytes` are its two marginals, summed on demand.
    """

    def __init__(self):
        self.bytes: dict[tuple, int] = defaultdict(int)
        self.count = 0

    def add(self, rec) -> None:
        self.count += 1
        self.bytes[(rec.iteration, rec.src, rec.dst, rec.group_kind)] += rec.size_bytes

    @property
    def matrix(self) -> dict[tuple, int]:
        """Bytes per (iteration, src, dst)."""
        out: dict[tuple, int] = defaultdict(int)
        for (it, src, dst, _), b in self.bytes.items():
            out[(it, src, dst)] += b
        return out

    @property
    def group_bytes(self) -> dict[tuple, int]:
        """Bytes per (iteration, group kind)."""
        out: dict[tuple, int] = defaultdict(int)
        for (it, _, _, kind), b in self.bytes.items():
            out[(it, kind)] += b
        return out

    def flush(self) -> None:
        pass

    close = flush


def _make_builder(wl, placement, seed: int):
    """The op-graph builder: ZeRO / sequence parallelism (``workloads.extended``) when asked for."""
    if getattr(wl, "zero_stage", 0) or getattr(wl, "sequence_parallel", False):
        from ..workloads.extended import ExtendedBuilder
        builder = ExtendedBuilder(wl, placement, seed=seed)
    else:
        builder = OpGraphBuilder(wl, placement, seed=seed)
    from ..workloads.section_fields import check_collective_algorithms
    check_collective_algorithms(wl, lambda: type(builder)(wl, placement, seed=seed))   # on a throwaway builder
    return builder


def _whatif(wl, extra):
    """The workload file's what-if merged with the caller's (None when both are empty)."""
    if wl.whatif is None and extra is None:
        return None
    from ..whatif import WhatIf
    w = WhatIf.coerce(wl.whatif)
    if extra is not None:
        w = w.merged(WhatIf.coerce(extra))
    return None if w.empty else w


def _hierarchical_grouper(wl, placement, graph):
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


def _resolve_graph(graph):
    from ..topology import load_topology, validate
    if isinstance(graph, (str, os.PathLike)):
        return load_topology(os.fspath(graph))
    return validate(graph)


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
        Delay injection, stragglers, link changes; added to the workload
        file's ``whatif:`` section.
    host_stack : netsim.hoststack.HostStack | False, optional
        The host-stack cost model given to the backend (``backend.host_stack``);
        default ``HostStack()`` with ``params``' ``host.KEY`` entries; ``False``
        (or ``params["host_stack"]`` off) turns it off. Applied by the analytic
        and packet backends.
    allow_oom : bool
        Run a configuration whose per-GPU memory need exceeds the GPU's
        capacity (:mod:`netsim.workloads.memory`) instead of rejecting it;
        ``summary["memory"]`` says which stages do not fit.
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

    Returns
    -------
    dict
        The summary (also written to ``summary.json``), plus ``paths``.
    """
    from ..errors import InputError
    check_fct_mode(fct)
    if not isinstance(iterations, int) or iterations < 1:
        raise InputError("must be a positive integer", where="--iterations", value=iterations)
    t0 = time.perf_counter()
    topo_label = topology_name or (os.fspath(graph) if isinstance(graph, (str, os.PathLike)) else
                                   getattr(graph, "name", "") or "<graph>")
    graph = _resolve_graph(graph)
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
        builder = _make_builder(wl, placement, seed)
        from ..workloads.memory import check_memory
        memory = check_memory(wl, builder, placement, graph, allow_oom=allow_oom)  # before any simulation
    what = _whatif(wl, whatif)
    from .variability import resolve_overlap, resolve_variability
    effects = {"variability": resolve_variability(wl, variability), "overlap": resolve_overlap(wl, overlap_slowdown)}
    if what is not None and what.links:
        graph = graph.copy()        # link events change the graph: never the caller's
    if what is not None:
        what.check_graph(graph, world_size=placement.world_size)
    paths: dict[str, str] = {}
    fct_sinks, ops_sinks, extra = [], [], {}
    traffic = _TrafficSink()
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
        extra = {"queues": CsvSink(p["queues"], ("time_ns", "node", "port", "priority", "queue_bytes")),
                 "pfc": CsvSink(p["pfc"], ("time_ns", "node", "port", "priority", "event")),
                 "cc": CsvSink(p["cc"], ("time_ns", "flow_id", "cc", "cwnd_bytes", "rate_bps", "alpha", "srtt_ns"))}
    fct_sink = TeeSink(traffic, fct_list, *fct_sinks)
    ops_sink = TeeSink(ops_list, *ops_sinks)
    from ..hoststack import HostStack, split_host_params
    params, host_params = split_host_params(params)
    flag = str((params or {}).get("host_stack", "")).strip().lower()
    if host_stack is None:          # default on; --set host_stack=off turns it off
        host_stack = None if flag in ("0", "false", "no", "off") else HostStack(host_params)
    elif host_stack is False:
        host_stack = None
    files = {os.path.basename(s.path): s for s in (*fct_sinks, *ops_sinks, *extra.values()) if s is not None}
    run = {"be": None, "ex": None}
    try:
        summary = _simulate(run, graph, builder, placement, wl, what, host_stack, fct_sink, ops_sink, extra,
                            traffic, effects, backend=backend, cc=cc, params=params, cc_params=cc_params, seed=seed,
                            iterations=iterations, progress=progress, t0=t0, topology=topo_label)
        summary["memory"] = memory
        if out_dir is not None and fct != DEFAULT_FCT_MODE:
            summary["fct_mode"] = fct
        if out_dir is not None:
            outputs = close_sinks(files)
            outputs["traffic_matrix.csv"] = write_rows(
                paths["traffic_matrix"], ("iteration", "src", "dst", "bytes"),
                [(i, s, d, b) for (i, s, d), b in sorted(traffic.matrix.items())])
            outputs["message_sizes.csv"] = write_rows(
                paths["message_sizes"], ("group_kind", "collective", "size_bytes", "count"),
                [(g, c, s, n) for (g, c, s), n in sorted(_message_sizes(run["ex"]).items())])
            write_summary(out_dir, summary, COMPLETE, _sim_ns(run["be"]), outputs)
    except BaseException as exc:
        if out_dir is not None:
            stopped_run(out_dir, _stopped_summary(run, wl, traffic, backend=backend, cc=cc, seed=seed,
                                                  iterations=iterations, t0=t0, topology=topo_label),
                        files, exc, _sim_ns(run["be"]))
        raise
    ex = run["ex"]
    summary["paths"] = paths
    if keep_records:
        summary["records"] = {"fct": fct_list.rows, "ops": ops_list.rows}
        summary["_executor"] = ex
        summary["_builder"] = builder
        summary["_placement"] = placement
    return summary


def _sim_ns(be) -> int | None:
    """Simulated time reached (ns), or None before the backend exists."""
    return None if be is None else int(be.env.now // PS_PER_NS)


def _stopped_summary(run, wl, traffic, *, backend, cc, seed, iterations, t0, topology) -> dict:
    """What is known about a run that failed or was interrupted (the rest of ``summary.json`` needs an end)."""
    out = {"workload": wl.name, "workload_source": wl.source, "topology": topology, "backend": backend, "cc": cc,
           "seed": seed, "iterations": iterations, "flows": traffic.count,
           "ops": run["ex"]._done_ops if run["ex"] is not None else 0,
           "wall_time_s": time.perf_counter() - t0}
    if run["be"] is not None:
        try:
            out["network"] = run["be"].stats()
        except Exception:  # noqa: BLE001 - a half-built backend may not have its counters
            pass
    return out


def _simulate(run, graph, builder, placement, wl, what, host_stack, fct_sink, ops_sink, extra, traffic, effects, *,
              backend, cc, params, cc_params, seed, iterations, progress, t0, topology) -> dict:
    """Build the backend and executor (kept in ``run`` for the caller's error path), run, summarise."""
    be = run["be"] = create_backend(backend, graph, params=params, seed=seed, cc=cc, cc_params=cc_params,
                                    sinks=TraceSinks(fct=fct_sink, **extra))

    node_groups = _hierarchical_grouper(wl, placement, graph)

    if host_stack is not None:
        be.host_stack = host_stack
    run_builder = builder
    if what is not None:
        what.start(be, graph)
        run_builder = what.wrap_builder(builder)
    overlap = None
    if effects["variability"] is not None:           # compute variability (runtime.variability): off by default
        from .variability import VariabilityBuilder
        run_builder = VariabilityBuilder(run_builder, effects["variability"], seed, placement.world_size)
    from .overlap import overlap_model               # compute / comm slowed beside each other; None when off
    overlap = overlap_model(be.env, effects["overlap"], wl)
    if progress is None:
        progress = sys.stderr.isatty()
    # no ops rows wanted (no out_dir, no keep_records): the executor makes none (one call per rank per op fewer)
    ex = run["ex"] = Executor(be, run_builder, placement.gpu_of, node_groups=node_groups,
                              ops_sink=ops_sink if ops_sink.sinks else None,
                              tag=wl.name, progress=progress, overlap=overlap)
    ex.run(iterations)
    ex.check_complete()
    be.close()
    fct_sink.close()
    ops_sink.close()
    for s in extra.values():
        s.close()
    wall = time.perf_counter() - t0
    out = _summary(wl, placement, builder, ex, be, graph, traffic, backend=backend, cc=cc, seed=seed,
                   iterations=iterations, wall=wall, topology=topology)
    if effects["variability"] is not None:            # keys only when on: default summaries unchanged
        out["variability"] = run_builder.summary()
    if overlap is not None:
        out["overlap"] = {"slowdown": overlap.f, "compute_extra_s": overlap.extra_ps * PS}
        if overlap.g:
            out["overlap"].update(comm_slowdown=overlap.g, comm_extra_s=overlap.comm_extra_ps * PS)
    return out


def _scheduled_events(env) -> int | None:
    """SimPy events scheduled so far (SimPy numbers them with an internal counter)."""
    eid = getattr(env, "_eid", None)
    try:
        return next(eid) if eid is not None else None
    except TypeError:
        return None


def _message_sizes(ex) -> dict:
    out: dict[tuple, int] = defaultdict(int)
    for ops in ex.iteration_ops.values():
        for op in ops:
            if op.is_comm:
                out[(op.kind, op.collective, op.size_bytes)] += 1
    return out


def comm_per_iteration(ex, traffic, iterations: int) -> tuple[dict, dict, dict]:
    """Collectives and their bytes per kind in iteration 0 (sorted by kind), and flow bytes per group and iteration."""
    counts: dict[str, int] = defaultdict(int)
    op_bytes: dict[str, int] = defaultdict(int)
    for op in ex.iteration_ops.get(0, []):
        if op.is_comm:
            counts[op.kind] += 1
            op_bytes[op.kind] += op.size_bytes
    flow_bytes: dict[str, list] = {}
    for (it, g), b in sorted(traffic.group_bytes.items()):
        flow_bytes.setdefault(g or "none", [0] * iterations)[it] = b
    return dict(sorted(counts.items())), dict(sorted(op_bytes.items())), flow_bytes


def _summary(wl, placement, builder, ex, be, graph, traffic, *, backend, cc, seed, iterations, wall, topology):
    ends = [ex.iteration_end_ps[i] for i in range(iterations)]
    times = [(e - s) * PS for s, e in zip([0] + ends[:-1], ends)]
    bds, ranks = breakdowns(ex, placement)
    mean = sum(times) / len(times)
    breakdown = {k: sum(b[k] for b in bds) * PS / len(bds) for k in KEYS}
    bw = effective_bandwidths(graph, placement, router=be.router if ROUTER in be.capabilities else None)
    if getattr(wl, "format", None) is not None:        # an imported job: no model to describe
        from ..importers.summary import imported_summary
        return imported_summary(wl, ex, be, traffic, times=times, breakdown=breakdown, bds=bds, ranks=ranks, bw=bw,
                                backend=backend, cc=cc, seed=seed, wall=wall, topology=topology,
                                placement=placement)
    apnet = apnet_iteration_time(wl, builder, bw)
    bubbles = stage_bubbles(ex, placement, wl.pp)
    staged = apnet_stage_aware_iteration_time(wl, builder, bw)
    counts, op_bytes, flow_bytes = comm_per_iteration(ex, traffic, iterations)
    flops_iter = wl.model.fwd_flops_per_sample() * wl.global_batch * (4 if wl.recompute else 3)
    params_rank = [builder.rank_params(r) for r in range(placement.world_size)]
    return {
        "workload": wl.name, "workload_source": wl.source, "topology": topology, "backend": backend, "cc": cc,
        "seed": seed, "iterations": iterations,
        "model": {"name": wl.model.name, "family": wl.model.family, "params": wl.model.params(),
                  "layers": wl.model.layers},
        "parallelism": {"dp": wl.dp, "tp": wl.tp, "pp": wl.pp, "cp": getattr(wl, "cp", 1),
                        "micro_batches": wl.micro_batches,
                        "micro_batch": wl.micro_batch, "global_batch": wl.global_batch, "schedule": wl.schedule,
                        **({"virtual_stages": wl.virtual_stages} if wl.virtual_stages > 1 else {}),
                        "recompute": wl.recompute, "placement": ",".join(wl.order), "gpus": placement.world_size},
        "compute": {"gpu": wl.gpu, "peak_flops": wl.peak_flops, "utilization": wl.utilization},
        "params_per_rank": {"min": min(params_rank), "max": max(params_rank)},
        "iteration_times_s": times,
        "iteration_time_s": mean,
        "breakdown_s": breakdown,
        "breakdown_iterations_s": [{k: v * PS for k, v in b.items()} for b in bds],
        "critical_ranks": ranks,
        "pipeline_bubble_s_per_stage": [sum(col) * PS / len(bubbles) for col in zip(*bubbles)],
        "samples_per_s": wl.global_batch / mean if mean > 0 else None,
        "model_tflops_per_gpu": flops_iter / mean / placement.world_size / 1e12 if mean > 0 else None,
        "apnet_iteration_time_s": apnet["T_iter"],
        "apnet_terms_s": {k: v for k, v in apnet.items() if k != "T_iter"},
        "apnet_stage_aware_iteration_time_s": staged["T_iter"],
        "apnet_stage_aware_terms_s": {k: v for k, v in staged.items() if k != "T_iter"},
        "effective_bandwidth_bps": bw,
        "collectives_per_iteration": counts,
        "collective_bytes_per_iteration": op_bytes,
        "flow_bytes_per_iteration": flow_bytes,
        "flows": traffic.count,
        "ops": ex._done_ops,
        "network": be.stats(),
        "sim_events": _scheduled_events(be.env),
        "wall_time_s": wall,
    }
