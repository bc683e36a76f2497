"""Sweep repetitions as distributions: ``distribution.csv``, one row per point across its repetitions.

A sweep with ``repetitions: N`` runs every point with seeds seed … seed+N-1
(:mod:`netsim.sweep.points`); with the seed driving every random source
(ECMP salt, RED marks, MoE routing, compute variability:
:mod:`netsim.runtime.variability`) the N results are a sample of the point's
distribution.  This module groups the table's rows by their varied values
other than ``repetition`` and ``seed`` and writes, per group and metric, the
sample statistics of :func:`netsim.runtime.repeat.distribution` (n, mean,
std, min, p50, p95, p99, max, the 95 % CI of the mean).

Left out: metrics other than :data:`METRICS` (a ``flows`` sweep has none, so
it writes no file) and failed points (they are not in the sample; ``n``
says how many were).
"""
from __future__ import annotations

import csv
import os

DISTRIBUTION_CSV = "distribution.csv"
#: summary figures whose spread over repetitions is reported
METRICS = ("iteration_time_s",)
_NOT_GROUP = ("repetition", "seed")
STAT_COLUMNS = ("n", "mean", "std", "min", "p50", "p95", "p99", "max", "mean_ci95_low", "mean_ci95_high")


def distribution_rows(rows: list[dict], axes: list[str]) -> list[dict]:
    """One dict per (group of repetitions, metric), groups in order of their first point."""
    from ..runtime.repeat import distribution
    keys = [a for a in axes if a not in _NOT_GROUP]
    groups: dict[tuple, list[dict]] = {}
    for row in sorted(rows, key=lambda r: r["point"]):
        groups.setdefault(tuple(str(row.get(k)) for k in keys), []).append(row)
    out = []
    for members in groups.values():
        for metric in METRICS:
            values = [r[metric] for r in members if r.get("status") == "ok" and isinstance(r.get(metric), (int, float))]
            if not values:
                continue
            d = distribution(values)
            lo, hi = d.pop("mean_ci95_s")
            out.append({**{k: members[0].get(k) for k in keys}, "metric": metric, **d,
                        "mean_ci95_low": lo, "mean_ci95_high": hi})
    return out


def write_distribution(out_dir: str, rows: list[dict], axes: list[str], repetitions: int) -> str | None:
    """Write ``distribution.csv`` when the sweep repeats its points; return its path (None: not written)."""
    if repetitions <= 1:
        return None
    table = distribution_rows(rows, axes)
    if not table:
        return None
    cols = [a for a in axes if a not in _NOT_GROUP] + ["metric", *STAT_COLUMNS]
    path = os.path.join(out_dir, DISTRIBUTION_CSV)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        for r in table:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    os.replace(tmp, path)
    return path
