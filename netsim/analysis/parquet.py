"""Streaming CSV → Parquet conversion of a run's tables, in bounded memory.

Each ``NAME.csv`` is read in blocks by pyarrow's streaming CSV reader with the
column types of its contract (:data:`netsim.analysis.schema.TABLES`; extra
columns typed by ``OPTIONAL_KINDS``, else strings) and appended to a
``pyarrow.parquet.ParquetWriter`` one row group at a time, so memory is a few
blocks whatever the table's length. The values are those
:func:`netsim.analysis.io.read_table` gives for the CSV: an empty integer cell
becomes the column's default (``DEFAULTS``), an empty float cell NaN, an empty
string cell ``""``. A CSV the fast reader rejects (e.g. ``1.0`` in an integer
column, or a cell that is not a number) is converted again through pandas in
chunks with :func:`netsim.analysis.io.coerce`, which accepts what the CSV
loader accepts and raises the same one-line :class:`~netsim.errors.InputError`.

The file is written as ``NAME.parquet.partial`` and renamed when whole, so a
kill during the conversion never leaves a truncated ``NAME.parquet``.
"""
from __future__ import annotations

import csv
import os

from ..records import partial_path
from .schema import DEFAULTS, OPTIONAL_KINDS, TABLES

#: Bytes of CSV the streaming reader parses at a time. The reader keeps a few
#: dozen blocks in flight (measured: peak Arrow memory about 28 x the block
#: size on a 3.2 M-row fct.csv), so 1 MiB keeps it near 40 MiB.
CSV_BLOCK_BYTES = 1 << 20
#: Rows per Parquet row group (blocks are gathered up to this): large groups
#: read fast; 131,072 ``fct`` rows are about 20 MiB in memory.
ROW_GROUP_ROWS = 1 << 17
#: Rows per chunk of the pandas fallback (the 3 M-row fct.csv of a 1,024-GPU step in 7 chunks).
FALLBACK_CHUNK_ROWS = 500_000


def _header(path: str) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh), [])


def _columns(name: str, header: list[str]) -> dict[str, str]:
    """Output columns and kinds: the contract's (in order), then the CSV's extra columns."""
    kinds = dict(TABLES[name])
    for c in header:
        if c not in kinds:
            kinds[c] = OPTIONAL_KINDS.get(c, "str")
    return kinds


def _arrow_schema(kinds: dict[str, str]):
    import pyarrow as pa
    types = {"int": pa.int64(), "float": pa.float64(), "str": pa.string()}
    return pa.schema([(c, types[k]) for c, k in kinds.items()])


def _fix_batch(batch, kinds: dict[str, str], schema):
    """A parsed block with defaults filled in and the contract's missing columns added."""
    import pyarrow as pa
    import pyarrow.compute as pc
    n = batch.num_rows
    cols = []
    for c, kind in kinds.items():
        if c in batch.schema.names:
            a = batch.column(c)
            if kind == "int":
                a = pc.fill_null(a, DEFAULTS.get(c, 0))
            elif kind == "float":
                if pc.any(pc.is_nan(a)).as_py():  # "nan" text: the CSV loader rejects it, so the exact path reports it
                    raise pa.ArrowInvalid(f"NaN text in column {c}")
                a = pc.fill_null(a, float("nan"))
        elif kind == "str":
            a = pa.array([""] * n, pa.string())
        elif kind == "int":
            a = pa.array([DEFAULTS.get(c, 0)] * n, pa.int64())
        else:
            a = pa.array([float("nan")] * n, pa.float64())
        cols.append(a)
    return pa.Table.from_arrays(cols, schema=schema)


def _convert_arrow(csv_path: str, writer, kinds: dict[str, str], header: list[str], schema) -> int:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    present = {c: schema.field(c).type for c in header}
    reader = pacsv.open_csv(
        csv_path, read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
        convert_options=pacsv.ConvertOptions(column_types=present, null_values=[""], strings_can_be_null=False,
                                             quoted_strings_can_be_null=False))
    rows, pending, n_pending = 0, [], 0
    for batch in reader:
        pending.append(_fix_batch(batch, kinds, schema))
        n_pending += batch.num_rows
        if n_pending >= ROW_GROUP_ROWS:
            writer.write_table(pa.concat_tables(pending), row_group_size=n_pending)
            rows, pending, n_pending = rows + n_pending, [], 0
    if pending:
        writer.write_table(pa.concat_tables(pending), row_group_size=n_pending)
    return rows + n_pending


def _convert_pandas(csv_path: str, writer, name: str, schema) -> int:
    import pandas as pd
    import pyarrow as pa

    from .io import coerce
    strs = [c for c, k in TABLES[name].items() if k == "str"]
    rows = 0
    for chunk in pd.read_csv(csv_path, keep_default_na=False, na_values=[""], dtype={c: str for c in strs},
                             chunksize=FALLBACK_CHUNK_ROWS):
        df = coerce(chunk, name, source=csv_path, row0=rows)
        for c, f in zip(schema.names, schema):
            if pa.types.is_string(f.type):
                df[c] = df[c].astype(object).where(df[c].notna(), "").astype(str)
        writer.write_table(pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False))
        rows += len(chunk)
    return rows


def csv_to_parquet(csv_path: str, out: str, name: str) -> int:
    """Convert table ``name`` from ``csv_path`` to ``out`` (atomically); return the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    header = _header(csv_path)
    kinds = _columns(name, header)
    schema = _arrow_schema(kinds)
    tmp = partial_path(out)
    try:
        rows = None
        if header:
            try:
                with pq.ParquetWriter(tmp, schema) as writer:
                    rows = _convert_arrow(csv_path, writer, kinds, header, schema)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                rows = None
        if rows is None:
            with pq.ParquetWriter(tmp, schema) as writer:
                rows = _convert_pandas(csv_path, writer, name, schema) if header else 0
                if not rows:
                    writer.write_table(schema.empty_table())
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return rows
