"""Figures a sweep adds to each point's row from the point's ``fct.csv``.

``netsim flows`` and ``netsim run`` write one row per flow in ``fct.csv``
(columns of :data:`netsim.records.FCT_COLUMNS`); a sweep over congestion
control wants its distribution in the table. For every point that wrote one,
the row gains ``fct.count``, ``fct.mean_ns``, ``fct.p50_ns``, ``fct.p99_ns``,
``fct.max_ns``, ``fct.slowdown_mean`` and ``fct.slowdown_p99`` (percentiles by
linear interpolation between order statistics, numpy's default).

Left out: per-tag or per-size-bucket breakdowns (use netsim.analysis on the
point's folder).
"""
from __future__ import annotations

import csv
import os

import numpy as np

FCT_FILE = "fct.csv"


def fct_figures(out_dir: str) -> dict[str, float | int]:
    """FCT and slowdown statistics of ``out_dir/fct.csv``; empty if absent or without flows.

    >>> import tempfile, pathlib
    >>> d = tempfile.mkdtemp(); _ = pathlib.Path(d, "fct.csv").write_text(
    ...     "flow_id,fct_ns,slowdown\\n0,100,1.0\\n1,300,3.0\\n")
    >>> f = fct_figures(d); f["fct.count"], f["fct.mean_ns"], f["fct.p50_ns"], f["fct.slowdown_p99"]
    (2, 200.0, 200.0, 2.98)
    """
    path = os.path.join(out_dir, FCT_FILE)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames or "fct_ns" not in reader.fieldnames:
                return {}
            has_slowdown = "slowdown" in reader.fieldnames
            fct, slow = [], []
            for row in reader:
                fct.append(float(row["fct_ns"]))
                if has_slowdown and row["slowdown"] != "":
                    slow.append(float(row["slowdown"]))
    except (OSError, ValueError):
        return {}
    if not fct:
        return {}
    a = np.asarray(fct)
    out: dict[str, float | int] = {
        "fct.count": int(a.size), "fct.mean_ns": float(a.mean()), "fct.p50_ns": float(np.percentile(a, 50)),
        "fct.p99_ns": float(np.percentile(a, 99)), "fct.max_ns": float(a.max())}
    if slow:
        s = np.asarray(slow)
        out["fct.slowdown_mean"] = round(float(s.mean()), 9)
        out["fct.slowdown_p99"] = round(float(np.percentile(s, 99)), 9)
    return out
