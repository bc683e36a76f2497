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
  is mapped to the directed links of its path (``netsim.topology.Router``);
* optionally one counter track per switch port from ``queues.csv``.

Timestamps are µs (the format's unit) with ns precision; ``displayTimeUnit``
is ``ns``. Left out: flow arrows between ops and flows, per-packet events.
"""
from __future__ import annotations

import json
import os

import pandas as pd

from .io import Run, load_run
from .traffic import natural_key

STREAM_ORDER = ("compute", "tp", "pp", "dp", "ep")


def _us(ns) -> float:
    return int(ns) / 1000.0


def _lanes(starts, ends) -> list[int]:
    """Greedy interval partitioning: a lane per op so a lane's ops never overlap."""
    order = sorted(range(len(starts)), key=lambda i: (starts[i], ends[i], i))
    lane_end: list[int] = []
    out = [0] * len(starts)
    for i in order:
        for k, e in enumerate(lane_end):
            if e <= starts[i]:
                lane_end[k] = ends[i]
                out[i] = k
                break
        else:
            lane_end.append(ends[i])
            out[i] = len(lane_end) - 1
    return out


def _meta(pid, name, sort, tid=None) -> list[dict]:
    if tid is None:
        return [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}},
                {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": sort}}]
    return [{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}},
            {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": sort}}]


def _rank_events(ops: pd.DataFrame) -> list[dict]:
    if not len(ops):
        return []
    kinds = sorted(ops["kind"].unique(), key=lambda k: (STREAM_ORDER.index(k) if k in STREAM_ORDER
                                                       else len(STREAM_ORDER), k))
    placed = []  # (rank, kind, lane, op, iteration, group, size, start, end)
    for (rank, kind), g in ops.groupby(["rank", "kind"], sort=True):
        g = g.sort_values(["start_ns", "end_ns", "op"], kind="stable")
        s, e = g["start_ns"].tolist(), g["end_ns"].tolist()
        for lane, op, it, grp, size, t0, t1 in zip(_lanes(s, e), g["op"].tolist(), g["iteration"].tolist(),
                                                    g["group"].tolist(), g["size_bytes"].tolist(), s, e):
            placed.append((int(rank), kind, lane, op, it, grp, size, t0, t1))
    streams = sorted({(p[1], p[2]) for p in placed}, key=lambda kl: (kinds.index(kl[0]), kl[1]))
    tids = {kl: i for i, kl in enumerate(streams)}
    meta: list[dict] = []
    for rank in sorted({p[0] for p in placed}):
        meta += _meta(rank, f"rank {rank}", rank)
        for kind, lane in sorted({(p[1], p[2]) for p in placed if p[0] == rank}, key=tids.get):
            name = kind if lane == 0 else f"{kind} #{lane + 1}"
            meta += _meta(rank, name, tids[(kind, lane)], tid=tids[(kind, lane)])
    body = [{"ph": "X", "name": str(op), "cat": kind, "pid": rank, "tid": tids[(kind, lane)],
             "ts": _us(t0), "dur": _us(t1 - t0),
             "args": {"iteration": int(it), "group": str(grp), "size_bytes": int(size)}}
            for rank, kind, lane, op, it, grp, size, t0, t1 in sorted(placed, key=lambda p: (p[0], p[7], tids[(p[1], p[2])]))]
    return meta + body


def _link_events(fct: pd.DataFrame, pid0: int, graph=None, router=None, seed: int = 0) -> list[dict]:
    if not len(fct):
        return []
    if graph is not None and router is None:
        from ..topology import Router
        router = Router(graph, seed=seed)
    links: dict[str, list[int]] = {}
    for i, (fid, s, d) in enumerate(zip(fct["flow_id"].to_numpy(), fct["src"], fct["dst"])):
        if router is None:
            links.setdefault(f"{s}->{d}", []).append(i)
        else:
            path = router.path(s, d, int(fid))
            for u, v in zip(path, path[1:]):
                links.setdefault(f"{u}->{v}", []).append(i)
    cols = {c: fct[c].tolist() for c in ("flow_id", "size_bytes", "start_ns", "end_ns", "op", "group",
                                          "tag", "iteration", "src", "dst")}
    meta, body, next_id = [], [], 1
    for n, link in enumerate(sorted(links, key=lambda k: tuple(natural_key(x) for x in k.split("->")))):
        pid = pid0 + n
        meta += _meta(pid, f"link {link}", pid) + _meta(pid, "flows", 0, tid=0)
        for i in sorted(links[link], key=lambda i: (cols["start_ns"][i], cols["flow_id"][i])):
            name = cols["op"][i] or cols["tag"][i] or f"flow {cols['flow_id'][i]}"
            args = {"flow_id": int(cols["flow_id"][i]), "size_bytes": int(cols["size_bytes"][i]),
                    "src": cols["src"][i], "dst": cols["dst"][i]}
            if cols["group"][i]:
                args.update(group=cols["group"][i], iteration=int(cols["iteration"][i]))
            common = {"cat": "flow", "name": name, "pid": pid, "tid": 0, "id": next_id}
            body.append({**common, "ph": "b", "ts": _us(cols["start_ns"][i]), "args": args})
            body.append({**common, "ph": "e", "ts": _us(cols["end_ns"][i])})
            next_id += 1
    return meta + body


def _queue_events(queues: pd.DataFrame, pid0: int, max_rows: int) -> list[dict]:
    if not len(queues) or len(queues) > max_rows:
        return []
    q = queues.groupby(["node", "port", "time_ns"], sort=True)["queue_bytes"].sum().reset_index()
    meta, body = [], []
    ports = sorted({(a, b) for a, b in zip(q["node"], q["port"])},
                   key=lambda p: (natural_key(p[0]), natural_key(p[1])))
    for n, (node, port) in enumerate(ports):
        pid = pid0 + n
        meta += _meta(pid, f"queue {node}->{port}", pid)
        g = q[(q["node"] == node) & (q["port"] == port)]
        last = None
        for t, v in zip(g["time_ns"].tolist(), g["queue_bytes"].tolist()):
            if v != last:
                body.append({"ph": "C", "name": "queue_bytes", "pid": pid, "tid": 0, "ts": _us(t),
                             "args": {"bytes": int(v)}})
                last = v
    return meta + body


def build_trace(run: Run, graph=None, router=None, seed: int = 0, queues: bool = True,
                max_queue_rows: int = 200_000) -> dict:
    """The trace-event document of a :class:`Run` as a dict (see module doc)."""
    events = _rank_events(run.ops)
    top = int(run.ops["rank"].max()) + 1 if len(run.ops) else 0
    pid0 = 1000
    while pid0 <= top:
        pid0 *= 10
    link_ev = _link_events(run.fct, pid0, graph, router, seed)
    n_links = sum(1 for e in link_ev if e["name"] == "process_name")
    qpid0 = pid0 * (2 + n_links // pid0)
    events += link_ev
    if queues:
        events += _queue_events(run.queues, qpid0, max_queue_rows)
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"generator": "netsim", "run": run.label}}


def write_trace(run_dir: str | os.PathLike, out: str | os.PathLike | None = None, graph=None,
                router=None, seed: int = 0, queues: bool = True) -> str:
    """Write ``trace.json`` (default: inside ``run_dir``) and return its path.

    Works on whatever the directory holds (missing tables are skipped). Pass
    ``graph`` (and the run's ``seed``) to put flows on the links of their
    paths instead of on ``src->dst`` pairs.
    """
    run = load_run(run_dir)
    doc = build_trace(run, graph=graph, router=router, seed=seed, queues=queues)
    out = os.fspath(out) if out is not None else os.path.join(os.fspath(run_dir), "trace.json")
    with open(out, "w") as fh:
        fh.write(json.dumps(doc, separators=(",", ":")))  # dumps uses the C encoder; dump does not
        fh.write("\n")
    return out
