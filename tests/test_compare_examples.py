"""tools/compare_examples.py fields: what it reports on two small synthetic run folders.

The folders are written by hand, so every figure asserted (row counts, the
largest absolute and relative difference of a column, the changed JSON value,
the first differing text line) is known before the tool runs.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
from tools import compare_examples  # noqa: E402


def _write(folder, name, text):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
        fh.write(text)


@pytest.fixture
def runs(tmp_path):
    a, b = tmp_path / "A", tmp_path / "B"
    ca, cb = a / "flows-x-packet", b / "flows-x-packet"
    # B: rows in another order (matched by flow_id), a column added, one removed,
    # flow 1's fct 100 -> 110 (abs 10, rel 0.1), flow 2's 50 -> 45 (abs 5, rel 0.1), group renamed
    _write(ca, "fct.csv", "flow_id,fct_ns,group,old\n0,200,dp,x\n1,100,dp,y\n2,50,tp,z\n")
    _write(cb, "fct.csv", "flow_id,fct_ns,group,path_key\n2,45,tp0,7\n0,200,dp0,8\n1,110,dp0,9\n")
    _write(ca, "summary.json", json.dumps({"iteration_time_s": 2.0, "wall_time_s": 1.0,
                                            "network": {"drops": 3, "events": 10}}))
    _write(cb, "summary.json", json.dumps({"iteration_time_s": 2.5, "wall_time_s": 9.0, "status": "complete",
                                            "network": {"drops": 3}}))
    _write(ca, "exit.txt", "0\nline two\nsame\n")
    _write(cb, "exit.txt", "0\nline 2\nsame\n")
    _write(ca, "same.csv", "a,b\n1,2\n")
    _write(cb, "same.csv", "a,b\n1,2\n")
    _write(ca, "walls.json", json.dumps({"x": 1, "recompute_wall_s": 0.1}))
    _write(cb, "walls.json", json.dumps({"x": 1, "recompute_wall_s": 0.7}))
    _write(ca, "fct.parquet", "not compared")
    _write(ca, "gone.csv", "a\n1\n")
    _write(cb, "new.txt", "hello\n")
    _write(a / "only-in-a", "exit.txt", "0\n")
    return str(a), str(b)


def test_fields_reports_each_difference(runs, capsys):
    assert compare_examples.main(["fields", *runs]) == 1
    out = capsys.readouterr().out
    lines = [s.strip() for s in out.splitlines()]
    # two identical files (same.csv, walls.json once walls are left out), one only in A, one only in B, three differ
    assert "== flows-x-packet: 2 identical, 1 only in A, 1 only in B, 3 differing" in lines
    assert "only in A: gone.csv" in lines and "only in B: new.txt" in lines
    assert "only-in-a" not in out and "fct.parquet" not in out
    assert "rows 3 -> 3 (matched by flow_id)" in lines
    assert "+columns path_key" in lines and "-columns old" in lines
    assert "fct_ns: max abs 10, max rel 0.1 (2 of 3 rows differ)" in lines
    assert "group: 3 of 3 rows differ (e.g. 'dp' -> 'dp0')" in lines
    assert "1 common column(s) equal" in lines  # flow_id
    assert "+keys (1) status" in lines
    assert "-keys (1) network.events" in lines
    assert "changed (1): iteration_time_s 2.0 -> 2.5 (+0.25)" in lines
    assert "wall" not in out
    assert "lines 3 -> 3; first differing line 2: 'line two' -> 'line 2'" in lines
    assert lines[-1] == "5 differing file(s)"


def test_fields_rows_in_order_without_key_and_long_lists(tmp_path, capsys):
    a, b = tmp_path / "A", tmp_path / "B"
    _write(a / "c", "queues.csv", "time_ns,q\n0,1\n5,2\n9,3\n")
    _write(b / "c", "queues.csv", "time_ns,q\n0,1\n5,4\n")
    events = [{"ts": i} for i in range(150)]
    _write(a / "c", "trace.json", json.dumps({"traceEvents": events}))
    _write(b / "c", "trace.json", json.dumps({"traceEvents": events[::-1]}))
    assert compare_examples.main(["fields", str(a), str(b)]) == 1
    lines = [s.strip() for s in capsys.readouterr().out.splitlines()]
    assert "rows 3 -> 2 (matched in order; 1 only in A, 0 only in B)" in lines
    assert "q: max abs 2, max rel 1 (1 of 2 rows differ)" in lines
    assert "changed (1): traceEvents 150 items each, the same ones in another order" in lines


def test_fields_identical_folders(runs, capsys):
    a, _ = runs
    assert compare_examples.main(["fields", a, a]) == 0
    out = capsys.readouterr().out
    assert "0 differing file(s)" in out
    assert compare_examples.main(["diff", a, a]) == 0
