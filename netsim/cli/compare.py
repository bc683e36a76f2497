"""``netsim compare DIR_A DIR_B ...``: runs of the same flows side by side.

Reads each run directory's ``fct.csv``, ``summary.json`` and ``queues.csv``
(written by ``netsim flows`` / ``netsim run``) and prints one column per run:

* FCT p50/p95/p99 (µs) in size buckets < 100 KB, 100 KB–10 MB, ≥ 10 MB;
* slowdown (FCT / ideal FCT) p50/p99 over all flows;
* drops, retransmitted bytes, timeouts, PFC pauses and total pause time, CNPs,
  ECN marks (from summary.json);
* for ``netsim run`` directories, the mean iteration time (ms); their
  network counters are read from summary.json's ``network`` section;
* queue p50/p99/max (bytes) of the busiest egress queue (highest time-average),
  time-weighted: ``queues.csv`` writes a row only when a queue is or was just
  non-zero, so each row holds until that queue's next row.

A missing file leaves its rows empty ("-"). ``--format csv`` prints CSV. A run
that did not complete (``summary.json`` status, see :func:`netsim.analysis.io.run_status`)
gets one warning line on stderr: its column covers the flows that finished.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd

from ..analysis.io import check_run_dir
from ..errors import InputError

BUCKETS = ((0, 100_000, "<100KB"), (100_000, 10_000_000, "100KB-10MB"), (10_000_000, None, ">=10MB"))


def _read_csv(path: str) -> pd.DataFrame | None:
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return None


def step_percentiles(times, values, end, qs=(50, 99)) -> list[float]:
    """Time-weighted percentiles of a step function (value i holds from times[i] to times[i+1]).

    >>> step_percentiles([0, 10], [0, 100], 20, qs=(25, 75))
    [0.0, 100.0]
    """
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if len(t) == 0:
        return [float("nan")] * len(qs)
    dur = np.diff(np.append(t, max(float(end), t[-1])))
    order = np.argsort(v, kind="stable")
    v, w = v[order], dur[order]
    cw = np.cumsum(w)
    total = cw[-1]
    if total <= 0:
        return [float(np.percentile(v, q)) for q in qs]
    return [float(v[min(np.searchsorted(cw, q / 100.0 * total, side="left"), len(v) - 1)]) for q in qs]


def busiest_queue(queues: pd.DataFrame, end_ns: float | None = None) -> tuple[str, list[float]]:
    """``("node->port/prio", [p50, p99, max])`` of the queue with the highest time-average."""
    best, best_mean, best_q = "", -1.0, [float("nan")] * 3
    end = float(end_ns if end_ns is not None else queues["time_ns"].max())
    for key, g in queues.groupby(["node", "port", "priority"], sort=True):
        t = g["time_ns"].to_numpy(dtype=float)
        v = g["queue_bytes"].to_numpy(dtype=float)
        dur = np.diff(np.append(t, max(end, t[-1])))
        span = end - t[0]
        mean = float((v * dur).sum() / span) if span > 0 else float(v.mean())
        if mean > best_mean:
            p50, p99 = step_percentiles(t, v, end)
            best, best_mean, best_q = f"{key[0]}->{key[1]}/p{key[2]}", mean, [p50, p99, float(v.max())]
    return best, best_q


def run_metrics(run_dir: str) -> dict:
    """One run's comparison metrics (NaN where the data is missing)."""
    check_run_dir(run_dir)
    m: dict = {}
    fct = _read_csv(os.path.join(run_dir, "fct.csv"))
    summary = {}
    sp = os.path.join(run_dir, "summary.json")
    if os.path.exists(sp):
        with open(sp, encoding="utf-8") as fh:
            try:
                summary = json.load(fh)
            except ValueError as exc:
                raise InputError(f"not valid JSON ({exc})", source=sp) from None
    # netsim run nests the backend's counters under "network"; netsim flows has them at the top
    net = summary.get("network")
    if isinstance(net, dict):
        summary = {**net, **summary}
    m["cc"] = summary.get("cc", "")
    m["flows"] = len(fct) if fct is not None else np.nan
    for lo, hi, label in BUCKETS:
        if fct is not None:
            sel = fct[(fct["size_bytes"] >= lo) & ((fct["size_bytes"] < hi) if hi else True)]["fct_ns"] / 1e3
        else:
            sel = pd.Series(dtype=float)
        m[f"FCT {label} n"] = len(sel)
        for q in (50, 95, 99):
            m[f"FCT {label} p{q} (us)"] = float(np.percentile(sel, q)) if len(sel) else np.nan
    sd = fct["slowdown"].dropna() if fct is not None and "slowdown" in fct else pd.Series(dtype=float)
    for q in (50, 99):
        m[f"slowdown p{q}"] = float(np.percentile(sd, q)) if len(sd) else np.nan
    for key, label in (("drops", "drops"), ("retransmitted_bytes", "retransmitted bytes"),
                       ("timeouts", "timeouts"), ("pfc_pauses", "PFC pauses"), ("cnps", "CNPs"),
                       ("ecn_marks", "ECN marks")):
        m[label] = summary.get(key, np.nan)
    pt = summary.get("pfc_pause_time_ns")
    m["PFC pause time (us)"] = sum(pt.values()) / 1e3 if isinstance(pt, dict) else np.nan
    if "jain_fairness" in summary:
        m["Jain index"] = summary["jain_fairness"] if summary["jain_fairness"] is not None else np.nan
    queues = _read_csv(os.path.join(run_dir, "queues.csv"))
    if queues is not None and len(queues):
        name, (p50, p99, mx) = busiest_queue(queues, summary.get("sim_time_ns"))
        m["busiest queue"] = name
        m["queue p50 (B)"], m["queue p99 (B)"], m["queue max (B)"] = p50, p99, mx
    else:
        m["busiest queue"] = ""
        m["queue p50 (B)"] = m["queue p99 (B)"] = m["queue max (B)"] = np.nan
    m["sim time (us)"] = summary.get("sim_time_ns", np.nan) / 1e3 if "sim_time_ns" in summary else np.nan
    if summary.get("iteration_time_s") is not None:  # a netsim run directory
        m["iteration time (ms)"] = float(summary["iteration_time_s"]) * 1e3
    return m


def compare_runs(run_dirs: list[str]) -> pd.DataFrame:
    """Rows = metrics, one column per run (named by its directory)."""
    cols = {}
    for d in run_dirs:
        name = os.path.basename(os.path.normpath(d)) or d
        while name in cols:
            name += "'"
        cols[name] = run_metrics(d)
    return pd.DataFrame(cols)


def _fmt(v) -> str:
    if isinstance(v, str):
        return v or "-"
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "-"
    if isinstance(v, (int, np.integer)) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v):,}"
    return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.0f}"


def format_table(df: pd.DataFrame) -> str:
    w0 = max(len(str(i)) for i in df.index)
    cells = {c: [_fmt(v) for v in df[c]] for c in df.columns}
    widths = {c: max(len(str(c)), *(len(s) for s in cells[c])) for c in df.columns}
    lines = [" " * w0 + "  " + "  ".join(f"{c:>{widths[c]}}" for c in df.columns)]
    for i, idx in enumerate(df.index):
        lines.append(f"{idx:<{w0}}  " + "  ".join(f"{cells[c][i]:>{widths[c]}}" for c in df.columns))
    return "\n".join(lines)


def run(args) -> int:
    from .args import warn_if_incomplete
    df = compare_runs(args.runs)
    for d in args.runs:        # percentiles are over the flows that finished: say so for a run that did not
        warn_if_incomplete("compare", d, "its column covers the flows that finished")
    if args.format == "csv":
        print(df.to_csv(index_label="metric"), end="")
    else:
        print(format_table(df))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("compare", help="side-by-side FCT/queue/drop table of several runs",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", metavar="DIR", help="run directories (netsim flows/run --out)")
    p.add_argument("--format", choices=("text", "csv"), default="text")
    p.set_defaults(func=run)
