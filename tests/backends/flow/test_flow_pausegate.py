"""PFC port fairness and head-of-line blocking only where a standing queue reaches XOFF (pausegate.py).

Topology: h0, h1 -- s1 -- s2 -- h2 at 100 Gb/s, h3 at 25 Gb/s, 1 us links. f0 h0->h3 and f1
h1->h2 (10 MB at 0), f2 h1->h3 (1 MB at 5 us). Max-min: f0 = f2 = 12.5 Gb/s on s2->h3, f1 75 Gb/s on
s1->s2. The packet backend with the BDP window of ``--cc none`` never pauses here (f1 1.091 ms,
f2 0.670 ms); the flow backend used to pause s1->s2 for f0 and f2 and hold f1 back to 2.340 ms.
"""
from __future__ import annotations

import pytest

from netsim.backends.base import create_backend
from netsim.backends.flow.pausegate import StandingWindow, pausing_ingresses
from netsim.flowfile import FlowSpec
from netsim.simulate import run_flows
from netsim.topology import load_topology

MM = """name: mm
link_defaults: {kind: ethernet, delay_ns: 1us, rate_bps: 100Gbps}
nodes:
  h0: {kind: host}
  h1: {kind: host}
  h2: {kind: host}
  h3: {kind: host}
  s1: {kind: switch}
  s2: {kind: switch}
links:
  - {src: h0, dst: s1}
  - {src: h1, dst: s1}
  - {src: s1, dst: s2}
  - {src: h2, dst: s2}
  - {src: h3, dst: s2, rate_bps: 25Gbps}
"""
FLOWS = [FlowSpec("h0", "h3", 10_000_000, 0), FlowSpec("h1", "h2", 10_000_000, 0),
         FlowSpec("h1", "h3", 1_000_000, 5_000)]
PAYLOAD = 1438 / 1500
#: f1 at its max-min 75 Gb/s, payload bytes over wire rate (ns)
F1_MAXMIN_NS = 10e6 * 8 / (75e9 * PAYLOAD) * 1e9


@pytest.fixture(scope="module")
def mm(tmp_path_factory):
    path = tmp_path_factory.mktemp("mm") / "mm.yaml"
    path.write_text(MM)
    return load_topology(str(path))


def _f1_ns(graph, **kw) -> float:
    recs = run_flows(graph, FLOWS, backend="flow", **kw)["records"]
    return {r.flow_id: r.fct_ns for r in recs}[1]


def test_bdp_windows_below_xoff_share_max_min(mm):
    # standing queue at s2->h3: 2 x (BDP window - 12.5 Gb/s x RTT) = 24 kB (wire) < XOFF 56 kB
    assert _f1_ns(mm) == pytest.approx(F1_MAXMIN_NS, rel=0.01)


def test_a_window_whose_queue_reaches_xoff_pauses_again(mm):
    """While f0 and f2 share s2->h3 (12.5 Gb/s each, RTT 6.751 us: 10,548 B in flight each) their
    queue is 2 x (window x 1500 / 1438 - 10,548) B against the s1->s2 ingress' XOFF 56,000 B:
    51.9 kB with 35 kB windows (no pause), 62.4 kB with 40 kB (pause, f1 held back)."""
    below = _f1_ns(mm, cc_params={"none": {"window_bytes": 35_000}})
    above = _f1_ns(mm, cc_params={"none": {"window_bytes": 40_000}})
    assert below == pytest.approx(F1_MAXMIN_NS, rel=0.01)
    assert above > 1.2 * F1_MAXMIN_NS


def test_gate_xoff_is_the_packet_backends(mm):
    for params in ({}, {"pfc_xon_bytes": 10_000}, {"pfc_xoff_bytes.3": 77_000}):
        flow = create_backend("flow", mm, params=params)
        packet = create_backend("packet", mm, params=params)
        for a, b in (("s1", "s2"), ("h3", "s2"), ("h0", "s1")):
            assert flow.solver.gate.xoff(flow.link_ids[(a, b)], 3) == packet.net.ports[(a, b)].xoff[3], (params, a, b)


def test_unbounded_windows_always_count_and_first_hops_never():
    caps = {0: 2.0, 1: 1.0}                     # link 1 is the bottleneck
    # one rate-based flow (no window) held at link 1: its ingress 0 pauses whatever the XOFF
    assert pausing_ingresses([[0, 1]], [None], [3], [1.0], caps, lambda l, p: 1e12) == frozenset({0})
    # held at its first hop: the sender's own queue, no ingress to pause
    assert pausing_ingresses([[1]], [None], [3], [1.0], caps, lambda l, p: 0.0) == frozenset()
    # a window that the path holds at its rate queues nothing
    w = StandingWindow(100.0, 100.0)
    assert pausing_ingresses([[0, 1]], [w], [3], [1.0], caps, lambda l, p: 0.0) == frozenset()


def test_set_xoff_is_honoured_on_the_flow_backend(mm, tmp_path):
    """``--set pfc_xoff_bytes`` reaches the gate: with 40 kB windows the 62.4 kB standing queue
    pauses under the automatic 56 kB XOFF but not under a 100 kB one (f1 back at max-min)."""
    from netsim.cli import main
    flows = tmp_path / "f.csv"
    flows.write_text("src,dst,size_bytes,start_ns\nh0,h3,10000000,0\nh1,h2,10000000,0\nh1,h3,1000000,5000\n")
    topo = tmp_path / "mm.yaml"
    topo.write_text(MM)
    out = {}
    for xoff in ("0", "100000"):
        d = tmp_path / f"x{xoff}"
        rc = main(["flows", str(topo), str(flows), "--backend", "flow", "--cc", "none", "--cc-param",
                   "none.window_bytes=40000", "--set", f"pfc_xoff_bytes={xoff}", "--out", str(d),
                   "--quiet", "--no-trace"])
        assert rc == 0
        import csv
        rows = list(csv.DictReader(open(d / "fct.csv")))
        out[xoff] = float(next(r for r in rows if r["flow_id"] == "1")["fct_ns"])
    assert out["0"] > 1.2 * F1_MAXMIN_NS
    assert out["100000"] == pytest.approx(F1_MAXMIN_NS, rel=0.01)
