"""trace.json streamed within a size budget: same document as in memory, aggregation that conserves bytes and time."""
import json
import shutil

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from netsim.analysis import build_trace, load_run, write_trace
from netsim.analysis.io import Run
from netsim.analysis.traceagg import FlowLinks, bin_bytes, coarsen, counter_events


def _load(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("which", ["flows_dir", "train_dir"])
def test_streamed_file_is_the_in_memory_document(which, request, tmp_path):
    d = request.getfixturevalue(which)
    doc = _load(write_trace(d, out=str(tmp_path / "t.json")))
    assert doc == json.loads(json.dumps(build_trace(load_run(d))))
    assert doc["otherData"]["events"] == len(doc["traceEvents"])


def test_trace_does_not_depend_on_the_folder_name(flows_dir, tmp_path):
    other = str(tmp_path / "a_completely_different_name")
    shutil.copytree(flows_dir, other)
    a, b = write_trace(flows_dir), write_trace(other)
    assert open(a, "rb").read() == open(b, "rb").read()
    assert "flows_run" not in open(a, encoding="utf-8").read()


def test_bins_by_hand():
    # 1000 B over [0, 1000) and 500 B over [100, 600), 4 bins of 250 ns, one link
    fct = pd.DataFrame({"flow_id": [0, 1], "src": ["a", "a"], "dst": ["b", "b"], "size_bytes": [1000, 500],
                        "start_ns": [0, 100], "end_ns": [1000, 600]})
    links = FlowLinks(pairs=[("a", "b")])
    got = bin_bytes([fct], links, 0, 250, 4)
    assert got.tolist() == [[250 + 150, 250 + 250, 250 + 100, 250]]


def _graph_and_flows(n=3000, seed=3):
    g = nx.Graph()
    hosts = [f"h{i}" for i in range(8)]
    for i, h in enumerate(hosts):
        g.add_edge(h, f"sw{i % 2}", rate_bps=1e11, delay_ns=1, kind="ethernet")
    g.add_edge("sw0", "sw1", rate_bps=1e11, delay_ns=1, kind="ethernet")
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 8, n)
    dst = (src + rng.integers(1, 8, n)) % 8
    start = rng.integers(0, 1_000_000, n)
    fct = pd.DataFrame({"flow_id": np.arange(n), "src": [hosts[i] for i in src], "dst": [hosts[i] for i in dst],
                        "size_bytes": rng.integers(1, 10**6, n), "start_ns": start,
                        "end_ns": start + rng.integers(0, 300_000, n)})
    return g, fct


class _Router:
    """Host -> its switch -> (other switch) -> host."""

    def path(self, s, d, fid):
        a, b = f"sw{int(s[1:]) % 2}", f"sw{int(d[1:]) % 2}"
        return (s, a, d) if a == b else (s, a, b, d)

    def unique_path(self, s, d):
        return self.path(s, d, 0)


def test_aggregated_bins_conserve_each_links_bytes():
    g, fct = _graph_and_flows()
    links = FlowLinks(_Router(), g)
    binned = bin_bytes([fct.iloc[:1000], fct.iloc[1000:]], links, 0, 997, 1400)
    want = np.zeros(len(links.names))
    for s, d, b in zip(fct["src"], fct["dst"], fct["size_bytes"]):
        for i in links._path_ids(_Router().path(s, d, 0)):
            want[i] += b
    assert np.allclose(binned.sum(axis=1), want, rtol=1e-9)
    coarse, w = coarsen(binned, 997, 500)
    assert np.allclose(coarse.sum(axis=1), want, rtol=1e-9) and w > 997 and counter_events(coarse, w) <= 500


def test_big_runs_are_aggregated_within_the_budget(train_dir):
    g, fct = _graph_and_flows()
    run = load_run(train_dir)
    run = Run(fct=fct, ops=run.ops)
    doc = build_trace(run, graph=g, router=_Router(), max_events=2000)
    meta = doc["otherData"]
    assert meta["flows"].startswith("aggregated") and meta["ops"].startswith("per op")
    assert len(doc["traceEvents"]) == meta["events"] <= 2000
    assert any(e["ph"] == "C" and e["name"] == "throughput_gbps" for e in doc["traceEvents"])
    assert not any(e["ph"] == "b" for e in doc["traceEvents"])


def test_aggregated_ops_keep_busy_time_and_counts(train_dir):
    run = load_run(train_dir)
    doc = build_trace(run, max_events=len(run.ops))       # ops alone exceed half the budget
    assert doc["otherData"]["ops"].startswith("aggregated")
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == len(run.ops.groupby(["rank", "kind", "iteration"]))
    assert sum(e["args"]["ops"] for e in xs) == len(run.ops)
    assert sum(e["args"]["busy_ns"] for e in xs) == int((run.ops["end_ns"] - run.ops["start_ns"]).sum())
