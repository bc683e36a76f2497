"""Flat trace records and their streaming writers (no pandas here).

A :class:`FlowTag` says which operation caused a flow; a :class:`FlowRecord`
is one row of ``fct.csv``. Every backend (packet, flow, analytic) produces the
same columns, :data:`FCT_COLUMNS`, so traces of different fidelities can be
compared row by row. Rows stream to disk through a :class:`CsvSink` so that a
long run keeps bounded memory and a run that fails half way keeps what it
already wrote.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Iterable, Sequence

from .interrupts import STATE as _INTERRUPTS
from .interrupts import deferred, raise_pending
from .sinks import Sink


@dataclass(frozen=True, slots=True)
class FlowTag:
    """Why a flow exists. Empty strings / ``-1`` mean "not applicable".

    ``group`` is the parallel group instance (``tp3`` = the 4th TP group,
    ``pp5``, ``dp0``; the same value as ``ops.csv``'s ``group``) and
    ``group_kind`` its parallelism kind (``tp``, ``pp``, ``dp``, ``ep``); both
    ``""`` for flows from a flow file. ``op`` is the operation's unique name
    within the iteration; ``collective`` e.g. ``allreduce``; ``step`` the
    algorithm step.
    """

    tag: str = ""
    iteration: int = -1
    op: str = ""
    group: str = ""
    collective: str = ""
    step: int = -1
    group_kind: str = ""
    job: str = ""               #: the cluster job (netsim.cluster) whose flow this is; "" in single-job runs
    row: int = -1               #: the flow file's row (from 0) this flow is; -1 for flows of a workload (ECMP key only)
    #: the collective's channel (NCCL ring/tree channel) whose connection carries the flow; -1 when the
    #: workload names none (pipeline p2p, background, Python API). ECMP key only (netsim.network.flowkey)
    channel: int = -1


EMPTY_TAG = FlowTag()


@dataclass(slots=True)
class FlowRecord:
    """One completed flow. Times are integer ns since simulation start."""

    flow_id: int
    src: str
    dst: str
    size_bytes: int
    start_ns: int
    end_ns: int
    fct_ns: int
    ideal_fct_ns: int
    slowdown: float
    tag: str = ""
    cc: str = ""
    priority: int = 0
    retransmitted_bytes: int = 0
    ecn_marked_packets: int = 0
    retransmits: int = 0
    timeouts: int = 0
    cnps_received: int = 0
    iteration: int = -1
    op: str = ""
    group: str = ""
    collective: str = ""
    step: int = -1
    group_kind: str = ""
    job: str = ""          # cluster runs only: written as CLUSTER_FCT_COLUMNS' last column
    path_key: int = -1     # the ECMP key the flow was routed with (netsim.network.flowkey); -1: not routed

    def row(self) -> tuple:
        """The record's :data:`FCT_COLUMNS` values, in order."""
        return _fct_row(self)


#: fct.csv's columns, in this order (``path_key`` last: the column added after the others)
FCT_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(FlowRecord) if f.name != "job")
_fct_row = attrgetter(*FCT_COLUMNS)     # FlowRecord.row: the columns' values as one tuple, in C
#: fct.csv of a cluster run (:mod:`netsim.cluster`): the single-job columns, then the job
CLUSTER_FCT_COLUMNS: tuple[str, ...] = FCT_COLUMNS + ("job",)


def make_record(flow_id: int, src: str, dst: str, size_bytes: int, start_ns: int, end_ns: int,
                ideal_fct_ns: int, tag: FlowTag = EMPTY_TAG, **extra) -> FlowRecord:
    """Build a :class:`FlowRecord`, deriving ``fct_ns`` and ``slowdown``."""
    fct = end_ns - start_ns
    slowdown = round(fct / ideal_fct_ns, 6) if ideal_fct_ns > 0 else float("nan")
    return FlowRecord(flow_id, src, dst, size_bytes, start_ns, end_ns, fct, ideal_fct_ns, slowdown,
                      tag=tag.tag, iteration=tag.iteration, op=tag.op, group=tag.group,
                      collective=tag.collective, step=tag.step, group_kind=tag.group_kind, job=tag.job, **extra)


def _fmt(v) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return repr(round(v, 9))
    return str(v)


#: value types the csv writer formats as :func:`_fmt` does (``str(v)``): passed to it unconverted
_AS_IS = frozenset({int, str})

#: Rows a :class:`CsvSink` buffers before it appends them to its file: at most
#: this many finished rows sit in memory (a few MiB of fct rows), one write per chunk.
CSV_CHUNK_ROWS = 10_000

PARTIAL_SUFFIX = ".partial"
"""Suffix of an output being written; renamed to its final name (``os.replace``) when whole."""


def partial_path(path: str | os.PathLike) -> str:
    """The temporary name ``path`` is written under until it is complete."""
    return os.fspath(path) + PARTIAL_SUFFIX


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w", **kw):
    """Open ``path + ".partial"`` for writing; rename it to ``path`` when the block succeeds.

    On an exception the partial file is removed, so a reader finds either the
    previous state (no file) or the whole file, never a truncated one. A
    SIGKILL can leave the ``.partial`` file behind; readers ignore it.
    """
    tmp = partial_path(path)
    try:
        with open(tmp, mode, **kw) as fh:
            yield fh
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    os.replace(tmp, path)


class CsvSink(Sink):
    """Append-only CSV writer that flushes every ``chunk_rows`` rows (default :data:`CSV_CHUNK_ROWS`).

    Rows go to ``path + ".partial"``; :meth:`close` flushes and renames it to
    ``path`` (``os.replace``, atomic), so a file under its final name is always
    whole. Call :meth:`close` on failure and interrupt too: every row received
    so far is then in the file (``count`` rows). Values are formatted
    deterministically (floats via ``repr`` after rounding to 9 decimals) so
    identical runs write byte-identical files.
    """

    def __init__(self, path: str | os.PathLike, columns: Sequence[str], chunk_rows: int | None = None):
        self.path = os.fspath(path)
        self.columns = tuple(columns)
        self.chunk_rows = CSV_CHUNK_ROWS if chunk_rows is None else int(chunk_rows)
        self._buf: list[tuple] = []
        self._written = 0
        self._started = False   # the file is created by the first write (an error before it leaves nothing)
        self.closed = False

    @property
    def count(self) -> int:
        """Rows received (written or buffered); all of them are in the file after :meth:`close`."""
        return self._written + len(self._buf)

    def add(self, row) -> None:
        if isinstance(row, tuple):
            self._buf.append(row)
        elif hasattr(row, "row"):
            self._buf.append(row.row())
        else:
            self._buf.append(tuple(row[c] for c in self.columns))
        if len(self._buf) >= self.chunk_rows:
            self.flush()

    def flush(self) -> None:
        if (not self._buf and self._started) or self.closed:
            return
        with deferred():  # a chunk is written whole or not at all (never twice)
            out = io.StringIO()
            if not self._started:
                out.write(",".join(self.columns) + "\n")
            w = csv.writer(out, lineterminator="\n")
            w.writerows([v if type(v) in _AS_IS else _fmt(v) for v in r] for r in self._buf)
            with open(partial_path(self.path), "a" if self._started else "w", newline="") as fh:
                fh.write(out.getvalue())
            self._started = True
            self._written += len(self._buf)
            self._buf.clear()

    def close(self) -> None:
        """Flush and give the file its final name (idempotent)."""
        if self.closed:
            return
        self.flush()
        with deferred():
            os.replace(partial_path(self.path), self.path)
            self.closed = True


class ListSink(Sink):
    """Keeps rows in memory (for the Python API and tests)."""

    def __init__(self, columns: Sequence[str] = FCT_COLUMNS):
        self.columns = tuple(columns)
        self.rows: list = []
        self.count = 0

    def add(self, row) -> None:
        self.rows.append(row)
        self.count += 1

    def flush(self) -> None:  # noqa: D401 - nothing buffered
        pass

    close = flush


class TeeSink(Sink):
    """Sends every row to several sinks (``close`` closes each, even if one fails)."""

    def __init__(self, *sinks):
        self.sinks = [s for s in sinks if s is not None]
        self.count = 0

    def add(self, row) -> None:
        st = _INTERRUPTS
        st["depth"] += 1        # an interrupt waits until every sink has the row (counts agree)
        try:
            self.count += 1
            for s in self.sinks:
                s.add(row)
        finally:
            st["depth"] -= 1
        if st["pending"] is not None and not st["depth"]:
            raise_pending()

    def add_many(self, rows) -> None:
        """Each sink's ``add_many`` of ``rows`` (in order), under one interrupt guard (the flow
        backend hands over the records delivered at one instant together)."""
        st = _INTERRUPTS
        st["depth"] += 1
        try:
            if not isinstance(rows, (list, tuple)):
                rows = list(rows)
            for s in self.sinks:        # each sink takes the rows in order (sinks are independent)
                s.add_many(rows)
            self.count += len(rows)
        finally:
            st["depth"] -= 1
        if st["pending"] is not None and not st["depth"]:
            raise_pending()

    def flush(self) -> None:
        for s in self.sinks:
            s.flush()

    def close(self) -> None:
        errors = []
        for s in self.sinks:
            try:
                s.close()
            except Exception as exc:  # noqa: BLE001 - close the others, then report the first
                errors.append(exc)
        if errors:
            raise errors[0]


def write_json(path: str | os.PathLike, data: dict) -> None:
    """Write JSON deterministically (sorted keys, fixed float formatting), atomically (temp name + rename)."""
    with atomic_output(path) as fh:
        json.dump(_jsonable(data), fh, indent=2, sort_keys=True)
        fh.write("\n")


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return None
        return round(x, 12)
    if hasattr(x, "item"):  # numpy scalar
        return _jsonable(x.item())
    return x


def write_rows(path: str | os.PathLike, columns: Sequence[str], rows: Iterable) -> int:
    sink = CsvSink(path, columns)
    for r in rows:
        sink.add(r)
    sink.close()
    return sink.count
