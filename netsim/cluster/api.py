"""``run_cluster``: a topology + a cluster file → per-job iteration times, slowdowns, interference.

The Python twin of ``netsim run TOPOLOGY CLUSTER.yaml``. Writes (when
``out_dir`` is given) ``summary.json`` (a ``jobs`` section, one entry per job,
and ``background``), ``fct.csv`` and ``ops.csv`` (the single-job columns, then
``job``), ``interference.csv`` (:data:`netsim.cluster.results.INTERFERENCE_COLUMNS`)
and the backend's ``queues.csv``/``pfc.csv``/``cc.csv``. docs/cluster.md has the details.
"""
from __future__ import annotations

import os
import sys
import time

from ..backends.base import HOST_STACK, ROUTER, TraceSinks, create_backend
from ..backends.registry import PACING_LINK_ONLY
from ..records import CLUSTER_FCT_COLUMNS, CsvSink, ListSink, write_rows
from ..units import PS_PER_NS
from .background import fct_summary, make_background
from .jobs import build_jobs
from .results import INTERFERENCE_COLUMNS, interference_rows, job_summary, shared_links
from .runner import FlowLedger, run_shared
from .spec import load_cluster

_EXTRA = {"queues": ("time_ns", "node", "port", "priority", "queue_bytes"),
          "pfc": ("time_ns", "node", "port", "priority", "event"),
          "cc": ("time_ns", "flow_id", "cc", "cwnd_bytes", "rate_bps", "alpha", "srtt_ns")}


def _host_stack(params):
    from ..hoststack import HostStack, split_host_params
    params, host_params = split_host_params(params)
    flag = str((params or {}).get("host_stack", "")).strip().lower()
    return params, (None if flag in ("0", "false", "no", "off") else HostStack(host_params))


def simulate(graph, jobs, background=None, *, backend, cc, params, cc_params, seed, host_stack,
             fct_out=None, ops_out=None, extra=None, background_priority=None, run=None, progress=False):
    """One shared-network simulation of ``jobs`` (BuiltJobs) and ``background`` flows.

    Returns ``(backend, {job: Executor}, FlowLedger)``; ``run["be"]`` holds the backend as soon as it exists.
    """
    ledger = FlowLedger(fct_out)
    be = create_backend(backend, graph, params=params, seed=seed, cc=cc, cc_params=cc_params,
                        sinks=TraceSinks(fct=ledger, **(extra or {})))
    if run is not None:
        run["be"] = be
    if host_stack is not None and HOST_STACK in be.capabilities:     # the host-stack cost model, where declared
        be.host_stack = host_stack
    be.warn_overrun = False     # the cluster says itself what the backend does not model (one line; Backend)
    ledger.router = be.router if ROUTER in be.capabilities else None
    executors = run_shared(be, graph, jobs, ops_sink=ops_out, background=background,
                           background_priority=background_priority, seed=seed, progress=progress)
    be.close()
    return be, executors, ledger


def _alone_times(graph, job, cache_dir, **kw) -> tuple[list, bool]:
    """The job's iteration times alone on its GPUs (from the cache when there) and whether they were cached."""
    import dataclasses

    from .alone import alone_key, cached, store
    key, inputs = alone_key(graph, job, **{k: kw[k] for k in ("backend", "cc", "cc_params", "seed")},
                            params=kw["raw_params"])
    hit = cached(cache_dir, key) if cache_dir else None
    if hit is not None:
        return hit["iteration_times_s"], True
    solo = dataclasses.replace(job, spec=dataclasses.replace(job.spec, start_ns=0))
    sim_kw = {k: v for k, v in kw.items() if k != "raw_params"}
    _, exs, ledger = simulate(graph, [solo], **sim_kw)
    times = job_summary(solo, exs[job.name], ledger)["iteration_times_s"]
    if cache_dir:
        store(cache_dir, key, inputs, times)
    return times, False


def _open_outputs(out_dir) -> tuple[dict, dict, dict]:
    """(paths, {file name: sink} to close, the sinks :func:`simulate` takes); all empty without ``out_dir``."""
    if out_dir is None:
        return {}, {}, {}
    from ..runfiles import prepare_out_dir
    from ..runtime.executor import OPS_COLUMNS
    prepare_out_dir(out_dir)
    paths = {n: os.path.join(out_dir, n + ".csv") for n in ("fct", "ops", "interference", *_EXTRA)}
    paths["summary"] = os.path.join(out_dir, "summary.json")
    if os.path.exists(paths["interference"]):
        os.remove(paths["interference"])
    sinks = {"fct_out": CsvSink(paths["fct"], CLUSTER_FCT_COLUMNS),
             "ops_out": CsvSink(paths["ops"], (*OPS_COLUMNS, "job")),
             "extra": {k: CsvSink(paths[k], cols) for k, cols in _EXTRA.items()}}
    files = {os.path.basename(x.path): x for x in (sinks["fct_out"], sinks["ops_out"], *sinks["extra"].values())}
    return paths, files, sinks


def _slowdowns(summary, graph, jobs, cache, params, kw) -> dict:
    """Each job's alone times and slowdown into ``summary``; returns job -> whether the cache had it
    (kept out of summary.json, so a rerun's files are the same)."""
    hits = {}
    for job in jobs:
        times, hits[job.name] = _alone_times(graph, job, cache, raw_params=params, **kw)
        js = summary["jobs"][job.name]
        js["alone_iteration_times_s"] = times
        js["slowdown"] = js["iteration_time_s"] / (sum(times) / len(times))
    return hits


def run_cluster(graph, cluster, *, backend: str = "packet", cc: str = "none", params: dict | None = None,
                cc_params: dict | None = None, seed: int = 0, out_dir=None, cache_dir=None, alone: bool = True,
                topology_name: str | None = None, allow_oom: bool = False, progress: bool | None = None) -> dict:
    """Simulate every job of ``cluster`` (and its background traffic) on one network.

    Parameters
    ----------
    graph : networkx.Graph | str
        A topology graph, or a spec for :func:`netsim.topology.load_topology`.
    cluster : str | dict | ClusterSpec
        A cluster file (docs/cluster.md), its content as a dict, or a parsed spec.
    backend, cc, params, cc_params, seed
        As for :func:`netsim.runtime.run_training`; shared by every job.
    out_dir : str, optional
        Where to write ``summary.json``, ``fct.csv``, ``ops.csv``, ``interference.csv``, ...
    cache_dir : str, optional
        Folder of cached alone-runs (default ``OUT_DIR/alone``; none without ``out_dir``).
    alone : bool
        Run each job alone for its slowdown (``jobs.NAME.slowdown``); False leaves it out.
    progress : bool, optional
        Progress line on stderr for the shared run (default: when stderr is a terminal).

    Returns
    -------
    dict
        The summary (also written to ``summary.json``) plus ``paths``; ``_executors``,
        ``_jobs`` and ``_alone_cached`` (job -> its alone time came from the cache) for tests.
    """
    from ..checks import check_network_params
    from ..runfiles import COMPLETE, close_sinks, stopped_run, write_summary
    from ..runtime.job import resolve_graph
    t0 = time.perf_counter()
    topo_label = topology_name or (os.fspath(graph) if isinstance(graph, (str, os.PathLike)) else
                                   getattr(graph, "name", "") or "<graph>")
    graph = resolve_graph(graph)
    check_network_params(backend, params, graph, source=topo_label)
    spec = load_cluster(cluster)
    jobs = build_jobs(spec, graph, seed=seed, allow_oom=allow_oom)
    taken = {g for j in jobs for g in j.placement.gpu_of}
    bg_flows = make_background(spec.background, graph, taken, spec.source)
    bg_prio = spec.background.traffic_class if spec.background is not None else None
    net_params, host_stack = _host_stack(params)
    kw = {"backend": backend, "cc": cc, "params": net_params, "cc_params": cc_params, "seed": seed,
          "host_stack": host_stack}
    paths, files, sinks = _open_outputs(out_dir)
    run = {"be": None}
    try:
        if progress is None:
            progress = sys.stderr.isatty()
        be, exs, ledger = simulate(graph, jobs, bg_flows, background_priority=bg_prio, run=run, progress=progress,
                                   **sinks, **kw)
        rows = interference_rows(ledger)
        summary = _summary(spec, jobs, exs, ledger, be, rows, bg_flows, topo_label, t0, kw)
        _say_no_contention(summary, backend, jobs, bg_flows, be)
        cache = cache_dir if cache_dir is not None else (os.path.join(out_dir, "alone") if out_dir else None)
        hits = _slowdowns(summary, graph, jobs, cache, params, kw) if alone else {}
        summary["wall_time_s"] = time.perf_counter() - t0
        if out_dir is not None:
            outputs = close_sinks(files)
            outputs["interference.csv"] = write_rows(paths["interference"], INTERFERENCE_COLUMNS, rows)
            write_summary(out_dir, summary, COMPLETE, int(be.env.now // PS_PER_NS), outputs)
    except BaseException as exc:
        if out_dir is not None:
            be = run["be"]
            stopped_run(out_dir, {"cluster": spec.source, "topology": topo_label, "backend": backend, "cc": cc,
                                  "seed": seed, "jobs": {j.name: {} for j in jobs},
                                  "wall_time_s": time.perf_counter() - t0}, files, exc,
                        None if be is None else int(be.env.now // PS_PER_NS))
        raise
    summary["paths"] = paths
    summary["_executors"], summary["_jobs"], summary["_alone_cached"] = exs, jobs, hits
    return summary


#: what an analytic cluster run cannot show (summary.json ``contention``; docs/cluster.md)
NO_CONTENTION = ("the analytic backend shares only each flow's pacing link (the first lowest-rate link of its "
                 "path), across jobs and the background too; contention on every other link is not modelled, "
                 "so slowdowns count only that sharing; use --backend flow or packet")


def _say_no_contention(summary: dict, backend: str, jobs, bg_flows, be=None) -> None:
    """On the analytic backend with more than one traffic source, say so in the summary and in one
    ``netsim: warning:`` line: its slowdowns count only the sharing of pacing links. With one source, the line
    is the backend's own report of the links its flows overran, if any (``unmodelled_contention``)."""
    if backend != "analytic":
        return
    if len(jobs) < 2 and not bg_flows:
        msg = be.overrun_message() if be is not None else None
        if msg is not None:
            print(f"netsim: warning: {msg}", file=sys.stderr)
        return
    summary["contention"] = PACING_LINK_ONLY
    print(f"netsim: warning: {NO_CONTENTION}", file=sys.stderr)


def _summary(spec, jobs, exs, ledger, be, rows, bg_flows, topo_label, t0, kw) -> dict:
    from ..runtime.summary import scheduled_events
    out = {"kind": "cluster", "cluster": spec.source, "topology": topo_label, "backend": kw["backend"],
           "cc": kw["cc"], "seed": kw["seed"],
           "jobs": {j.name: job_summary(j, exs[j.name], ledger) for j in jobs}}
    if spec.background is not None:
        bg = spec.background
        out["background"] = {"cdf": bg.cdf, "load": bg.load, "seed": bg.seed, "start_ns": bg.start_ns,
                             "duration_ns": bg.duration_ns, "hosts": len(bg_flows.hosts) if bg_flows else 0,
                             "traffic_class": bg.traffic_class, "bytes": ledger.bytes.get("background", 0),
                             **fct_summary(ledger.background_fct_ns)}
    out["shared_links"] = shared_links(rows)
    out["flows"] = ledger.count
    out["network"] = be.stats()
    out["sim_events"] = scheduled_events(be.env)
    return out
