"""Metrics of one run: FCT/slowdown percentiles, queues, PFC pause time,
fairness, iteration breakdown and per-rank busy/exposed time.

Definitions (the tests check them on hand-made traces):

* percentiles use numpy's default ("linear" interpolation between order
  statistics); ``p50`` of 1..100 is 50.5;
* size buckets are half-open ``[lo, hi)`` in bytes: with the default edges
  ``(100_000, 10_000_000)`` they are ``<100KB``, ``100KB-10MB``, ``>=10MB``;
* PFC pause time pairs each ``pause`` with the next ``resume`` of the same
  (node, port, priority); a repeated ``pause`` while paused extends the same
  pause (as a refreshed XOFF quanta does); a pause still open at the end counts
  until ``end_ns``;
* Jain's index J = (Σx)² / (n·Σx²) over the flows active in a window, x being
  each flow's mean throughput there (a flow's bytes spread evenly over its
  lifetime when taken from ``fct``; the mean of ``rate_bps`` samples from ``cc``);
* busy time of a rank in a stream is the measure of the union of its op
  intervals; exposed communication is communication time not covered by any
  compute interval of the same rank.

Left out: confidence intervals, time-weighted queue statistics (queue samples
are periodic, so sample percentiles are time percentiles).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..units import format_size

DEFAULT_SIZE_EDGES: tuple[int, ...] = (100_000, 10_000_000)
DEFAULT_PERCENTILES: tuple[float, ...] = (50, 95, 99)
BREAKDOWN_KEYS: tuple[str, ...] = ("compute", "tp", "pp", "dp", "ep", "bubble", "other")


def size_bucket_labels(edges: Sequence[int] = DEFAULT_SIZE_EDGES) -> list[str]:
    """Labels of the half-open size buckets cut at ``edges`` (bytes).

    >>> size_bucket_labels()
    ['<100KB', '100KB-10MB', '>=10MB']
    """
    e = [format_size(x) for x in edges]
    return [f"<{e[0]}"] + [f"{a}-{b}" for a, b in zip(e, e[1:])] + [f">={e[-1]}"]


def size_buckets(sizes, edges: Sequence[int] = DEFAULT_SIZE_EDGES) -> pd.Categorical:
    """Ordered categorical of size buckets for each size (bytes)."""
    idx = np.searchsorted(np.asarray(edges), np.asarray(sizes, dtype=float), side="right")
    labels = size_bucket_labels(edges)
    return pd.Categorical.from_codes(idx, categories=labels, ordered=True)


def _pcols(values: np.ndarray, ps: Sequence[float], prefix: str, suffix: str) -> dict:
    out = {f"{prefix}_mean{suffix}": float(np.mean(values)) if len(values) else np.nan}
    for p in ps:
        out[f"{prefix}_p{p:g}{suffix}"] = float(np.percentile(values, p)) if len(values) else np.nan
    out[f"{prefix}_max{suffix}"] = float(np.max(values)) if len(values) else np.nan
    return out


def fct_table(fct: pd.DataFrame, by: str | Sequence[str] = "size",
              edges: Sequence[int] = DEFAULT_SIZE_EDGES,
              percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> pd.DataFrame:
    """FCT (ns) and slowdown statistics per group of flows.

    ``by="size"`` groups by size bucket (every bucket listed, empty ones with
    ``flows == 0``); any other value names fct columns (``"group"``, ``"tag"``,
    ``"cc"``, ``"op"``, ``["group", "collective"]``); ``by=None`` gives one row ``all``.
    Columns: flows, bytes, fct_mean_ns, fct_p50_ns…, fct_max_ns, slowdown_mean…
    """
    if by == "size":
        keys = pd.Series(size_buckets(fct["size_bytes"], edges), index=fct.index, name="size_bucket")
        groups = [(lab, fct[keys == lab]) for lab in keys.cat.categories]
        index = pd.Index([g[0] for g in groups], name="size_bucket")
    elif by is None:
        groups, index = [("all", fct)], pd.Index(["all"], name="flows")
    else:
        cols = [by] if isinstance(by, str) else list(by)
        grouped = list(fct.groupby(cols, sort=True)) if len(fct) else []
        groups = [(k, g) for k, g in grouped]
        if len(cols) == 1:
            index = pd.Index([k[0] if isinstance(k, tuple) else k for k, _ in groups], name=cols[0])
        else:
            index = pd.MultiIndex.from_tuples([k for k, _ in groups], names=cols)
    rows = []
    for _, g in groups:
        row = {"flows": len(g), "bytes": int(g["size_bytes"].sum())}
        row.update(_pcols(g["fct_ns"].to_numpy(dtype=float), percentiles, "fct", "_ns"))
        sd = g["slowdown"].to_numpy(dtype=float)
        row.update(_pcols(sd[~np.isnan(sd)], percentiles, "slowdown", ""))
        rows.append(row)
    return pd.DataFrame(rows, index=index)


def queue_table(queues: pd.DataFrame, percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> pd.DataFrame:
    """Queue-occupancy statistics (bytes) per (node, port, priority) from samples."""
    rows, keys = [], []
    for key, g in queues.groupby(["node", "port", "priority"], sort=True):
        keys.append(key)
        row = {"samples": len(g)}
        row.update(_pcols(g["queue_bytes"].to_numpy(dtype=float), percentiles, "queue", "_bytes"))
        rows.append(row)
    index = pd.MultiIndex.from_tuples(keys, names=["node", "port", "priority"]) if keys else \
        pd.MultiIndex.from_arrays([[], [], []], names=["node", "port", "priority"])
    return pd.DataFrame(rows, index=index, columns=None if rows else
                        ["samples"] + list(_pcols(np.array([]), percentiles, "queue", "_bytes")))


def pfc_pause_table(pfc: pd.DataFrame, end_ns: int | None = None) -> pd.DataFrame:
    """Pause count and total pause time (ns) per (node, port, priority).

    ``end_ns`` closes pauses still open at the end (default: the last PFC event time).
    """
    cols = ["node", "port", "priority", "pauses", "pause_time_ns", "paused_at_end"]
    if not len(pfc):
        return pd.DataFrame({c: pd.Series(dtype="int64" if c in ("priority", "pauses", "pause_time_ns")
                                          else ("bool" if c == "paused_at_end" else "object"))
                             for c in cols})
    if end_ns is None:
        end_ns = int(pfc["time_ns"].max())
    rows = []
    ordered = pfc.reset_index(drop=True).sort_values("time_ns", kind="stable")
    for (node, port, prio), g in ordered.groupby(["node", "port", "priority"], sort=True):
        since, total, count = None, 0, 0
        for t, ev in zip(g["time_ns"].to_numpy(), g["event"].to_numpy()):
            if ev == "pause" and since is None:
                since, count = int(t), count + 1
            elif ev == "resume" and since is not None:
                total += int(t) - since
                since = None
        open_ = since is not None
        if open_:
            total += max(0, int(end_ns) - since)
        rows.append((node, port, int(prio), count, total, open_))
    return pd.DataFrame(rows, columns=cols)


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index (Σx)²/(n·Σx²); NaN for no values or all zero.

    >>> jain_index([1, 1, 1, 1])
    1.0
    >>> jain_index([1, 0, 0, 0])
    0.25
    """
    x = np.asarray(list(values), dtype=float)
    if len(x) == 0 or not np.any(x):
        return float("nan")
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))


def flow_rates_in_window(fct: pd.DataFrame, t0_ns: int, t1_ns: int) -> pd.Series:
    """Mean throughput (bit/s) of each flow active in ``[t0_ns, t1_ns)``, bytes spread evenly."""
    start = fct["start_ns"].to_numpy(dtype=float)
    end = fct["end_ns"].to_numpy(dtype=float)
    dur = np.maximum(end - start, 1.0)
    overlap = np.clip(np.minimum(end, t1_ns) - np.maximum(start, t0_ns), 0, None)
    active = (start < t1_ns) & (end > t0_ns)
    bits = fct["size_bytes"].to_numpy(dtype=float) * 8 * overlap / dur
    rate = bits / ((t1_ns - t0_ns) * 1e-9)
    return pd.Series(rate[active], index=fct["flow_id"].to_numpy()[active], name="rate_bps")


def jain_fairness(fct: pd.DataFrame, t0_ns: int, t1_ns: int) -> float:
    """Jain's index of the flows' mean throughputs in a window, from ``fct``."""
    return jain_index(flow_rates_in_window(fct, t0_ns, t1_ns))


def cc_rate_bps(cc: pd.DataFrame, max_rate_bps: float | None = None) -> pd.Series:
    """Each cc sample's sending rate (bit/s): ``rate_bps`` where the algorithm
    has one (DCQCN), else the window estimate ``cwnd_bytes·8 / srtt`` (Cubic,
    DCTCP, none), capped at ``max_rate_bps`` (e.g. the NIC rate) if given.

    The window estimate is only meaningful while the flow is window-limited:
    a flow whose cwnd outgrew what its NIC can send (slow start without loss)
    shows a far too high value. For fairness prefer delivered bytes (the
    packet backend's ``jain_fairness`` in summary.json with ``jain_start_ns`` /
    ``jain_window_ns``) or ``rate_bps`` of rate-based algorithms.

    >>> cc_rate_bps(pd.DataFrame({"rate_bps": [5e9, np.nan], "cwnd_bytes": [np.nan, 1000.0],
    ...                           "srtt_ns": [np.nan, 800.0]})).tolist()
    [5000000000.0, 10000000000.0]
    """
    est = cc["cwnd_bytes"] * 8 / (cc["srtt_ns"].where(cc["srtt_ns"] > 0) * 1e-9)
    if max_rate_bps is not None:
        est = est.clip(upper=max_rate_bps)
    return cc["rate_bps"].where(cc["rate_bps"].notna(), est).rename("rate_bps")


def jain_fairness_cc(cc: pd.DataFrame, t0_ns: int, t1_ns: int, column: str = "rate_bps",
                     max_rate_bps: float | None = None) -> float:
    """Jain's index of each flow's mean ``column`` over the cc samples in ``[t0_ns, t1_ns)``.

    ``column="rate_bps"`` (rate-based algorithms such as DCQCN), ``"cwnd_bytes"``
    (window-based flows with equal RTTs), or ``"rate"`` for :func:`cc_rate_bps`
    (see its caveat).
    """
    w = cc[(cc["time_ns"] >= t0_ns) & (cc["time_ns"] < t1_ns)]
    vals = cc_rate_bps(w, max_rate_bps) if column == "rate" else w[column]
    return jain_index(vals.groupby(w["flow_id"]).mean().dropna())


def iteration_breakdown(summary: dict) -> pd.DataFrame:
    """The critical-path breakdown of ``summary.json`` as a table (seconds, fraction)."""
    bd = summary.get("breakdown_s") or {}
    keys = list(BREAKDOWN_KEYS) + sorted(k for k in bd if k not in BREAKDOWN_KEYS)
    sec = np.array([float(bd.get(k, 0.0) or 0.0) for k in keys])
    total = float(summary.get("iteration_time_s") or sec.sum() or 0.0)
    frac = sec / total if total > 0 else np.full(len(sec), np.nan)
    return pd.DataFrame({"seconds": sec, "fraction": frac}, index=pd.Index(keys, name="component"))


def merge_intervals(starts, ends) -> np.ndarray:
    """Union of intervals as a sorted (k, 2) array of disjoint [start, end).

    >>> merge_intervals([0, 5, 2], [3, 6, 4]).tolist()
    [[0, 4], [5, 6]]
    """
    iv = sorted((int(s), int(e)) for s, e in zip(starts, ends) if e > s)
    out: list[list[int]] = []
    for s, e in iv:
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def _measure(iv: np.ndarray) -> int:
    return int((iv[:, 1] - iv[:, 0]).sum()) if len(iv) else 0


def _intersection(a: np.ndarray, b: np.ndarray) -> int:
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i, 0], b[j, 0]), min(a[i, 1], b[j, 1])
        if hi > lo:
            total += int(hi - lo)
        if a[i, 1] < b[j, 1]:
            i += 1
        else:
            j += 1
    return total


def rank_busy_time(ops: pd.DataFrame, iteration: int | None = None) -> pd.DataFrame:
    """Busy time (ns) per rank and op kind, plus ``exposed_comm_ns``.

    Rows are ranks; one column per kind (union of that kind's intervals), and
    ``exposed_comm_ns`` = communication (any non-compute kind) not overlapped by compute.
    """
    if iteration is not None:
        ops = ops[ops["iteration"] == iteration]
    kinds = sorted(ops["kind"].unique(), key=lambda k: (k != "compute", k))
    rows = {}
    for rank, g in ops.groupby("rank", sort=True):
        row = {}
        for k in kinds:
            gk = g[g["kind"] == k]
            row[f"{k}_ns"] = _measure(merge_intervals(gk["start_ns"], gk["end_ns"]))
        comp = merge_intervals(*(g.loc[g["kind"] == "compute", c] for c in ("start_ns", "end_ns")))
        comm = merge_intervals(*(g.loc[g["kind"] != "compute", c] for c in ("start_ns", "end_ns")))
        row["exposed_comm_ns"] = _measure(comm) - _intersection(comm, comp)
        rows[int(rank)] = row
    cols = [f"{k}_ns" for k in kinds] + ["exposed_comm_ns"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols).rename_axis("rank")
