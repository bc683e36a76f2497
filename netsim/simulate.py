"""Run a list of flows on a backend and write the traces: :func:`run_flows`.

This is the Python API behind ``netsim flows``. It is generic over backends
(``create_backend``): the packet backend is the reference, other backends
(``flow``, ``analytic``) produce the same ``fct.csv`` columns.

Files written into ``out_dir`` (streamed, so a long run keeps bounded memory):

* ``fct.csv`` — :data:`netsim.records.FCT_COLUMNS`, one row per completed flow
  in completion order;
* ``queues.csv`` — ``time_ns,node,port,priority,queue_bytes`` every
  ``queue_sample_ns`` for each egress queue (of a forwarding device) that is
  non-empty or just became empty;
* ``pfc.csv`` — ``time_ns,node,port,priority,event`` (``pause``/``resume``);
* ``cc.csv`` — ``time_ns,flow_id,cc,cwnd_bytes,rate_bps,alpha,srtt_ns`` every
  ``cc_sample_ns`` for each sending flow (empty cells where the algorithm has
  no such state);
* ``summary.json`` — the backend's counters (see docs/packet.md) plus
  ``wall_time_s`` (the only field that differs between identical runs),
  ``status``, ``sim_time_ns`` and ``outputs`` (rows per file); written last,
  also when the run fails or is interrupted (then after every finished flow
  is in ``fct.csv``). Every file is written as ``NAME.partial`` and renamed
  when whole (:mod:`netsim.runfiles`);
* ``fct.txt`` and ``fct_nodes.csv`` with ``hpcc_fct=True`` — HPCC ns-3's
  format and the map from its node ids/addresses to node names
  (:mod:`netsim.hpccfct`, every backend).
"""
from __future__ import annotations

import os
import sys
import time
from typing import Iterable

import simpy

from .backends.base import (HOST_STACK, HPCC_FCT, NO_FABRIC_CONTENTION, TraceSinks, backend_capabilities,
                            create_backend, hpcc_ack_times)
from .backends.registry import PACING_LINK_ONLY
from .checks import check_network_params, check_node_params  # noqa: F401  (the one validator)
from .errors import InputError
from .records import CsvSink, ListSink
from .fctmodes import DEFAULT_FCT_MODE, NullSink, check_fct_mode
from .fctmodes import fct_sink as make_fct_sink
from .runfiles import close_sinks, finalize_outputs, prepare_out_dir, stopped_run, write_summary  # noqa: F401
from .units import PS_PER_NS

QUEUE_COLUMNS = ("time_ns", "node", "port", "priority", "queue_bytes")
PFC_COLUMNS = ("time_ns", "node", "port", "priority", "event")
CC_COLUMNS = ("time_ns", "flow_id", "cc", "cwnd_bytes", "rate_bps", "alpha", "srtt_ns")


def check_cc_params(cc: str, cc_params: dict | None) -> dict:
    """Resolve ``cc`` and every ``cc_params`` entry now, so a bad name or key fails before the run."""
    from .network.send import cc_registry
    reg = cc_registry()
    if cc not in reg:
        raise InputError("unknown congestion control", where="--cc", value=cc,
                         accepted="one of " + ", ".join(sorted(reg)))
    out = {}
    for name, over in (cc_params or {}).items():
        if name not in reg:
            raise InputError("unknown congestion control", where="--cc-param", value=name,
                             accepted="one of " + ", ".join(sorted(reg)))
        reg[name].PARAMS.resolve(over, source=f"--cc-param {name}")
        out[name] = dict(over)
    return out


def _bare_message(exc: InputError) -> str:
    """The message of ``exc`` without its source, place, value and accepted parts."""
    msg = str(exc)
    if exc.accepted:
        msg = msg.removesuffix(f"; expected {exc.accepted}")
    if exc.value is not None:
        msg = msg.removesuffix(f" (got {exc.value!r})")
    prefix = ": ".join(p for p in (exc.source, exc.where) if p)
    return msg[len(prefix) + 2:] if prefix and msg.startswith(prefix + ": ") else msg


def _check_flow_cc(be, flows) -> None:
    """Every flow's own ``cc`` is one the backend can run; an error names the flow file and line.

    Every backend has ``check_cc(name)`` (:meth:`Backend.check_cc`: the flow backend models only
    some algorithms), raising :class:`InputError` that names ``--cc``; for a flow's ``cc`` column
    the error is re-raised at the file, line and field (``flows``: :class:`~netsim.flowfile.FlowSpec`).
    """
    check = be.check_cc
    seen = set()
    for i, f in enumerate(flows):
        if not f.cc or f.cc in seen:
            continue
        seen.add(f.cc)
        try:
            check(f.cc)
        except InputError as exc:
            line = f.line
            where = f"line {line}, field cc" if line else f"flow {i + 1}, field cc"
            msg = _bare_message(exc)
            raise InputError(msg, source=f.source or None, where=where, value=f.cc,
                             accepted=exc.accepted) from None


def run_flows(graph, flows: Iterable, *, backend: str = "packet", cc: str = "none", params: dict | None = None,
              cc_params: dict | None = None, seed: int = 0, out_dir: str | None = None, hpcc_fct: bool = False,
              quiet: bool = True, until_ns: int | None = None, fct: str = "per-flow") -> dict:
    """Simulate ``flows`` (:class:`~netsim.flowfile.FlowSpec`) on ``graph``.

    Parameters
    ----------
    graph : networkx.Graph
        A validated topology.
    flows : iterable of FlowSpec
        Flows; each starts at its ``start_ns``.
    backend : str
        ``packet`` (default) or another registered backend.
    cc : str
        Default congestion control (a flow's own ``cc`` wins).
    params : dict
        Network parameter overrides (``--set``; names in ``SIM_PARAMS``).
    cc_params : dict
        ``{cc_name: {key: value}}`` overrides.
    seed : int
        Seed of the simulation's random generator and of ECMP hashing.
    out_dir : str, optional
        Directory for the trace files; without it nothing is written and the
        summary carries the flow records under ``"records"``.
    hpcc_fct : bool
        Also write HPCC's ``fct.txt`` and its node-id map ``fct_nodes.csv``
        (every backend, :mod:`netsim.hpccfct`; needs ``out_dir``).
    until_ns : int, optional
        Stop the simulation at this time even if flows are unfinished.
    fct : str
        Flow records in ``out_dir`` (``--fct``, :data:`netsim.fctmodes.FCT_MODES`): ``per-flow``
        (``fct.csv``, default), ``per-op`` (``fct_ops.csv``, one row per tag) or ``off``.

    Returns
    -------
    dict
        The summary (what ``summary.json`` holds).
    """
    flows = list(flows)
    params = dict(params or {})
    cc_params = _check_inputs(graph, flows, backend, params, cc, cc_params, fct, hpcc_fct, out_dir)
    t0 = time.perf_counter()
    env = simpy.Environment()
    fct_sink, sinks = _open_sinks(out_dir, fct)
    be, caps = _build_backend(graph, flows, backend, env, params, seed, cc, cc_params, sinks, hpcc_fct)
    _route_all(graph, flows, seed)
    env.process(_starter(env, be, flows))
    files = {} if out_dir is None else {os.path.basename(x.path): x
                                        for x in (sinks.fct, sinks.queues, sinks.pfc, sinks.cc) if x.path is not None}
    try:
        _drive(env, be, until_ns, quiet, len(flows))
        be.close()
        summary = dict(be.stats())
        summary.update({"cc": cc, "seed": seed, "backend": backend})
        summary.setdefault("status", flow_status(summary, len(flows), stopped=until_ns is not None))
        _say_no_contention(summary, caps, backend, flows)
        summary["wall_time_s"] = round(time.perf_counter() - t0, 3)
        if out_dir is not None:
            _write_outputs(out_dir, files, summary, graph, params, seed, be, env, hpcc_fct, fct)
    except BaseException as exc:
        if out_dir is not None:
            stopped_run(out_dir, {"flows": len(flows), "completed": be.flows_completed(), "cc": cc,
                                  "seed": seed, "backend": backend,
                                  "wall_time_s": round(time.perf_counter() - t0, 3)},
                        files, exc, int(env.now // PS_PER_NS))
        raise
    if out_dir is None:
        summary["records"] = list(fct_sink.rows)
    return summary


def _starter(env, be, flows: list):
    """The SimPy process that sends each flow at its ``start_ns`` (ties in file order), tagged with its row."""
    from .records import FlowTag
    for i in sorted(range(len(flows)), key=lambda i: (flows[i].start_ns, i)):
        f = flows[i]
        at = int(f.start_ns) * PS_PER_NS
        if at > env.now:
            yield env.timeout(at - env.now)
        be.send(f.src, f.dst, int(f.size_bytes), FlowTag(tag=f.tag or "", row=i), cc=f.cc or None,
                priority=f.priority)


def _check_inputs(graph, flows: list, backend: str, params: dict, cc: str, cc_params, fct: str, hpcc_fct: bool,
                  out_dir) -> dict:
    """Reject bad options of :func:`run_flows` before anything runs; the checked ``cc_params``."""
    check_fct_mode(fct)
    if hpcc_fct and fct != DEFAULT_FCT_MODE:
        raise InputError("HPCC fct.txt is written from the per-flow records", where="--fct", value=fct,
                         accepted=f"{DEFAULT_FCT_MODE} with --hpcc-fct")
    if hpcc_fct and out_dir is None:
        raise InputError("HPCC fct.txt needs an output directory", where="hpcc_fct", value=True,
                         accepted="out_dir=DIR (netsim flows --out DIR --hpcc-fct)")
    check_network_params(backend, params, graph)  # reject unknown keys / bad values up front
    cc_params = check_cc_params(cc, cc_params)
    for f in flows:
        if f.cc:
            check_cc_params(f.cc, None)
    return cc_params


def _open_sinks(out_dir, fct: str) -> tuple:
    """``(fct sink, TraceSinks)``: the trace files in ``out_dir`` (opened), or records kept in a list."""
    if out_dir is None:
        fct_sink = ListSink()
        return fct_sink, TraceSinks(fct=fct_sink)
    prepare_out_dir(out_dir)    # summary.json (the commit marker) goes first
    fct_sink = make_fct_sink(fct, out_dir) or NullSink()
    return fct_sink, TraceSinks(fct=fct_sink,
                                queues=CsvSink(os.path.join(out_dir, "queues.csv"), QUEUE_COLUMNS),
                                pfc=CsvSink(os.path.join(out_dir, "pfc.csv"), PFC_COLUMNS),
                                cc=CsvSink(os.path.join(out_dir, "cc.csv"), CC_COLUMNS))


def _build_backend(graph, flows: list, backend: str, env, params: dict, seed: int, cc: str, cc_params: dict,
                   sinks, hpcc_fct: bool) -> tuple:
    """``(backend, its capabilities)``: built through ``create_backend``, with the host stack of
    ``--set host.KEY`` / ``host_stack=on`` where it declares one; every flow's cc checked on it."""
    from .hoststack import HostStack, split_host_params
    net_params, host_params = split_host_params(params)   # --set host.KEY: the host stack, on every backend
    caps = backend_capabilities(backend)
    be = create_backend(backend, graph, env=env, params=net_params, seed=seed, cc=cc, cc_params=cc_params,
                        sinks=sinks, hpcc_fct=hpcc_fct and HPCC_FCT in caps)  # packet: its measured ACK times
    from .network.params import SIM_PARAMS
    on = "host_stack" in net_params and SIM_PARAMS.parse_one("host_stack", net_params["host_stack"])
    if (host_params or on) and HOST_STACK in caps:   # --set host.KEY or host_stack=on, as run_training does
        be.host_stack = HostStack(host_params)
    _check_flow_cc(be, flows)
    return be, caps


def _route_all(graph, flows: list, seed: int) -> None:
    """Route every flow once before running: switch endpoints and unknown or unreachable nodes fail fast."""
    from .topology import Router
    router = Router(graph, seed=seed)
    for i, f in enumerate(flows):
        for role, n in (("src", f.src), ("dst", f.dst)):
            if n in graph and graph.nodes[n].get("kind") not in ("gpu", "host"):
                raise InputError("flows start and end at gpu/host nodes", where=f"flow {i + 1}, field {role}",
                                 value=n, accepted="a node of kind gpu or host")
        if f.src != f.dst:            # a self-send is a local copy: no route
            router.path(f.src, f.dst, 0)


def _write_outputs(out_dir: str, files: dict, summary: dict, graph, params: dict, seed: int, be, env,
                   hpcc_fct: bool, fct: str) -> None:
    """Close the trace files, write HPCC's ``fct.txt`` if asked, then ``summary.json`` (last)."""
    outputs = close_sinks(files)
    if hpcc_fct:  # every backend: the packet backend's measured ACK times, the others' FCT + one ACK
        from .hpccfct import write_fct_txt
        outputs.update(write_fct_txt(out_dir, graph, params=params, seed=seed,
                                     ack_fct_ns=hpcc_ack_times(be)))
    if fct != DEFAULT_FCT_MODE:
        summary["fct_mode"] = fct
    # the backend's: when the last flow completed (idle timers after it do not count), docs/packet.md
    write_summary(out_dir, summary, summary["status"], summary.get("sim_time_ns", env.now // PS_PER_NS), outputs)


#: the warning of a backend without fabric contention (:data:`NO_FABRIC_CONTENTION`) on several flows
NO_CONTENTION_FLOWS = ("the {backend} backend shares only each flow's pacing link (the first lowest-rate link of "
                       "its path) among the flows paced there; contention on every other link (incast at a "
                       "receiver, shared fabric links) is not modelled; use --backend flow or packet")


def _say_no_contention(summary: dict, caps, backend: str, flows) -> None:
    """With two or more network flows on a backend declaring :data:`NO_FABRIC_CONTENTION`, say so in the
    summary (``"contention": "pacing link only"``, as analytic cluster runs) and in one warning line -- unless
    the backend measured an overrun (``unmodelled_contention``) and gave its own warning for it."""
    if NO_FABRIC_CONTENTION not in caps or sum(1 for f in flows if f.src != f.dst) < 2:
        return
    summary["contention"] = PACING_LINK_ONLY
    if "unmodelled_contention" not in summary:
        print("netsim: warning: " + NO_CONTENTION_FLOWS.format(backend=backend), file=sys.stderr)


def _drive(env, be, until_ns, quiet: bool, n_flows: int) -> None:
    """Run the simulation (to ``until_ns``, else to the end with a progress line)."""
    if until_ns is not None:
        from .gctune import tuned_gc
        with tuned_gc():
            env.run(until=int(until_ns) * PS_PER_NS)
        return
    from .progress import run_with_progress
    run_with_progress(env, until=None, quiet=quiet, label="flows", work=be.flows_completed,
                      total_work=n_flows)


def flow_status(summary: dict, n_flows: int, *, stopped: bool = False) -> str:
    """``"complete"`` when every flow finished, else ``"failed: ..."`` saying how many did not.

    A flow abandoned by the backend (``failed``, e.g. after ``max_timeouts``
    retransmission timeouts) or never finished makes the run failed; with
    ``stopped`` (``until_ns``) unfinished flows are expected and only
    abandoned ones count. ``netsim flows`` exits 2 on a failed run.

    >>> flow_status({"completed": 3, "failed": 0}, 3), flow_status({"completed": 1, "failed": 2}, 3)
    ('complete', 'failed: 1 of 3 flows completed, 2 abandoned by the backend')
    """
    done, failed = int(summary.get("completed", 0)), int(summary.get("failed", 0) or 0)
    missing = 0 if stopped else max(0, n_flows - done)
    if not failed and not missing:
        return "complete"
    msg = f"failed: {done} of {n_flows} flows completed, {failed} abandoned by the backend"
    deadlocks = summary.get("pfc_deadlocks")   # the packet backend's report (backends/packet/pfcwatch.py)
    if deadlocks:
        msg += f" after a PFC deadlock of {', '.join(deadlocks[0]['ports'])}"
    return msg
