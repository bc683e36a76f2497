"""The results table of a sweep: one row per point, in point order.

Columns: ``point`` (index), ``point_id`` (folder name), the point's varied
parameters (axis names, ``repetition`` when repeated, ``seed``), then every
scalar figure of its ``summary.json`` (nested dicts flattened with dots, in
order of first appearance over the points in index order; lists are left
out) and the ``fct.*`` figures of :mod:`netsim.sweep.figures`, then
``point_wall_s``, ``status`` (ok|failed) and ``error``. A summary key that
collides with a parameter column is prefixed ``summary.``.

``results.csv`` is rewritten atomically (temporary file + ``os.replace``)
every time a point finishes, so an interrupted sweep leaves a valid table of
what finished; ``results.parquet`` is written at the end when pyarrow is
installed.
"""
from __future__ import annotations

import csv
import math
import os
from typing import Any, Iterable

FIXED_HEAD = ("point", "point_id")
FIXED_TAIL = ("point_wall_s", "status", "error")
# Columns that measure the host, not the simulation: excluded when comparing tables.
WALL_CLOCK_MARKERS = ("wall",)


def flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Scalar leaves of a nested dict, keys joined with dots; lists are skipped.

    >>> flatten({"a": 1, "b": {"c": 2.5, "d": [1, 2]}, "e": None})
    {'a': 1, 'b.c': 2.5, 'e': None}
    """
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif value is None or isinstance(value, (str, int, float, bool)):
            out[name] = value
    return out


def is_wall_clock(column: str) -> bool:
    """True for columns that depend on the host's speed (``wall_time_s``, ``point_wall_s``).

    >>> is_wall_clock("wall_time_s"), is_wall_clock("point_wall_s"), is_wall_clock("samples_per_s")
    (True, True, False)
    """
    return any(m in column for m in WALL_CLOCK_MARKERS)


def make_row(point: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """One table row from a point (``Point.to_json()``) and its outcome."""
    row: dict[str, Any] = {"point": point["index"], "point_id": point["point_id"]}
    row.update(point["axes"])
    for key, value in flatten(outcome.get("summary") or {}).items():
        row[f"summary.{key}" if key in row or key in FIXED_TAIL else key] = value
    for key, value in (outcome.get("figures") or {}).items():
        row.setdefault(key, value)
    row["point_wall_s"] = round(float(outcome.get("wall_s") or 0.0), 6)
    row["status"] = outcome["status"]
    row["error"] = outcome.get("error") or ""
    return row


def columns(rows: Iterable[dict[str, Any]], axes: list[str]) -> list[str]:
    """Column order: fixed head, parameters, summary figures by first appearance, fixed tail."""
    cols = list(FIXED_HEAD) + list(axes)
    seen = set(cols) | set(FIXED_TAIL)
    for row in rows:
        for key in row:
            if key not in seen:
                seen.add(key)
                cols.append(key)
    return cols + list(FIXED_TAIL)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return str(value)


def write_csv(path: str, rows: list[dict[str, Any]], axes: list[str]) -> list[str]:
    """Write ``rows`` (sorted by point) to ``path`` atomically; return the columns."""
    rows = sorted(rows, key=lambda r: r["point"])
    cols = columns(rows, axes)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(cols)
        for row in rows:
            writer.writerow([_cell(row.get(c)) for c in cols])
    os.replace(tmp, path)
    return cols


def write_parquet(path: str, rows: list[dict[str, Any]], axes: list[str]) -> bool:
    """Write the table as Parquet when pyarrow is installed; return whether it was written.

    A column holding values of several types (e.g. ``10KB`` and ``20000``) is
    stored as strings.
    """
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    import pandas as pd

    rows = sorted(rows, key=lambda r: r["point"])
    cols = columns(rows, axes)
    frame = pd.DataFrame([[row.get(c) for c in cols] for row in rows], columns=cols)
    for col in cols:
        kinds = {type(v) for v in frame[col] if v is not None and not (isinstance(v, float) and math.isnan(v))}
        if len(kinds) > 1 and not kinds <= {int, float}:
            frame[col] = [None if v is None else str(v) for v in frame[col]]
    tmp = f"{path}.tmp"
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return True
