"""The flow backend's per-flow speed-ups of session 12 (issue 22) change no output.

What was changed: a record's slowdown is memoized per ``(fct, ideal)``
(:func:`netsim.backends.flow.completions._slowdown`), a tee of sinks hands
each sink the rows of one delivery in one ``add_many`` call, the traffic
sink and ``FlowRecord.row`` take rows in one call each, and ``CsvSink``
lets the csv writer format ints and strings itself. Checked here: each piece
against the plain definition it replaces, and (slow) ``fct.csv`` byte for
byte, the iteration time and the event counters of the 64-GPU step of ``bench
flow_gpt_weak_scaling`` (GPT-3B t=8 p=4 d=2, global batch 32, on
``gpu_cluster:servers=8``, seed 0) with every congestion control the flow
backend models, against digests written by main at commit 1109403 (before
these changes).
"""
import csv
import hashlib
import io
import math
import os

import pytest

from netsim.backends.flow.ccmodel import MODEL_TABLES
from netsim.backends.flow.completions import SLOWDOWN_MEMO, _slowdown
from netsim.records import FCT_COLUMNS, CsvSink, FlowTag, ListSink, TeeSink, _fmt, make_record
from netsim.runtime.summary import TrafficSink

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

#: cc -> (iteration_time_s, flows, first 16 hex digits of fct.csv's SHA-256, the fluid network's events,
#: SimPy events scheduled, rate updates, recomputations), written by main 1109403
MAIN_1109403 = {
    "none": (0.952751367348, 173376, "3624c0c47d080bc6", 20007, 38972, 173632, 23),
    "dcqcn": (0.952751367348, 173376, "07c35d5097309f35", 20073, 40625, 173632, 89),
    "cubic": (1.031985319206, 173376, "59d1fd6cf6c1fbf3", 20001, 38966, 173376, 15),
    "dctcp": (1.031985319206, 173376, "415644c84206abfc", 20001, 38966, 173376, 15),
    "hpcc": (0.957685662365, 173376, "54fd41fcb0c7a3c7", 20007, 38972, 173632, 23),
    "swift": (0.952751367348, 173376, "62bc947734245cfe", 20007, 38972, 173632, 23),
}


def test_every_modelled_cc_has_a_reference():
    assert set(MAIN_1109403) == set(MODEL_TABLES)


def test_slowdown_memo_equals_the_rounded_ratio():
    memo = {}
    for fct, ideal in [(1, 3), (2_000_001, 999_983), (7, 7), (5, 0), (123_456_789, 1_234), (1, 3)]:
        want = round(fct / ideal, 6) if ideal > 0 else math.nan
        got = memo.get((fct, ideal))
        got = _slowdown(memo, fct, ideal) if got is None else got
        assert got == want or (math.isnan(want) and math.isnan(got))
    assert len(memo) == 5                           # the repeated pair was found, not recomputed
    memo = {(i, 1): float(i) for i in range(SLOWDOWN_MEMO)}
    assert _slowdown(memo, 3, 2) == 1.5 and len(memo) == 1     # a full memo is emptied first


def _records(n=40):
    tags = [FlowTag(op="ar", group=f"tp{i % 3}", iteration=i % 2, group_kind="tp", step=i) for i in range(4)]
    return [make_record(i, f"g{i % 5}", f"g{(i + 1) % 5}", 1000 + i, 10 * i, 10 * i + 7 + i % 4, 5 + i % 3,
                        tags[i % 4], cc="none", path_key=i * 7) for i in range(n)]


def test_tee_add_many_gives_each_sink_what_add_gives_it():
    recs = _records()
    one = [ListSink(), TrafficSink()]
    tee_one = TeeSink(*one)
    for r in recs:
        tee_one.add(r)
    many = [ListSink(), TrafficSink()]
    tee_many = TeeSink(*many)
    tee_many.add_many(recs[:7])
    tee_many.add_many(iter(recs[7:]))               # any iterable
    assert tee_many.count == tee_one.count == len(recs)
    assert many[0].rows == one[0].rows
    assert dict(many[1].bytes) == dict(one[1].bytes) and many[1].count == one[1].count == len(recs)


def test_record_row_is_its_columns_in_order():
    r = _records(1)[0]
    assert r.row() == tuple(getattr(r, c) for c in FCT_COLUMNS)


def test_csv_sink_writes_what_fmt_of_every_value_writes(tmp_path):
    rows = [(1, "a,b", 'q"x', 0.1, math.nan, None, True, -5, 10**30, 1e-12, "", 3.0, "é")] * 3
    rows += [r.row() for r in _records(5)]
    cols = [f"c{i}" for i in range(13)]
    s = CsvSink(tmp_path / "x.csv", cols, chunk_rows=4)
    for r in rows:
        s.add(r)
    s.close()
    out = io.StringIO()
    out.write(",".join(cols) + "\n")
    w = csv.writer(out, lineterminator="\n")
    for r in rows:
        w.writerow([_fmt(v) for v in r])
    assert (tmp_path / "x.csv").read_text() == out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("cc", sorted(MAIN_1109403))
def test_64gpu_step_fct_csv_byte_identical_to_main(cc, tmp_path):
    from netsim.runtime import run_training
    s = run_training("gpu_cluster:servers=8,gpus_per_server=8", os.path.join(ROOT, "workloads", "gpt-3b-t2p2d8.yaml"),
                     backend="flow", cc=cc, progress=False, out_dir=str(tmp_path),
                     workload_overrides={"parallelism.tp": 8, "parallelism.pp": 4, "parallelism.dp": 2,
                                         "training.global_batch": 32})
    digest = hashlib.sha256((tmp_path / "fct.csv").read_bytes()).hexdigest()[:16]
    net = s["network"]
    assert (s["iteration_time_s"], s["flows"], digest, net["events"], s["sim_events"], net["rate_updates"],
            net["recomputations"]) == MAIN_1109403[cc]
