"""Read a run directory into typed pandas DataFrames; convert its CSVs to Parquet.

A run directory (written by ``netsim flows`` / ``netsim run``) holds some of
``fct``, ``ops``, ``queues``, ``pfc``, ``cc``, ``traffic_matrix``,
``message_sizes``, ``fct_ops`` as ``NAME.csv`` and/or ``NAME.parquet``, plus
``summary.json``. :func:`load_run` returns a :class:`Run` whose frames follow
:mod:`netsim.analysis.schema`: a missing file gives an empty frame with the
right columns, so every metric and plot works on any subset of outputs.
Parquet is preferred when it is present and not older than the CSV. A run
that did not complete (no ``summary.json``, a status other than
``complete``, ``.partial`` leftovers; :func:`run_status`) loads as far as it
goes and says so (:attr:`Run.status`, :class:`IncompleteRunWarning`).

Deliberately left out: lazy/chunked loading of traces larger than memory
(use ``pandas.read_parquet(columns=...)`` or Dask on the Parquet files).
"""
from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..runfiles import COMPLETE, partial_files
from .schema import DEFAULTS, OPTIONAL_KINDS, TABLES

TABLE_NAMES: tuple[str, ...] = tuple(TABLES)


def empty_frame(name: str) -> pd.DataFrame:
    """An empty DataFrame with the columns and dtypes of table ``name``.

    >>> list(empty_frame("pfc").columns)
    ['time_ns', 'node', 'port', 'priority', 'event']
    """
    return pd.DataFrame({c: pd.Series(dtype=_DTYPE[k]) for c, k in TABLES[name].items()})


_DTYPE = {"int": "int64", "float": "float64", "str": str}  # str: object (pandas 2) or str (pandas 3)


#: the range of an int64 column; a CSV value outside it would wrap silently in ``astype("int64")``
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _check_int64(num: pd.Series, raw: pd.Series, col: str, source: str, row0: int) -> None:
    """Raise :class:`InputError` naming the first value of integer column ``col`` outside int64."""
    if num.dtype.kind in "ib":
        return
    big = (num > _INT64_MAX).to_numpy() if num.dtype.kind == "u" else (num.abs() >= 2.0**63).to_numpy()
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise InputError(f"integer out of range in column {col!r}", source=source, where=f"row {row0 + i + 1}",
                         value=str(raw.iloc[i]), accepted=f"an integer from {_INT64_MIN} to {_INT64_MAX} (int64)")


def coerce(df: pd.DataFrame, name: str, source: str = "", row0: int = 0) -> pd.DataFrame:
    """Give ``df`` the columns and dtypes of table ``name`` (in place order first).

    Missing contract columns are added (``""``, NaN or the integer default);
    extra columns are kept after them. An unparsable number raises
    :class:`~netsim.errors.InputError` naming the file and column (rows
    counted from ``row0 + 1``, for a chunk of a longer file).
    """
    kinds = dict(TABLES[name])
    for c in df.columns:
        if c not in kinds and c in OPTIONAL_KINDS:
            kinds[c] = OPTIONAL_KINDS[c]
    out = {}
    n = len(df)
    for col, kind in kinds.items():
        if col not in df.columns:
            if kind == "str":
                out[col] = pd.Series([""] * n, index=df.index, dtype=str)
            elif kind == "int":
                out[col] = pd.Series(np.full(n, DEFAULTS.get(col, 0), dtype="int64"), index=df.index)
            else:
                out[col] = pd.Series(np.full(n, np.nan), index=df.index)
            continue
        s = df[col]
        if kind == "str":
            out[col] = s.where(s.notna(), "").astype(str)
            continue
        num = pd.to_numeric(s, errors="coerce")
        bad = num.isna() & s.notna() & (s.astype(str).str.strip() != "")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"not a number in column {col!r}", source=source or name,
                             where=f"row {row0 + i + 1}", value=s.iloc[i], accepted="a number")
        if kind == "int":
            _check_int64(num, s, col, source or name, row0)
            out[col] = num.fillna(DEFAULTS.get(col, 0)).round().astype("int64")
        else:
            out[col] = num.astype("float64")
    res = pd.DataFrame(out, index=df.index)
    for c in df.columns:
        if c not in res.columns:
            res[c] = df[c]
    return res.reset_index(drop=True)


def read_table(path: str | os.PathLike, name: str) -> pd.DataFrame:
    """Read one table (``.csv`` or ``.parquet``) and coerce it to its contract."""
    path = os.fspath(path)
    if path.endswith(".parquet"):
        try:
            df = pd.read_parquet(path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError: e.g. a truncated file
            raise InputError(f"unreadable Parquet file ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})",
                             source=path, accepted=f"a whole Parquet file (delete it to read {name}.csv)") from None
    else:
        strs = [c for c, k in TABLES[name].items() if k == "str"]
        try:
            df = pd.read_csv(path, keep_default_na=False, na_values=[""],
                             dtype={c: str for c in strs})
        except pd.errors.EmptyDataError:
            return empty_frame(name)
    return coerce(df, name, source=path)


def _pick(directory: str, name: str) -> str | None:
    csv = os.path.join(directory, name + ".csv")
    pq = os.path.join(directory, name + ".parquet")
    if os.path.exists(pq) and (not os.path.exists(csv) or os.path.getmtime(pq) >= os.path.getmtime(csv)):
        try:
            import pyarrow  # noqa: F401
            return pq
        except ImportError:
            pass
    return csv if os.path.exists(csv) else None


@dataclass
class Run:
    """One run's traces as typed DataFrames (empty frames where a file is absent)."""

    path: str = ""
    label: str = ""
    fct: pd.DataFrame = field(default_factory=lambda: empty_frame("fct"))
    ops: pd.DataFrame = field(default_factory=lambda: empty_frame("ops"))
    queues: pd.DataFrame = field(default_factory=lambda: empty_frame("queues"))
    pfc: pd.DataFrame = field(default_factory=lambda: empty_frame("pfc"))
    cc: pd.DataFrame = field(default_factory=lambda: empty_frame("cc"))
    traffic_matrix: pd.DataFrame = field(default_factory=lambda: empty_frame("traffic_matrix"))
    message_sizes: pd.DataFrame = field(default_factory=lambda: empty_frame("message_sizes"))
    #: ``--fct per-op`` runs' per-op flow aggregates (``fct_ops.csv``; their ``fct`` is empty)
    fct_ops: pd.DataFrame = field(default_factory=lambda: empty_frame("fct_ops"))
    summary: dict = field(default_factory=dict)
    #: ``"complete"``, or ``"incomplete: <why>"`` (see :func:`run_status`).
    status: str = COMPLETE

    @property
    def complete(self) -> bool:
        """False for a run that failed, was interrupted or killed (its tables hold what it finished)."""
        return self.status == COMPLETE

    def __post_init__(self):
        for name in TABLE_NAMES:  # accept partial frames built by hand
            setattr(self, name, coerce(getattr(self, name), name))
        if not self.label:
            self.label = os.path.basename(os.path.normpath(self.path)) if self.path else "run"

    @property
    def end_ns(self) -> int:
        """Last time seen in any trace (ns); 0 for an empty run."""
        ends = [0]
        if len(self.fct):
            ends.append(int(self.fct["end_ns"].max()))
        if len(self.ops):
            ends.append(int(self.ops["end_ns"].max()))
        for t in (self.queues, self.pfc, self.cc):
            if len(t):
                ends.append(int(t["time_ns"].max()))
        sim = self.summary.get("simulated_time_ns") or self.summary.get("sim_time_ns")
        if isinstance(sim, (int, float)):
            ends.append(int(sim))
        return max(ends)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {n: getattr(self, n) for n in TABLE_NAMES}


def check_run_dir(directory: str | os.PathLike) -> str:
    """``directory`` if it holds netsim outputs (summary.json, a trace table, or an unfinished ``.partial`` one), else an InputError.

    For commands that must not turn an empty or unrelated folder into an empty result.
    """
    directory = os.fspath(directory)
    accepted = "a directory written by netsim run/flows --out"
    if not os.path.isdir(directory):
        raise InputError("not a run directory (" + ("not found" if not os.path.exists(directory)
                                                    else "a file") + ")", source=directory, accepted=accepted)
    if not os.path.exists(os.path.join(directory, "summary.json")) and \
            not any(_pick(directory, name) for name in TABLE_NAMES) and not partial_files(directory):
        raise InputError("not a run directory (no summary.json, fct.csv, ...)", source=directory,
                         accepted=accepted)
    return directory


class IncompleteRunWarning(UserWarning):
    """A run directory was loaded whose run did not complete (see :func:`run_status`)."""


def run_status(directory: str | os.PathLike, summary: dict | None) -> str:
    """``"complete"``, or ``"incomplete: <why>"`` for a run directory and its summary (None: no summary.json).

    Incomplete: no ``summary.json`` (the commit marker, written last: the run
    was killed, or is still running), a ``status`` other than ``complete``
    (``failed: ...``, ``interrupted``, ``writing outputs``), or files left
    under their temporary ``.partial`` name (never read). A summary without a
    ``status`` field was written before runs recorded one and counts as complete.
    """
    reasons = []
    if summary is None:
        reasons.append("no summary.json (the run was killed or has not finished)")
    else:
        status = summary.get("status", COMPLETE)
        if status != COMPLETE:
            reasons.append(f"status {status!r}" + (f" at sim time {summary['sim_time_ns']} ns"
                                                   if isinstance(summary.get("sim_time_ns"), int) else ""))
    left = [os.path.basename(p) for p in partial_files(directory)]
    if left:
        reasons.append("unfinished files ignored: " + ", ".join(left))
    return "incomplete: " + "; ".join(reasons) if reasons else COMPLETE


def read_summary(directory: str | os.PathLike) -> dict | None:
    """A run directory's ``summary.json`` (None when there is none); bad JSON is an :class:`InputError`."""
    sp = os.path.join(os.fspath(directory), "summary.json")
    if not os.path.exists(sp):
        return None
    try:
        with open(sp) as fh:
            summary = json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputError(f"bad JSON: {exc.msg}", source=sp, where=f"line {exc.lineno}") from None
    if not isinstance(summary, dict):
        raise InputError("not a JSON object", source=sp, value=type(summary).__name__,
                         accepted="the summary.json netsim writes")
    return summary


def load_run(directory: str | os.PathLike, label: str | None = None, warn: bool = True) -> Run:
    """Load every trace of a run directory into a :class:`Run`.

    An incomplete run (:func:`run_status`) is loaded as far as it goes (every
    whole file; never a ``.partial`` one), its :attr:`Run.status` says why,
    and, with ``warn``, an :class:`IncompleteRunWarning` is issued.
    Raises :class:`~netsim.errors.InputError` if ``directory`` is not a directory.
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise InputError("run directory not found", source=directory,
                         accepted="a directory written by netsim run/flows")
    frames = {}
    for name in TABLE_NAMES:
        p = _pick(directory, name)
        frames[name] = read_table(p, name) if p else empty_frame(name)
    summary = read_summary(directory)
    status = run_status(directory, summary)
    if warn and status != COMPLETE:
        warnings.warn(IncompleteRunWarning(f"{directory}: {status}; showing what it has"), stacklevel=2)
    return Run(path=directory, label=label or "", summary=summary or {}, status=status, **frames)


def write_parquet(run_dir: str | os.PathLike) -> list[str]:
    """Write ``NAME.parquet`` next to each ``NAME.csv`` of a run (typed per contract, streamed).

    A no-op returning ``[]`` when pyarrow is not installed or nothing is there.
    See :mod:`netsim.analysis.parquet` (bounded memory, atomic).
    """
    return [p for p, _ in write_parquet_counts(run_dir)]


def write_parquet_counts(run_dir: str | os.PathLike) -> list[tuple[str, int]]:
    """:func:`write_parquet`, returning ``(path, rows)`` for each file written."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return []
    from .parquet import csv_to_parquet
    run_dir = os.fspath(run_dir)
    written = []
    for name in TABLE_NAMES:
        csv = os.path.join(run_dir, name + ".csv")
        if not os.path.exists(csv):
            continue
        out = os.path.join(run_dir, name + ".parquet")
        written.append((out, csv_to_parquet(csv, out, name)))
    return written
