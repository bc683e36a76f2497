"""Streaming CSV -> Parquet: the same typed frame as reading the CSV, bounded chunks, atomic, errors as before."""
import os

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyarrow")

from netsim.analysis import parquet  # noqa: E402
from netsim.analysis.io import read_table  # noqa: E402
from netsim.errors import InputError  # noqa: E402
from netsim.records import FCT_COLUMNS, CsvSink, make_record, FlowTag  # noqa: E402


def _same(csv_path, name, tmp_path):
    out = str(tmp_path / (name + ".parquet"))
    rows = parquet.csv_to_parquet(csv_path, out, name)
    a, b = read_table(csv_path, name), read_table(out, name)
    pd.testing.assert_frame_equal(a, b)
    assert rows == len(a) and not os.path.exists(out + ".partial")
    return b


def test_fct_written_by_the_sink_converts_in_many_row_groups(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "CSV_BLOCK_BYTES", 4096)     # many blocks
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 700)
    p = str(tmp_path / "fct.csv")
    sink = CsvSink(p, FCT_COLUMNS, chunk_rows=333)
    rng = np.random.default_rng(5)
    for i in range(5000):
        start = int(rng.integers(0, 10**6))
        tag = FlowTag(tag="t,with comma" if i % 7 == 0 else "", iteration=int(i % 3) - 1, op="NA" if i % 5 else "",
                      group="dp", step=-1)
        sink.add(make_record(i, f"s{i % 9}.gpu1", "h\"q", int(rng.integers(1, 10**7)), start,
                             start + int(rng.integers(1, 10**5)), 0 if i % 11 == 0 else 1000, tag))
    sink.close()
    df = _same(p, "fct", tmp_path)
    assert df["slowdown"].isna().sum() == len(range(0, 5000, 11))       # ideal 0 -> empty cell -> NaN
    import pyarrow.parquet as pq
    assert pq.ParquetFile(str(tmp_path / "fct.parquet")).metadata.num_row_groups >= 5


def test_empty_cells_defaults_inf_and_strings(tmp_path):
    p = tmp_path / "cc.csv"
    p.write_text("time_ns,flow_id,cc,cwnd_bytes,rate_bps,alpha,srtt_ns\n"
                 "0,1,dcqcn,,1e10,inf,\n5,,NA,3.5,-inf,0.5,7\n")
    df = _same(str(p), "cc", tmp_path)
    assert df.loc[1, "cc"] == "NA" and np.isinf(df.loc[0, "alpha"]) and np.isnan(df.loc[0, "cwnd_bytes"])
    assert df.loc[1, "flow_id"] == 0
    p.write_text("time_ns,flow_id,cc,cwnd_bytes,rate_bps,alpha,srtt_ns\n0,1,dcqcn,,nan,1,\n")
    for convert in (lambda: read_table(str(p), "cc"), lambda: parquet.csv_to_parquet(str(p), str(tmp_path / "x"), "cc")):
        with pytest.raises(InputError, match="rate_bps"):   # "nan" text is not accepted by either
            convert()


def test_header_only_and_missing_and_extra_columns(tmp_path):
    p = tmp_path / "pfc.csv"
    p.write_text("time_ns,node,port,priority,event\n")
    assert len(_same(str(p), "pfc", tmp_path)) == 0
    m = tmp_path / "message_sizes.csv"
    m.write_text("group_kind,collective,size_bytes,count,note\ndp,allreduce,100,2,x\n")   # extra columns kept
    df = _same(str(m), "message_sizes", tmp_path)
    assert list(df.columns)[-1] == "note" and df.loc[0, "note"] == "x" and df.loc[0, "count"] == 2


def test_float_in_int_column_takes_the_exact_path(tmp_path):
    p = tmp_path / "queues.csv"
    p.write_text("time_ns,node,port,priority,queue_bytes\n1.0,sw,h,0,12\n2,sw,h,,13.0\n")
    df = _same(str(p), "queues", tmp_path)
    assert df["time_ns"].tolist() == [1, 2] and df["priority"].tolist() == [0, 0]


def test_bad_cell_is_one_line_with_its_row_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "FALLBACK_CHUNK_ROWS", 10)
    p = tmp_path / "queues.csv"
    rows = [f"{i},sw,h,0,{i}" for i in range(25)]
    rows[22] = "22,sw,h,0,12x"
    p.write_text("time_ns,node,port,priority,queue_bytes\n" + "\n".join(rows) + "\n")
    out = str(tmp_path / "queues.parquet")
    with pytest.raises(InputError, match=r"queues.csv: row 23: .*queue_bytes.*12x") as e:
        parquet.csv_to_parquet(str(p), out, "queues")
    assert "\n" not in str(e.value)
    assert not os.path.exists(out) and not os.path.exists(out + ".partial")
