"""trace.json: valid JSON, a track per rank, durations that add up, nothing hidden."""
import json
from collections import defaultdict

import networkx as nx
import pytest

from netsim.analysis import build_trace, load_run, write_trace


def _load(path):
    with open(path) as fh:
        return json.load(fh)


def test_trace_ranks_and_durations(train_dir):
    path = write_trace(train_dir)
    doc = _load(path)
    ev = doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    assert names[0] == "rank 0" and names[1] == "rank 1"
    ops = load_run(train_dir).ops
    dur = defaultdict(float)
    for e in ev:
        if e["ph"] == "X":
            dur[e["pid"]] += e["dur"]
    for rank, g in ops.groupby("rank"):
        assert dur[rank] * 1000 == pytest.approx((g["end_ns"] - g["start_ns"]).sum())
    assert sum(1 for e in ev if e["ph"] == "X") == len(ops)


def test_overlapping_ops_get_lanes(train_dir):
    ev = build_trace(load_run(train_dir))["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    assert sorted(v for (p, _), v in threads.items() if p == 0) == ["compute", "dp", "dp #2", "tp"]
    by_thread = defaultdict(list)
    for e in ev:
        if e["ph"] == "X":
            by_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_thread.values():        # complete events never overlap inside a thread
        spans.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))


def test_flows_are_async_pairs_per_link(flows_dir):
    doc = _load(write_trace(flows_dir, out=flows_dir + "/t.json"))
    ev = doc["traceEvents"]
    b = [e for e in ev if e["ph"] == "b"]
    e_ = [e for e in ev if e["ph"] == "e"]
    assert len(b) == len(e_) == 13
    assert len({x["id"] for x in b}) == 13                  # unique ids: overlapping flows all visible
    ends = {x["id"]: x["ts"] for x in e_}
    assert all(ends[x["id"]] >= x["ts"] for x in b)
    links = {x["args"]["name"] for x in ev if x["ph"] == "M" and x["name"] == "process_name"}
    assert {"link h0->h9", "link h3->h9", "queue sw0->h9"} <= links
    assert any(x["ph"] == "C" for x in ev)
    assert doc["displayTimeUnit"] == "ns"


def test_flows_on_graph_links(flows_dir):
    g = nx.Graph()
    for h in ("h0", "h1", "h2", "h3", "h9"):
        g.add_edge(h, "sw0", rate_bps=1e11, delay_ns=1, kind="ethernet")

    class R:
        def path(self, s, d, fid):
            return (s, "sw0", d)

    ev = build_trace(load_run(flows_dir), graph=g, router=R())["traceEvents"]
    links = {x["args"]["name"] for x in ev if x["ph"] == "M" and x["name"] == "process_name"}
    assert "link sw0->h9" in links and "link h0->sw0" in links
    assert sum(1 for x in ev if x["ph"] == "b") == 26          # each flow on its 2 links


def test_trace_of_empty_dir(tmp_path):
    doc = _load(write_trace(str(tmp_path)))
    assert doc["traceEvents"] == []
