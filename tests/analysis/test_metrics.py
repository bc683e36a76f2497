"""Every metric on a hand-made trace whose answer is worked out by hand."""
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import analysis_handmade as hm
from netsim.analysis import (Run, fct_table, flow_rates_in_window, iteration_breakdown, jain_fairness,
                             jain_fairness_cc, jain_index, link_utilization, load_run, merge_intervals,
                             message_size_stats, message_sizes, moe_nonuniformity, moe_nonuniformity_by_iteration,
                             pfc_pause_table, queue_table, rank_busy_time, size_buckets, spread_bytes, throughput,
                             traffic_matrix, traffic_matrix_change)
from netsim.analysis.links import backlogged_fraction


def test_size_bucket_edges_half_open():
    b = size_buckets([99_999, 100_000, 9_999_999, 10_000_000])
    assert list(b) == ["<100KB", "100KB-10MB", "100KB-10MB", ">=10MB"]
    assert list(size_buckets([5, 2_000_000], edges=(1_000_000,))) == ["<1MB", ">=1MB"]


def test_fct_percentiles_by_size(flows_dir):
    t = fct_table(load_run(flows_dir).fct, by="size")
    assert list(t.index) == ["<100KB", "100KB-10MB", ">=10MB"]
    assert list(t["flows"]) == [10, 2, 1]
    small = t.loc["<100KB"]
    # fct = 1000..10000: linear-interpolated percentiles
    assert small["fct_p50_ns"] == 5500 and small["fct_p95_ns"] == pytest.approx(9550)
    assert small["fct_p99_ns"] == pytest.approx(9910) and small["fct_mean_ns"] == 5500
    assert small["slowdown_p50"] == pytest.approx(5.5) and small["slowdown_max"] == 10
    mid = t.loc["100KB-10MB"]
    assert mid["fct_p50_ns"] == 200_000 and mid["slowdown_mean"] == pytest.approx(2.0)
    assert t.loc[">=10MB", "slowdown_p99"] == pytest.approx(1.25)
    assert t.loc["<100KB", "bytes"] == 100_000


def test_fct_by_tag_and_empty_bucket(flows_dir):
    f = load_run(flows_dir).fct
    t = fct_table(f, by="tag")
    assert t["flows"].to_dict() == {"big": 1, "mid": 2, "small": 10}
    t2 = fct_table(f[f["tag"] == "small"], by="size")
    assert t2.loc[">=10MB", "flows"] == 0 and math.isnan(t2.loc[">=10MB", "fct_p50_ns"])


def test_fct_by_parallelism_group(train_dir):
    t = fct_table(load_run(train_dir).fct, by="group_kind")
    assert t["flows"].to_dict() == {"dp": 4, "ep": 8}
    assert fct_table(load_run(train_dir).fct, by="group")["flows"].to_dict() == {"dp0": 4, "ep0": 8}
    assert t.loc["dp", "fct_p50_ns"] == 100 and t.loc["dp", "slowdown_p50"] == 2.0


def test_queue_percentiles(flows_dir):
    q = queue_table(load_run(flows_dir).queues)
    row = q.loc[("sw0", "h9", 3)]
    assert row["samples"] == 10 and row["queue_p50_bytes"] == 4500
    assert row["queue_p95_bytes"] == pytest.approx(8550) and row["queue_max_bytes"] == 9000
    assert q.loc[("sw0", "h1", 3), "queue_max_bytes"] == 0


def test_pfc_pause_time(flows_dir):
    run = load_run(flows_dir)
    t = pfc_pause_table(run.pfc, end_ns=1000).set_index(["node", "port"])
    # 100..300 (repeated pause at 250 ignored) + 500..1000 (open at end)
    assert t.loc[("sw0", "h0"), "pauses"] == 2 and t.loc[("sw0", "h0"), "pause_time_ns"] == 700
    assert bool(t.loc[("sw0", "h0"), "paused_at_end"])
    assert t.loc[("sw1", "sw0"), "pause_time_ns"] == 50 and t.loc[("sw1", "sw0"), "pauses"] == 1
    # default end = last PFC event (500): the open pause adds nothing
    t2 = pfc_pause_table(run.pfc).set_index(["node", "port"])
    assert t2.loc[("sw0", "h0"), "pause_time_ns"] == 200
    assert len(pfc_pause_table(run.pfc.iloc[0:0])) == 0


def test_jain():
    assert jain_index([5, 5]) == 1.0
    assert jain_index([1, 2]) == pytest.approx(9 / 10)
    assert math.isnan(jain_index([]))
    f = pd.DataFrame({"flow_id": [0, 1, 2], "size_bytes": [1000, 2000, 1000],
                      "start_ns": [0, 0, 5000], "end_ns": [1000, 1000, 6000]})
    r = flow_rates_in_window(f, 0, 500)
    assert r.to_dict() == {0: pytest.approx(8e9), 1: pytest.approx(16e9)}   # flow 2 not active
    assert jain_fairness(f, 0, 1000) == pytest.approx(0.9)


def test_jain_from_cc_samples(flows_dir):
    cc = load_run(flows_dir).cc
    assert jain_fairness_cc(cc, 0, 1000) == pytest.approx(100 ** 2 / (3 * (40 ** 2 * 2 + 20 ** 2)))


def test_iteration_breakdown(train_dir):
    b = iteration_breakdown(load_run(train_dir).summary)
    assert list(b.index[:7]) == ["compute", "tp", "pp", "dp", "ep", "bubble", "other"]
    assert b["fraction"].sum() == pytest.approx(1.0)
    assert b.loc["compute", "fraction"] == pytest.approx(0.6)


def test_rank_busy_and_exposed(train_dir):
    ops = load_run(train_dir).ops
    b = rank_busy_time(ops, iteration=0)
    assert list(b.index) == [0, 1]
    assert b.loc[0].to_dict() == {"compute_ns": 250, "tp_ns": 50, "dp_ns": 100, "exposed_comm_ns": 100}
    assert rank_busy_time(ops).loc[1, "compute_ns"] == 500   # both iterations
    assert merge_intervals([0, 10], [10, 20]).tolist() == [[0, 20]]


def test_spread_bytes_conserves_bytes():
    rng = np.random.default_rng(1)
    s = rng.integers(0, 10_000, 50)
    e = s + rng.integers(0, 5_000, 50)
    b = rng.integers(1, 10**6, 50)
    edges = np.arange(0, 20_001, 700)
    assert spread_bytes(s, e, b, edges).sum() == pytest.approx(b.sum())
    # two overlapping flows: [0,100) 100 B and [50,150) 200 B, bins of 50
    assert spread_bytes([0, 50], [100, 150], [100, 200], [0, 50, 100, 150]) == pytest.approx([50, 150, 100])


def test_throughput_per_node(flows_dir):
    f = load_run(flows_dir).fct
    th = throughput(f, bin_ns=1000, by="dst", t0_ns=0, t1_ns=2_000_000)
    bits = (th["h9"] * 1000e-9).sum()
    assert bits == pytest.approx(8 * f["size_bytes"].sum())
    tp = throughput(f, bin_ns=100_000, by="pair")
    assert "h3->h9" in tp.columns
    # 20 MB over 2 ms = 80 Gbit/s in every bin of flow 12
    assert tp["h3->h9"].iloc[0] == pytest.approx(80e9)


class _LineRouter:
    def path(self, s, d, fid):
        order = ["a", "b", "c"]
        i, j = order.index(s), order.index(d)
        return tuple(order[i:j + 1]) if i < j else tuple(reversed(order[j:i + 1]))


def test_link_utilization_on_a_line():
    g = nx.Graph()
    g.add_edge("a", "b", rate_bps=8e9, delay_ns=0, kind="ethernet")   # 1 byte/ns
    g.add_edge("b", "c", rate_bps=16e9, delay_ns=0, kind="ethernet")
    f = Run(fct=pd.DataFrame({"flow_id": [0, 1], "src": ["a", "c"], "dst": ["c", "b"], "size_bytes": [1000, 500],
                              "start_ns": [0, 1000], "end_ns": [1000, 2000]})).fct
    u = link_utilization(f, g, bin_ns=1000, router=_LineRouter())
    assert list(u.columns) == ["a->b", "b->c", "c->b"]
    assert u["a->b"].tolist() == pytest.approx([1.0, 0.0])
    assert u["b->c"].tolist() == pytest.approx([0.5, 0.0])
    assert u["c->b"].tolist() == pytest.approx([0.0, 0.25])


def test_backlogged_fraction(flows_dir):
    bf = backlogged_fraction(load_run(flows_dir).queues, bin_ns=500)
    # sw0->h9 queue is 0 only at t=0: bins [0,500) 4/5 busy, [500,1000) all busy
    assert bf["sw0->h9"].tolist() == pytest.approx([0.8, 1.0])
    assert bf["sw0->h1"].tolist() == [0.0, 0.0]


def test_traffic_matrix_dense_repeats(train_dir):
    run = load_run(train_dir)
    m = traffic_matrix(run, iteration=0)
    assert m.loc["g0", "g1"] == 5000 and m.loc["g1", "g0"] == 5000 and m.loc["g0", "g0"] == 0
    ch = traffic_matrix_change(run)
    assert ch["iteration"].tolist() == [1] and ch["max_rel_diff"].tolist() == [0.0] and ch["l1_rel_diff"].tolist() == [0.0]


def test_traffic_matrix_change_detects_difference(tmp_path):
    rows = [(0, "g0", "g1", 5000), (0, "g1", "g0", 5000), (1, "g0", "g1", 10000), (1, "g1", "g0", 5000)]
    run = load_run(hm.make_training_run(str(tmp_path / "r"), tm_rows=rows))
    ch = traffic_matrix_change(run)
    assert ch.loc[0, "max_rel_diff"] == pytest.approx(0.5) and ch.loc[0, "l1_rel_diff"] == pytest.approx(0.5)


def test_traffic_matrix_from_fct_when_table_missing(train_dir):
    run = load_run(train_dir)
    run.traffic_matrix = run.traffic_matrix.iloc[0:0]
    m = traffic_matrix(run, iteration=0)
    assert m.loc["g1", "g0"] == 5000 + 100    # dp flow + a2a flow g1 -> g0 (g0 receives 100)
    assert m.loc["g0", "g1"] == 5000 and m.loc["g0", "g3"] == 300
    assert list(m.index) == ["g0", "g1", "g2", "g3"]


def test_moe_nonuniformity(train_dir):
    f = load_run(train_dir).fct
    per_op = moe_nonuniformity(f)
    assert per_op["ranks"].tolist() == [4, 4]
    by_it = moe_nonuniformity_by_iteration(f)
    assert by_it[0] == pytest.approx(0.5) and by_it[1] == pytest.approx(0.0)


def test_message_sizes(train_dir):
    run = load_run(train_dir)
    d = message_sizes(run)
    assert d.set_index(["group_kind", "size_bytes"])["count"].to_dict() == {("dp", 2000): 4, ("dp", 8000): 4, ("tp", 4000): 4}
    assert message_sizes(run, source="ops").equals(d)
    s = message_size_stats(d)
    assert s.loc["dp"].to_dict() == {"messages": 8, "bytes": 40000, "min_bytes": 2000, "median_bytes": 2000,
                                     "max_bytes": 8000}
    fd = message_sizes(run, source="fct")
    assert fd[fd["group_kind"] == "dp"]["count"].sum() == 4


def test_link_utilization_with_real_router():
    topo = pytest.importorskip("netsim.topology")
    g = topo.load_topology("leaf_spine:leaves=2,spines=2,hosts_per_leaf=2")
    n = 40
    f = Run(fct=pd.DataFrame({"flow_id": range(n), "src": ["h0"] * n, "dst": ["h3"] * n,
                              "size_bytes": [125_000] * n, "start_ns": [0] * n,
                              "end_ns": [10_000 * n] * n})).fct      # 40 x 1 Mbit over 400 us = 100 Gbit/s
    u = link_utilization(f, g, bin_ns=40_000)
    assert u["h0->leaf0"].tolist() == pytest.approx([1.0] * 10)          # host link fully used
    spine = u[[c for c in u.columns if c.startswith("leaf0->spine")]].sum(axis=1)
    assert spine.tolist() == pytest.approx([1.0] * 10)    # the same 100 Gbit/s, split by ECMP over two uplinks
    assert u["leaf0->spine0"].iloc[0] > 0 and u["leaf0->spine1"].iloc[0] > 0
    assert {c for c in u.columns if "spine" in c} <= {"leaf0->spine0", "leaf0->spine1", "spine0->leaf1", "spine1->leaf1"}


def test_jain_cc_window_estimate_for_window_based_cc():
    from netsim.analysis import cc_rate_bps
    cc = Run(cc=pd.DataFrame({"time_ns": [0, 0, 10, 10], "flow_id": [0, 1, 0, 1], "cc": ["cubic"] * 4,
                              "cwnd_bytes": [1000.0, 2000.0, 1000.0, 2000.0], "srtt_ns": [1000.0] * 4})).cc
    assert cc_rate_bps(cc).tolist() == pytest.approx([8e9, 16e9, 8e9, 16e9])
    assert cc_rate_bps(cc, max_rate_bps=10e9).tolist() == pytest.approx([8e9, 10e9, 8e9, 10e9])
    assert jain_fairness_cc(cc, 0, 100, column="rate") == pytest.approx(0.9)
    assert jain_fairness_cc(cc, 0, 100, column="cwnd_bytes") == pytest.approx(0.9)
    assert math.isnan(jain_fairness_cc(cc, 0, 100))          # no rate_bps for a window-based cc
