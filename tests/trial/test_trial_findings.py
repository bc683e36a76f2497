"""Findings of the trial (outside-user) pass on hand-written inputs.

Each test states what a hand computation says; each was a strict xfail on the
commit the trial ran on (bd85444) and passes since its fix (issue #14).
"""
import csv

import networkx as nx
import pytest

from netsim.runtime import run_training

RATE_BPS = 100e9
MTU, HEADER = 1500, 62
EFF_BPS = RATE_BPS * (MTU - HEADER) / MTU  # payload rate of one 100 Gb/s link


def _star(nic_kind=None):
    """Four GPUs, each behind a PCIe link and a NIC, on one switch (no builder attributes)."""
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for i in range(4):
        nic = {"kind": "nic"} if nic_kind is None else {"kind": "nic", "nic_kind": nic_kind}
        g.add_node(f"G{i}", kind="gpu")
        g.add_node(f"N{i}", **nic)
        g.add_edge(f"G{i}", f"N{i}", kind="pcie", rate_bps=256e9, delay_ns=150)
        g.add_edge(f"N{i}", "sw", kind="ethernet", rate_bps=RATE_BPS, delay_ns=1000)
    return g


def _dp4(params):
    return {"name": "dp4", "model": {"layer_list": [{"name": "l0", "params": params, "fwd_flops": 1000,
                                                    "out_elems": 10}]},
            "training": {"global_batch": 4, "micro_batch": 1, "precision": "fp32"},
            "parallelism": {"dp": 4}}


def test_nic_without_nic_kind_is_not_capped_at_kernel_tcp():
    # ring all-reduce of 20 MB on 4 ranks: 2(n-1)/n * S / B_eff
    closed_s = 1.5 * 20e6 * 8 / EFF_BPS
    s = run_training(_star(), _dp4(5_000_000), backend="analytic")
    assert s["breakdown_s"]["dp"] == pytest.approx(closed_s, rel=0.02)


def test_nic_with_nic_kind_roce_meets_the_closed_form():
    closed_s = 1.5 * 20e6 * 8 / EFF_BPS
    s = run_training(_star("roce"), _dp4(5_000_000), backend="analytic")
    assert s["breakdown_s"]["dp"] == pytest.approx(closed_s, rel=0.02)


def test_analytic_respects_capacity_after_a_degrade(tmp_path):
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for n in "ABCD":
        g.add_node(n, kind="gpu")
        g.add_edge(n, "sw", kind="ethernet", rate_bps=RATE_BPS, delay_ns=1000)
    run_training(g, _dp4(5_000_000), backend="analytic", out_dir=tmp_path,
                 whatif={"degrade_link": ["A:sw=0.5@1ms"]}, progress=False)
    rows = [r for r in csv.DictReader(open(tmp_path / "fct.csv")) if r["src"] == "A"]
    spans = sorted((int(r["start_ns"]), int(r["end_ns"]), int(r["size_bytes"])) for r in rows
                   if int(r["start_ns"]) >= 1_000_000)
    # two flows of A that overlap must together fit through the degraded link over their joint span
    worst = 0.0
    for (s1, e1, b1), (s2, e2, b2) in zip(spans, spans[1:]):
        if s2 < e1:
            worst = max(worst, (b1 + b2) * 8 / ((max(e1, e2) - s1) * 1e-9))
    assert worst <= 0.5 * EFF_BPS * 1.001


def test_sequence_parallel_divides_pipeline_bytes_by_tp():
    from pathlib import Path
    wl = str(Path(__file__).resolve().parents[2] / "workloads" / "gpt-1.5b-t2p2d2-small.yaml")
    off = run_training(_tree8(), wl, backend="analytic")
    on = run_training(_tree8(), wl, backend="analytic",
                      workload_overrides={"parallelism.sequence_parallel": True})
    assert on["flow_bytes_per_iteration"]["pp"][0] * 2 == off["flow_bytes_per_iteration"]["pp"][0]


def _tree8():
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for i in range(8):
        g.add_node(f"G{i}", kind="gpu")
        g.add_node(f"N{i}", kind="nic", nic_kind="roce")
        g.add_edge(f"G{i}", f"N{i}", kind="pcie", rate_bps=256e9, delay_ns=150)
        g.add_edge(f"N{i}", "sw", kind="ethernet", rate_bps=RATE_BPS, delay_ns=1000)
    return g
