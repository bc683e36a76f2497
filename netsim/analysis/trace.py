"""Chrome trace-event export (``trace.json``) for Perfetto / chrome://tracing.

Layout of the timeline:

* one process per **rank** (``pid`` = rank, named ``rank N``) with one thread
  per **stream**: ``compute`` first, then one per communication kind
  (``tp``, ``pp``, ``dp``, ``ep``, …) from ``ops.csv``. Ops are complete
  events (``ph: "X"``). Ops of one stream that overlap in time (e.g. two DP
  buckets in flight) go to extra lanes ``dp #2``, ``dp #3`` so that complete
  events never overlap within a thread and nothing is hidden;
* one process per **link** with the flows that crossed it as async events
  (``ph: "b"``/``"e"``, unique ``id``), so overlapping flows stack. Without a
  topology a "link" is the ``src->dst`` node pair; with ``graph`` every flow
  is mapped to the directed links of the path its backend routed it on
  (``netsim.topology.Router`` with the row's ECMP key ``path_key``);
* optionally one counter track per switch port from ``queues.csv``;
* with ``--fast-forward on`` (packet backend, issue #21), a process
  ``fast-forward`` with one complete event per skipped interval and
  component, read from ``fast_forward.csv`` (name ``skip`` or ``skip N
  cycles``; args: the frozen ``links`` and ``flows``). Jumps of separate
  components may overlap in time, so they take lanes like the ops do.

Timestamps are µs (the format's unit) with ns precision; ``displayTimeUnit``
is ``ns``. ``otherData`` says how the trace was built (``ops``, ``flows``,
``queues``: per item, aggregated or omitted, and why) and holds nothing
that depends on where the run was written, so identical runs give identical
files.

Size: the file is written event by event (bounded memory) and kept within
:data:`MAX_TRACE_EVENTS`. Beyond it flows are aggregated into one
throughput counter per link (:mod:`netsim.analysis.traceagg`) and, if the
ops alone exceed half of it, ops into one event per rank, stream and
iteration; the queue counters are left out when they would not fit.

The rank processes are built by :mod:`netsim.analysis.traceops`, aggregated
link counters by :mod:`netsim.analysis.traceagg`.

Left out: flow arrows between ops and flows, per-packet events.
"""
from __future__ import annotations

import csv
import json
import os
from typing import Iterator

import pandas as pd

from ..records import atomic_output
from .io import Run
from .traceagg import FlowLinks, bin_bytes, coarsen, link_key, row_keys, throughput_events, used_links
from .tracesource import FLOW_COLUMNS, TraceSource
from .traceops import STREAM_ORDER, aggregate_ops  # noqa: F401 (re-exported)
from .traceops import lanes as _lanes, meta as _meta, rank_events as _rank_events, us as _us
from .traffic import natural_key

#: the packet backend's trace of skipped intervals (netsim.backends.packet.fftrace.SKIP_FILE)
SKIP_FILE = "fast_forward.csv"
#: Events beyond which the trace is aggregated. chrome://tracing reads the whole
#: file into one JavaScript string, capped by V8 at 2**29 - 24 characters (about
#: 512 MiB) on 64-bit builds, and Perfetto's UI imports JSON in the browser's
#: memory as well. Our events take 100-250 bytes, so 1 M events is 100-250 MB:
#: openable in both with at least a 2x margin.
MAX_TRACE_EVENTS = 1_000_000
#: Queue samples above which the queue counters are left out (as before: they
#: would crowd the link tracks; the queues are in queues.csv).
MAX_QUEUE_ROWS = 200_000
#: Time bins an aggregated link counter starts from (halved until the counters fit the
#: budget); 1,024 bins of the ~10,000 links of a 1,024-GPU fabric are ~80 MiB of floats.
MAX_AGG_BINS = 1_024
#: Most link x bin cells (fewer bins on fabrics with more links): 16 MiB per float array
#: (a 1,024-GPU fabric's 9,216 directed links get 227 bins, ~4 ms each over a 1 s step).
MAX_AGG_CELLS = 2 << 20
#: Events encoded per ``json.dumps`` call while streaming (a few MiB of text).
WRITE_BATCH_EVENTS = 20_000


def _flow_links(fct: pd.DataFrame, router, limit: int) -> dict[str, list[int]] | None:
    """Link name -> rows of the flows on it; None once more than ``limit`` flow-link pairs."""
    links: dict[str, list[int]] = {}
    n = 0
    for i, (key, s, d) in enumerate(zip(row_keys(fct), fct["src"], fct["dst"])):
        if router is None:
            path = (s, d)
        elif s == d:            # a local copy: on no link
            continue
        else:
            path = router.path(s, d, key)   # the path the backend routed it on (its ECMP key)
        n += len(path) - 1
        if n > limit:
            return None
        for u, v in zip(path, path[1:]):
            links.setdefault(f"{u}->{v}", []).append(i)
    return links


def _link_events(fct: pd.DataFrame, links: dict[str, list[int]], pid0: int) -> Iterator[dict]:
    cols = {c: fct[c].tolist() for c in FLOW_COLUMNS}
    next_id = 1
    for n, link in enumerate(sorted(links, key=link_key)):
        pid = pid0 + n
        yield from _meta(pid, f"link {link}", pid)
        yield from _meta(pid, "flows", 0, tid=0)
        for i in sorted(links[link], key=lambda i: (cols["start_ns"][i], cols["flow_id"][i])):
            name = cols["op"][i] or cols["tag"][i] or f"flow {cols['flow_id'][i]}"
            args = {"flow_id": int(cols["flow_id"][i]), "size_bytes": int(cols["size_bytes"][i]),
                    "src": cols["src"][i], "dst": cols["dst"][i]}
            if cols["group"][i]:
                args.update(group=cols["group"][i], iteration=int(cols["iteration"][i]))
            common = {"cat": "flow", "name": name, "pid": pid, "tid": 0, "id": next_id}
            yield {**common, "ph": "b", "ts": _us(cols["start_ns"][i]), "args": args}
            yield {**common, "ph": "e", "ts": _us(cols["end_ns"][i])}
            next_id += 1


def _queue_events(queues: pd.DataFrame, pid0: int) -> Iterator[dict]:
    q = queues.groupby(["node", "port", "time_ns"], sort=True)["queue_bytes"].sum().reset_index()
    ports = sorted({(a, b) for a, b in zip(q["node"], q["port"])},
                   key=lambda p: (natural_key(p[0]), natural_key(p[1])))
    for n, (node, port) in enumerate(ports):
        pid = pid0 + n
        yield from _meta(pid, f"queue {node}->{port}", pid)
        g = q[(q["node"] == node) & (q["port"] == port)]
        last = None
        for t, v in zip(g["time_ns"].tolist(), g["queue_bytes"].tolist()):
            if v != last:
                yield {"ph": "C", "name": "queue_bytes", "pid": pid, "tid": 0, "ts": _us(t),
                       "args": {"bytes": int(v)}}
                last = v


def _skip_part(path: str, pid: int) -> tuple[Iterator[dict], str]:
    """(events, description) of the skipped intervals in ``fast_forward.csv`` (one ``X`` per jump)."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = [(int(r["start_ns"]), int(r["end_ns"]), r["links"], r["flows"], int(r["cycles"]))
                for r in csv.DictReader(fh)]

    def events() -> Iterator[dict]:
        lanes = _lanes([r[0] for r in rows], [r[1] for r in rows])
        yield from _meta(pid, "fast-forward", pid)
        for lane in sorted(set(lanes)):
            yield from _meta(pid, "skipped" if lane == 0 else f"skipped #{lane + 1}", lane, tid=lane)
        for (t0, t1, links, flows, cycles), lane in zip(rows, lanes):
            yield {"ph": "X", "name": f"skip {cycles} cycles" if cycles else "skip", "cat": "fast-forward",
                   "pid": pid, "tid": lane, "ts": _us(t0), "dur": _us(t1 - t0),
                   "args": {"links": links, "flows": flows, "cycles": cycles}}
    return events(), f"skipped intervals ({len(rows)} from {SKIP_FILE})"


def _pid0(ops: pd.DataFrame) -> int:
    top = int(ops["rank"].max()) + 1 if len(ops) else 0
    pid0 = 1000
    while pid0 <= top:
        pid0 *= 10
    return pid0


def _link_part(src: TraceSource, budget: int, graph, router, seed: int, pid0: int):
    """(events, number of link processes, description) of the flows within ``budget`` events."""
    if not src.n_flows:
        return iter(()), 0, "none (no flows)"
    if graph is not None and router is None:
        from ..topology import Router
        router = Router(graph, seed=seed)
    if 2 * src.n_flows <= budget:
        fct = pd.concat(list(src.flow_chunks()), ignore_index=True)
        links = _flow_links(fct, router, budget // 2)
        if links is not None:
            return _link_events(fct, links, pid0), len(links), f"per flow on each link of its path ({len(fct)} flows)"
    t0 = t1 = None
    pairs: set = set()
    for df in src.flow_chunks():
        if len(df):
            a, b = int(df["start_ns"].min()), int(df["end_ns"].max())
            t0, t1 = (a, b) if t0 is None else (min(t0, a), max(t1, b))
            if router is None:
                pairs.update(zip(df["src"], df["dst"]))
    links = FlowLinks(router, graph, pairs)
    n_bins = max(1, min(MAX_AGG_BINS, MAX_AGG_CELLS // max(1, len(links.names))))
    width = max(1, -(-(t1 - t0 + 1) // n_bins))
    binned, width = coarsen(bin_bytes(src.flow_chunks(), links, t0, width, n_bins), width, budget)
    why = (f"aggregated: throughput per link in {binned.shape[1]} bins of {width} ns ({src.n_flows} flows; "
           f"per-flow events would exceed the {budget}-event budget)")
    return throughput_events(binned, links.names, pid0, t0, width, _meta), used_links(binned), why


def plan_events(src: TraceSource, graph=None, router=None, seed: int = 0, queues: bool = True,
                max_events: int = MAX_TRACE_EVENTS, max_queue_rows: int = MAX_QUEUE_ROWS, skips: str | None = None):
    """(event iterator, metadata) of a trace of ``src`` within about ``max_events`` events.

    ``skips``: the run's ``fast_forward.csv``, if any (its skipped intervals, one event per jump).
    """
    meta = {"generator": "netsim", "max_events": max_events}
    ops, extra = src.ops, None
    if len(ops) > max_events // 2:
        ops, extra = aggregate_ops(ops)
        meta["ops"] = (f"aggregated: one event per rank, stream and iteration ({len(src.ops)} ops > "
                       f"{max_events // 2})")
    else:
        meta["ops"] = f"per op ({len(ops)} ops)" if len(ops) else "none (no ops)"
    pid0 = _pid0(src.ops)
    op_events = len(ops) + 4 * len(ops[["rank", "kind"]].drop_duplicates()) if len(ops) else 0  # + metadata
    link_ev, n_links, meta["flows"] = _link_part(src, max(0, max_events - op_events), graph, router, seed, pid0)
    parts = [_rank_events(ops, extra), link_ev]
    if skips is not None:     # its pid: after the links, before the queues (pid0 * (2 + n_links // pid0))
        ff_events, meta["fast_forward"] = _skip_part(skips, pid0 * (2 + n_links // pid0) - 1)
        parts.append(ff_events)
    if not queues or not src.n_queue_rows:
        meta["queues"] = "none" if queues else "not asked for"
    elif src.n_queue_rows > max_queue_rows:
        meta["queues"] = f"omitted ({src.n_queue_rows} samples > {max_queue_rows}; see queues.csv)"
    else:
        parts.append(_queue_events(src.queues(), pid0 * (2 + n_links // pid0)))
        meta["queues"] = f"included ({src.n_queue_rows} samples)"
    return (e for part in parts for e in part), meta


def build_trace(run: Run, graph=None, router=None, seed: int = 0, queues: bool = True,
                max_queue_rows: int = MAX_QUEUE_ROWS, max_events: int = MAX_TRACE_EVENTS) -> dict:
    """The trace-event document of a :class:`Run` as a dict (see module doc)."""
    events, meta = plan_events(TraceSource.of_run(run), graph, router, seed, queues, max_events, max_queue_rows)
    events = list(events)
    meta["events"] = len(events)
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": meta}


def _write_batch(fh, buf: list[dict], n: int) -> int:
    """Append ``buf``'s events (one C-encoder call for the batch) after ``n`` written; clear it; return the count."""
    if buf:
        text = json.dumps(buf, separators=(",", ":"))[1:-1]
        fh.write(("," if n else "") + text)
        n += len(buf)
        buf.clear()
    return n


def write_trace(run_dir: str | os.PathLike, out: str | os.PathLike | None = None, graph=None,
                router=None, seed: int = 0, queues: bool = True, *, info: dict | None = None,
                max_events: int = MAX_TRACE_EVENTS) -> str:
    """Write ``trace.json`` (default: inside ``run_dir``), streamed and atomically; return its path.

    Works on whatever the directory holds (missing tables are skipped). Pass
    ``graph`` (and the run's ``seed``) to put flows on the links of their
    paths instead of on ``src->dst`` pairs. ``info``, if given, receives the
    trace's ``otherData`` (how it was built, ``events`` written).
    """
    run_dir = os.fspath(run_dir)
    skips = os.path.join(run_dir, SKIP_FILE)
    events, meta = plan_events(TraceSource.of_dir(run_dir), graph, router, seed, queues, max_events,
                               skips=skips if os.path.exists(skips) else None)
    if meta["flows"].startswith("none") and os.path.exists(os.path.join(run_dir, "fct_ops.csv")):
        meta["flows"] = "none (--fct per-op: per-op flow aggregates in fct_ops.csv)"
    out = os.fspath(out) if out is not None else os.path.join(run_dir, "trace.json")
    n = 0
    with atomic_output(out) as fh:
        fh.write('{"traceEvents":[')
        buf: list[dict] = []
        for ev in events:
            buf.append(ev)
            if len(buf) >= WRITE_BATCH_EVENTS:
                n = _write_batch(fh, buf, n)
        n = _write_batch(fh, buf, n)
        meta["events"] = n
        fh.write('],"displayTimeUnit":"ns","otherData":' + json.dumps(meta, separators=(",", ":")) + "}\n")
    if info is not None:
        info.update(meta)
    return out
