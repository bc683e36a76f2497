"""The rank side of ``trace.json``: trace-event primitives and one process per rank with its op streams.

Models how ``ops.csv`` becomes Chrome trace events: timestamps in µs with
ns precision (:func:`us`), process/thread name and sort metadata
(:func:`meta`), one thread per stream (``compute`` first, then each
communication kind) with overlapping ops of a stream split into lanes by
greedy interval partitioning (:func:`lanes`), and, for very large runs, one
op per rank, kind and iteration (:func:`aggregate_ops`).  Leaves out links,
queues, skipped intervals and the event budget (:mod:`.trace`).
"""
from __future__ import annotations

from typing import Iterator

import pandas as pd

#: stream (thread) order within a rank; other kinds follow by name
STREAM_ORDER = ("compute", "tp", "pp", "dp", "ep")

def us(ns) -> float:
    """Integer ns as the format's µs (exact to the ns)."""
    return int(ns) / 1000.0

def lanes(starts, ends) -> list[int]:
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

def meta(pid, name, sort, tid=None) -> list[dict]:
    """Name and sort index of process ``pid`` (or of its thread ``tid``)."""
    if tid is None:
        return [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}},
                {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": sort}}]
    return [{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}},
            {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": sort}}]

def _placed(ops: pd.DataFrame) -> list[tuple]:
    """(rank, kind, lane, op, iteration, group, size, start, end) of each op, lanes per (rank, kind)."""
    placed = []
    for (rank, kind), g in ops.groupby(["rank", "kind"], sort=True):
        g = g.sort_values(["start_ns", "end_ns", "op"], kind="stable")
        s, e = g["start_ns"].tolist(), g["end_ns"].tolist()
        for lane, op, it, grp, size, t0, t1 in zip(lanes(s, e), g["op"].tolist(), g["iteration"].tolist(),
                                                    g["group"].tolist(), g["size_bytes"].tolist(), s, e):
            placed.append((int(rank), kind, lane, op, it, grp, size, t0, t1))
    return placed

def rank_events(ops: pd.DataFrame, extra: dict | None = None) -> Iterator[dict]:
    """One process per rank, a thread per stream lane, a complete event per op (``extra``: args per aggregated op)."""
    if not len(ops):
        return
    kinds = sorted(ops["kind"].unique(), key=lambda k: (STREAM_ORDER.index(k) if k in STREAM_ORDER
                                                       else len(STREAM_ORDER), k))
    placed = _placed(ops)
    streams = sorted({(p[1], p[2]) for p in placed}, key=lambda kl: (kinds.index(kl[0]), kl[1]))
    tids = {kl: i for i, kl in enumerate(streams)}
    for rank in sorted({p[0] for p in placed}):
        yield from meta(rank, f"rank {rank}", rank)
        for kind, lane in sorted({(p[1], p[2]) for p in placed if p[0] == rank}, key=tids.get):
            name = kind if lane == 0 else f"{kind} #{lane + 1}"
            yield from meta(rank, name, tids[(kind, lane)], tid=tids[(kind, lane)])
    placed.sort(key=lambda p: (p[0], p[7], tids[(p[1], p[2])]))
    for rank, kind, lane, op, it, grp, size, t0, t1 in placed:
        args = {"iteration": int(it), "group": str(grp), "size_bytes": int(size)}
        if extra is not None:
            args.update(extra[(rank, kind, int(it))])
        yield {"ph": "X", "name": str(op), "cat": kind, "pid": rank, "tid": tids[(kind, lane)],
               "ts": us(t0), "dur": us(t1 - t0), "args": args}

def aggregate_ops(ops: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """One op per (rank, kind, iteration): first start to last end, bytes summed; and each one's op count and busy ns."""
    g = ops.assign(busy=ops["end_ns"] - ops["start_ns"]).groupby(["rank", "kind", "iteration"], sort=True)
    agg = g.agg(start_ns=("start_ns", "min"), end_ns=("end_ns", "max"), size_bytes=("size_bytes", "sum"),
                n=("op", "size"), busy=("busy", "sum")).reset_index()
    agg["op"] = agg["kind"] + " iteration " + agg["iteration"].astype(str)
    agg["group"] = ""
    extra = {(int(r), k, int(i)): {"ops": int(n), "busy_ns": int(b)}
             for r, k, i, n, b in zip(agg["rank"], agg["kind"], agg["iteration"], agg["n"], agg["busy"])}
    return agg, extra
