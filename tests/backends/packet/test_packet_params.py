"""Simulation parameters: per-priority forms, node overrides, ECN variants, samplers, fairness."""
import os

import networkx as nx
import pytest

import cc_fixtures  # noqa: F401
from pkt_helpers import run, star

from netsim.network.params import SIM_PARAMS, per_priority, resolve_params
from netsim.errors import InputError
from netsim.flowfile import load_flows
from netsim.simulate import run_flows
from netsim.topology import load_topology

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_every_param_has_unit_doc_source():
    for p in SIM_PARAMS:
        assert p.doc and p.source
        if p.name.endswith(("_bytes", "_ns", "_bps")):
            assert p.kind in ("size", "time", "rate")


def test_unknown_key_lists_known_keys():
    with pytest.raises(InputError) as e:
        resolve_params({"nope_bytes": 1})
    assert "buffer_bytes" in str(e.value)


def test_per_priority_resolution():
    p = resolve_params({"ecn_kmin_bytes": "10KB", "ecn_kmin_bytes.3": "1MB"})
    assert per_priority(p, "ecn_kmin_bytes") == [10_000] * 3 + [1_000_000] + [10_000] * 4


def _two_prio_incast(params):
    g = star(5)
    flows = [(f"h{i}", "h4", 300_000, 0, 0 if i < 2 else 3, "_test_roce_ecn") for i in range(4)]
    return run(g, flows, params=dict({"lossless_priorities": "0,3"}, **params))


def test_per_priority_ecn_thresholds_apply_per_class():
    be, recs = _two_prio_incast({"ecn_kmin_bytes": 0, "ecn_kmax_bytes": 0, "ecn_kmin_bytes.3": "100MB",
                                 "ecn_kmax_bytes.3": "100MB"})
    marked = {r.priority: 0 for r in recs.values()}
    for r in recs.values():
        marked[r.priority] += r.ecn_marked_packets
    assert marked[0] > 0 and marked[3] == 0


@pytest.mark.parametrize("where", ["enqueue", "dequeue"])
def test_ecn_step_marking_both_points(where):
    be, recs = _two_prio_incast({"ecn_kmin_bytes": "20KB", "ecn_kmax_bytes": "20KB", "ecn_mark_at": where})
    assert be.stats()["ecn_marks"] > 0


def test_ecn_red_probability_between_thresholds():
    """Queue held between Kmin and Kmax: the marked fraction sits near Pmax*(q-Kmin)/(Kmax-Kmin)."""
    be, recs = _two_prio_incast({"ecn_kmin_bytes": 0, "ecn_kmax_bytes": "100MB", "ecn_pmax": 1.0})
    # with Kmax huge and q small, p = q/100MB is tiny: almost nothing is marked. Hand bound: ~835 data
    # packets (4 x 300 KB / 1438 B), each seeing q <= 1.2 MB (everything sent), so p <= 0.012 and the
    # expected count is below 835 x 0.012 = 10 (about half that: q grows from 0); step marking at
    # Kmin = 0 would mark nearly every queued packet
    assert be.stats()["ecn_marks"] <= 10


def test_queue_and_cc_samplers_write_rows(tmp_path):
    g = star(3)
    from netsim.flowfile import FlowSpec
    s = run_flows(g, [FlowSpec("h0", "h2", 500_000, 0), FlowSpec("h1", "h2", 500_000, 0)],
                  params={"queue_sample_ns": "1us", "cc_sample_ns": "2us"}, out_dir=str(tmp_path))
    q = open(tmp_path / "queues.csv").read().splitlines()[1:]
    assert q and all(r.split(",")[1] == "sw" and r.split(",")[2] == "h2" for r in q)
    times = sorted({int(r.split(",")[0]) for r in q})
    assert all(t % 1000 == 0 for t in times)
    cc = open(tmp_path / "cc.csv").read().splitlines()[1:]
    assert cc and {r.split(",")[1] for r in cc} == {"0", "1"}
    assert all(int(r.split(",")[0]) % 2000 == 0 for r in cc)


def test_jain_fairness_window():
    g = star(3)
    from netsim.flowfile import FlowSpec
    flows = [FlowSpec("h0", "h2", 1_000_000, 0), FlowSpec("h1", "h2", 1_000_000, 0)]
    s = run_flows(g, flows, params={"jain_start_ns": "10us", "jain_window_ns": "100us"})
    assert s["jain_fairness"] > 0.95
    s2 = run_flows(g, [FlowSpec("h0", "h2", 1_000_000, 0), FlowSpec("h1", "h2", 10_000, 0)])
    assert s2["jain_fairness"] < 0.95  # size/fct differs a lot between a mouse and an elephant


def test_hpcc_topology_and_flow_txt_end_to_end(tmp_path):
    d = os.path.join(ROOT, "topologies", "hpcc_small")
    g = load_topology(os.path.join(d, "topology.txt"))
    flows = load_flows(os.path.join(d, "flow.txt"), g)
    s = run_flows(g, flows, out_dir=str(tmp_path), hpcc_fct=True)
    assert s["completed"] == len(flows)
    lines = open(tmp_path / "fct.txt").read().splitlines()
    assert len(lines) == len(flows)
    sips = {int(ln.split()[0], 16) for ln in lines}
    expect = {0x0B000001 + ((int(f.src) // 256) << 16) + ((int(f.src) % 256) << 8) for f in flows}
    assert sips == expect
    assert {int(ln.split()[3]) for ln in lines} == {int(f.tag.split("=")[1]) for f in flows}
    assert sorted(int(ln.split()[4]) for ln in lines) == sorted(f.size_bytes for f in flows)
    for ln in lines:
        assert len(ln.split()) == 8


def test_cc_implied_ecn_settings_layering():
    """Switch ECN: SIM default < the run's CC preset for the port rate < --set < node attribute."""
    from pkt_helpers import make_backend
    from netsim.topology.builders import dumbbell
    from netsim.backends.packet.backend import cc_registry
    if "dcqcn" not in cc_registry() or not hasattr(cc_registry()["dcqcn"], "ecn_settings"):
        pytest.skip("dcqcn with ecn_settings not available")
    g = dumbbell(1, 1)
    _, be = make_backend(g, cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}})
    implied = cc_registry()["dcqcn"].ecn_settings(cc_registry()["dcqcn"].PARAMS.resolve({"preset": "hpcc"}), 100e9)
    port = be.net.ports[("switch_left", "switch_right")]
    assert port.kmin[3] == implied["ecn_kmin_bytes"] != SIM_PARAMS["ecn_kmin_bytes"].default
    _, be = make_backend(g, cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}}, params={"ecn_kmin_bytes": 1234})
    assert be.net.ports[("switch_left", "switch_right")].kmin[3] == 1234
    g.nodes["switch_left"]["ecn_kmin_bytes"] = 777
    _, be = make_backend(g, cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}}, params={"ecn_kmin_bytes": 1234})
    assert be.net.ports[("switch_left", "switch_right")].kmin[3] == 777
    assert be.net.ports[("switch_right", "switch_left")].kmin[3] == 1234


def test_hpcc_standalone_fct_formula(tmp_path):
    """standalone = 2*sum(delay) + sum(payload*8/rate) + (size + packets*header)*8/bottleneck (HPCC qp_finish)."""
    from netsim.flowfile import FlowSpec
    from netsim.topology.builders import dumbbell
    g = dumbbell(1, 1, bottleneck_rate_bps=40e9)
    size = 100_000
    run_flows(g, [FlowSpec("left0", "right0", size, 0)], out_dir=str(tmp_path), hpcc_fct=True)
    row = open(tmp_path / "fct.txt").read().split()
    mss, hdr = 1438, 62
    base = 2 * 3000 + mss * 8 / 100 + mss * 8 / 40 + mss * 8 / 100
    total = size + (-(-size // mss)) * hdr
    assert int(row[7]) == int(base) + int(total * 8 / 40)
    assert int(row[6]) > 0 and int(row[5]) == 0


def test_dcqcn_hpcc_preset_scales_kmin_with_port_rate():
    """HPCC's ns-3 scripts: Kmin = 100 KB x rate/25G -> 400 KB on a 100 G port, 100 KB on a 25 G one."""
    from pkt_helpers import make_backend
    from netsim.topology.builders import dumbbell
    g = dumbbell(1, 1, host_rate_bps=25e9, bottleneck_rate_bps=100e9)
    _, be = make_backend(g, cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}})
    fast = be.net.ports[("switch_left", "switch_right")]
    slow = be.net.ports[("switch_left", "left0")]
    assert fast.kmin[3] == 400_000 and slow.kmin[3] == 100_000
    assert fast.kmax[3] == 1_600_000 and fast.mark_deq  # DCQCN CP marks at egress (dequeue)
    # --set wins over the preset, for every port
    _, be = make_backend(g, cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}},
                         params={"ecn_kmin_bytes": "50KB"})
    assert be.net.ports[("switch_left", "switch_right")].kmin[3] == 50_000
    assert be.net.ports[("switch_left", "switch_right")].kmax[3] == 1_600_000  # not set: still the preset
    # DCTCP marks at enqueue; cubic implies nothing (network defaults)
    _, be = make_backend(g, cc="dctcp")
    assert not be.net.ports[("switch_left", "switch_right")].mark_deq
    _, be = make_backend(g, cc="cubic")
    p = be.net.ports[("switch_left", "switch_right")]
    assert p.kmin[3] == SIM_PARAMS["ecn_kmin_bytes"].default and p.kmax[3] == SIM_PARAMS["ecn_kmax_bytes"].default


def test_jain_window_counts_only_bytes_inside_the_window():
    """Two flows share a 100 G port; the 1 MB one finishes early, the 3 MB one runs on alone.

    Closed forms for per-flow throughput = bytes delivered in W / |W|:
    W = last part of the run (flow 0 already done): x = (0, c) -> index 1/2;
    W = the whole run: x = (1 MB, 3 MB)/T -> (1+3)^2 / (2 (1+9)) = 0.8;
    W = early, both active at half rate each: index ~1.
    """
    from netsim.flowfile import FlowSpec
    g = star(3)
    flows = [FlowSpec("h0", "h2", 1_000_000, 0), FlowSpec("h1", "h2", 3_000_000, 0)]
    s = run_flows(g, flows)
    end = s["sim_time_ns"]
    first = min(r.end_ns for r in s["records"])
    assert first < end * 0.6     # sim_time_ns: the 3 MB flow's end (its receiver), fct.csv end_ns
    late = run_flows(g, flows, params={"jain_start_ns": int(end * 0.6), "jain_window_ns": int(end)})
    assert late["jain_fairness"] == pytest.approx(0.5, abs=1e-9)
    whole = run_flows(g, flows, params={"jain_start_ns": 0, "jain_window_ns": 10 * end})
    assert whole["jain_fairness"] == pytest.approx(0.8, abs=1e-6)
    early = run_flows(g, flows, params={"jain_start_ns": "10us", "jain_window_ns": int(first * 0.8)})
    assert early["jain_fairness"] > 0.98
