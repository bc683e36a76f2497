"""Where a trace's inputs come from: a :class:`Run` in memory, or a run folder read in chunks.

:class:`TraceSource` gives :mod:`netsim.analysis.trace` the ops (loaded: one
row per rank and op), the number of flows and queue samples (counted without
loading them: Parquet metadata, or newlines of the CSV) and the flows in
chunks of :data:`FLOW_CHUNK_ROWS` rows with only the columns a trace needs,
so a 3 M-flow run is never in memory at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import pandas as pd

from .io import Run, _pick, coerce, empty_frame, read_table

#: Flow rows read at a time when streaming fct (about 30 MiB as a typed frame).
FLOW_CHUNK_ROWS = 200_000
#: The fct columns a trace uses.
FLOW_COLUMNS = ("flow_id", "size_bytes", "start_ns", "end_ns", "op", "group", "tag", "iteration", "src", "dst",
                "path_key")


@dataclass
class TraceSource:
    """What a trace is built from: the ops, and the flows and queues read on demand (chunks)."""

    ops: pd.DataFrame
    n_flows: int
    flow_chunks: Callable[[], Iterable[pd.DataFrame]]
    n_queue_rows: int
    queues: Callable[[], pd.DataFrame]

    @classmethod
    def of_run(cls, run: Run) -> "TraceSource":
        return cls(run.ops, len(run.fct), lambda: [run.fct], len(run.queues), lambda: run.queues)

    @classmethod
    def of_dir(cls, run_dir: str) -> "TraceSource":
        ops_p, fct_p, q_p = (_pick(run_dir, n) for n in ("ops", "fct", "queues"))
        ops = read_table(ops_p, "ops") if ops_p else empty_frame("ops")
        return cls(ops, _rows(fct_p), lambda: _chunks(fct_p, "fct", FLOW_COLUMNS), _rows(q_p),
                   lambda: read_table(q_p, "queues") if q_p else empty_frame("queues"))


def _rows(path: str | None) -> int:
    """Data rows of a table file (Parquet metadata, or newlines of a CSV minus its header)."""
    if path is None:
        return 0
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq
        return pq.ParquetFile(path).metadata.num_rows
    n, last = 0, b"\n"
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            n += block.count(b"\n")
            last = block[-1:]
    return max(0, n - 1 + (last != b"\n"))


def _chunks(path: str | None, name: str, columns) -> Iterator[pd.DataFrame]:
    """Table ``name`` in chunks of :data:`FLOW_CHUNK_ROWS` rows, typed, only ``columns``."""
    if path is None:
        return
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq
        f = pq.ParquetFile(path)
        have = [c for c in columns if c in f.schema_arrow.names]
        for batch in f.iter_batches(batch_size=FLOW_CHUNK_ROWS, columns=have):
            yield coerce(batch.to_pandas(), name, source=path)
        return
    strs = {c: str for c in columns if c in ("src", "dst", "op", "group", "tag")}
    try:
        reader = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=strs, chunksize=FLOW_CHUNK_ROWS,
                             usecols=lambda c: c in columns)
        for i, df in enumerate(reader):
            yield coerce(df, name, source=path, row0=i * FLOW_CHUNK_ROWS)
    except pd.errors.EmptyDataError:
        return
