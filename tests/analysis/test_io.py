import os

import pandas as pd
import pytest

from netsim.analysis import empty_frame, load_run, write_parquet
from netsim.analysis.schema import TABLES
from netsim.errors import InputError
from netsim.records import FCT_COLUMNS


def test_load_flows_run_types(flows_dir):
    run = load_run(flows_dir)
    assert list(run.fct.columns[:len(FCT_COLUMNS)]) == list(FCT_COLUMNS)
    assert len(run.fct) == 13
    assert run.fct["size_bytes"].dtype == "int64"
    assert run.fct["slowdown"].dtype == "float64"
    assert (run.fct["op"] == "").all() and (run.fct["iteration"] == -1).all()
    assert run.cc["cwnd_bytes"].isna().all()          # empty field => NaN
    assert pd.api.types.is_string_dtype(run.queues["port"])
    assert run.summary["flows"] == 13
    assert run.label == "flows_run"
    # absent files => empty frames with the contract's columns
    assert len(run.ops) == 0 and list(run.ops.columns) == list(TABLES["ops"])
    assert run.end_ns == 2_000_000


def test_missing_dir_is_input_error(tmp_path):
    with pytest.raises(InputError):
        load_run(str(tmp_path / "nope"))


def test_empty_dir_gives_empty_frames(tmp_path):
    run = load_run(str(tmp_path))
    for name, cols in TABLES.items():
        assert list(getattr(run, name).columns) == list(cols)
    assert run.summary == {} and run.end_ns == 0


def test_bad_number_names_file_and_column(tmp_path):
    p = tmp_path / "queues.csv"
    p.write_text("time_ns,node,port,priority,queue_bytes\n0,sw,h,0,12x\n")
    with pytest.raises(InputError, match="queue_bytes"):
        load_run(str(tmp_path))


@pytest.mark.parametrize("value", ["10000000000000002012540", "9223372036854775808", "-1e19"])
def test_integer_beyond_int64_is_an_error_not_a_wrap(tmp_path, value):
    # astype("int64") of 1e22 reads -9223372036854775808: a value outside int64 is refused, naming file, row, column
    (tmp_path / "queues.csv").write_text(f"time_ns,node,port,priority,queue_bytes\n0,sw,h,0,5\n{value},sw,h,0,5\n")
    with pytest.raises(InputError, match=r"queues.csv: row 2: integer out of range in column 'time_ns'"):
        load_run(str(tmp_path))
    (tmp_path / "queues.csv").write_text("time_ns,node,port,priority,queue_bytes\n9223372036854775807,sw,h,0,5\n")
    assert load_run(str(tmp_path)).queues.loc[0, "time_ns"] == 2**63 - 1


def test_node_names_stay_strings(tmp_path):
    (tmp_path / "pfc.csv").write_text("time_ns,node,port,priority,event\n5,1,NA,3,pause\n")
    run = load_run(str(tmp_path))
    assert run.pfc.loc[0, "node"] == "1" and run.pfc.loc[0, "port"] == "NA"


def test_parquet_roundtrip_and_preference(flows_dir):
    pytest.importorskip("pyarrow")
    written = write_parquet(flows_dir)
    assert {os.path.basename(p) for p in written} == {"fct.parquet", "queues.parquet", "pfc.parquet", "cc.parquet"}
    a = load_run(flows_dir)
    os.remove(os.path.join(flows_dir, "fct.csv"))      # now only the parquet copy is there
    b = load_run(flows_dir)
    pd.testing.assert_frame_equal(a.fct, b.fct)
    pd.testing.assert_frame_equal(a.cc, b.cc)


def test_run_from_partial_frames():
    from netsim.analysis import Run
    r = Run(label="x", fct=pd.DataFrame({"flow_id": [1], "src": ["a"], "dst": ["b"], "size_bytes": [10],
                                         "start_ns": [0], "end_ns": [5]}))
    assert r.fct.loc[0, "iteration"] == -1 and r.fct.loc[0, "group"] == ""
    assert list(empty_frame("cc").columns) == list(TABLES["cc"])


def test_leftover_partial_is_ignored_and_reported(flows_dir):
    pytest.importorskip("pyarrow")
    from netsim.analysis.io import IncompleteRunWarning
    with open(os.path.join(flows_dir, "fct.parquet.partial"), "wb") as fh:
        fh.write(b"PAR1 truncated")                       # what a SIGKILL mid-conversion leaves
    with pytest.warns(IncompleteRunWarning, match="fct.parquet.partial"):
        run = load_run(flows_dir)
    assert len(run.fct) == 13 and not run.complete


def test_status_and_missing_summary_make_a_run_incomplete(flows_dir):
    import json

    from netsim.analysis.io import run_status
    assert load_run(flows_dir).complete                    # a summary without status: written before status existed
    with open(os.path.join(flows_dir, "summary.json"), "w") as fh:
        json.dump({"status": "interrupted", "sim_time_ns": 12}, fh)
    assert run_status(flows_dir, {"status": "interrupted", "sim_time_ns": 12}) == \
        "incomplete: status 'interrupted' at sim time 12 ns"
    os.remove(os.path.join(flows_dir, "summary.json"))
    assert "no summary.json" in run_status(flows_dir, None)


def test_truncated_parquet_is_one_line_error(flows_dir):
    pytest.importorskip("pyarrow")
    write_parquet(flows_dir)
    p = os.path.join(flows_dir, "fct.parquet")
    data = open(p, "rb").read()
    with open(p, "wb") as fh:
        fh.write(data[: len(data) // 2])
    with pytest.raises(InputError, match="fct.parquet: unreadable Parquet file") as e:
        load_run(flows_dir)
    assert "\n" not in str(e.value)
