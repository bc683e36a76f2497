"""Reliable transport mechanics and the hooks the congestion controls rely on.

Losses are injected deterministically by wrapping the switch's receive
handler, so each test knows exactly which segment was lost.
"""
import os
import sys

import networkx as nx
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "backends", "packet"))
import cc_fixtures  # noqa: E402,F401
from pkt_helpers import make_backend, run  # noqa: E402

from netsim.transport.packet import DATA, NACK  # noqa: E402


def _line():
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for h in ("a", "b"):
        g.add_node(h, kind="host")
        g.add_edge(h, "sw", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    return g


def _run_with_losses(cc, size, lose_seqs, params=None, cc_params=None):
    """Drop the first transmission of each data segment whose seq is in ``lose_seqs`` at the switch."""
    g = _line()
    env, be = make_backend(g, cc=cc, params=params, cc_params=cc_params)
    port_in = be.net.ports[("a", "sw")]
    node = be.net.nodes["sw"]
    lost = set()
    seen = {"nack": 0}

    def rx(pkt):
        if pkt.kind == DATA and pkt.seq in lose_seqs and pkt.seq not in lost:
            lost.add(pkt.seq)
            be.net.drop(pkt, port_in)
            return
        node.receive(pkt)

    def rx_back(pkt):
        if pkt.kind == NACK:
            seen["nack"] += 1
        node.receive(pkt)

    port_in.intercept(rx)
    be.net.ports[("b", "sw")].intercept(rx_back)
    ev = be.send("a", "b", size)
    env.run()
    assert ev.triggered
    return be, be.all_flows[0], ev.value, seen


MSS = 1438


def test_tcp_single_loss_fast_retransmit_no_timeout():
    be, f, rec, _ = _run_with_losses("_test_tcp", 200 * MSS, {20 * MSS})
    cc = f.cc
    assert f.timeouts == 0 and f.retransmits == 1 and rec.retransmitted_bytes == MSS
    assert cc.count("loss") == 1 and cc.count("recovery_end") == 1 and cc.count("timeout") == 0
    assert f.rcv_nxt == 200 * MSS
    assert sum(c[2] for c in cc.calls if c[0] == "ack") == 200 * MSS  # on_ack covers every byte once
    assert cc.count("send") == 201


def test_tcp_two_holes_newreno_partial_ack():
    be, f, rec, _ = _run_with_losses("_test_tcp", 200 * MSS, {20 * MSS, 30 * MSS})
    assert f.timeouts == 0 and f.retransmits == 2
    assert f.cc.count("loss") == 1 and f.cc.count("recovery_end") == 1  # one episode (RFC 6582)


def test_tcp_tail_loss_needs_timeout_with_backoffable_rto():
    be, f, rec, _ = _run_with_losses("_test_tcp", 50 * MSS, {49 * MSS})
    assert f.timeouts == 1 and f.cc.count("timeout") == 1
    assert rec.fct_ns >= 200_000  # waited at least the CC's min_rto_ns (200 us)
    assert f.rcv_nxt == 50 * MSS


def test_roce_loss_nack_go_back_n():
    be, f, rec, seen = _run_with_losses("none", 100 * MSS, {10 * MSS})
    assert seen["nack"] == 1 and f.timeouts == 0
    assert f.retransmits >= 1 and rec.retransmitted_bytes >= MSS
    assert f.rcv_nxt == 100 * MSS


def test_roce_tail_loss_timeout_backstop():
    be, f, rec, seen = _run_with_losses("_test_roce", 30 * MSS, {29 * MSS})
    assert f.timeouts == 1 and f.cc.count("timeout") == 1 and seen["nack"] == 0


def test_roce_hooks_loss_once_per_episode():
    be, f, rec, _ = _run_with_losses("_test_roce", 100 * MSS, {10 * MSS, 11 * MSS})
    assert f.cc.count("loss") == 1 and f.cc.count("recovery_end") == 1


def test_rto_follows_rfc6298_and_backs_off():
    be, f, rec, _ = _run_with_losses("_test_tcp", 50 * MSS, {49 * MSS})
    r = f.rto
    assert r.srtt_ns is not None
    assert r.rto_ns >= r.min_rto_ns == 200_000


def _incast(cc, n=4, size=300_000, params=None, cc_params=None):
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for h in [f"s{i}" for i in range(n)] + ["r"]:
        g.add_node(h, kind="host")
        g.add_edge(h, "sw", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    return run(g, [(f"s{i}", "r", size) for i in range(n)], cc=cc,
               params=dict({"ecn_kmin_bytes": 0, "ecn_kmax_bytes": 0}, **(params or {})), cc_params=cc_params)


def test_cnp_at_most_one_per_interval_per_flow():
    be, recs = _incast("_test_roce_ecn")
    for fid, f in be.all_flows.items():
        assert f.ecn_marked_packets > 0 and f.cnps_received > 0
        fct = recs[fid].fct_ns
        assert f.cnps_received <= fct // 50_000 + 1
        assert f.cnps_received == f.cc.count("cnp")


def test_cnp_interval_from_cc_param_zero_means_every_mark():
    class Cnp0(cc_fixtures.TestRoceEcn):
        name = "_test_roce_cnp0"
        PARAMS = cc_fixtures.ParamTable("_test_roce_cnp0", list(cc_fixtures.TestRoceEcn.PARAMS) + [
            cc_fixtures.Param("cnp_interval_ns", 0, "time", "NP interval", "test")])
    cc_fixtures.REGISTRY[Cnp0.name] = Cnp0
    be, recs = _incast("_test_roce_cnp0")
    for f in be.all_flows.values():
        assert f.cnps_received == f.ecn_marked_packets > 0


def test_non_ect_flows_never_marked():
    be, recs = _incast("_test_roce")
    assert be.stats()["ecn_marks"] == 0


def test_tcp_ece_echo_reaches_on_ack():
    be, recs = _incast("_test_tcp_ecn")
    for f in be.all_flows.values():
        assert f.ecn_marked_packets > 0
        assert sum(1 for c in f.cc.calls if c[0] == "ack" and c[4]) > 0


def test_pacing_at_cc_rate():
    g = _line()
    size = 2_000_000
    be, recs = run(g, [("a", "b", size)], cc="_test_roce", cc_params={"_test_roce": {"rate_bps": "10Gbps"}})
    wire = (size // MSS + 1) * 1500
    expect = wire * 8e9 / 10e9
    assert abs(recs[0].fct_ns - expect) <= 0.02 * expect


def test_two_flows_share_one_nic_round_robin():
    g = _line()
    be, recs = run(g, [("a", "b", 1_000_000), ("a", "b", 1_000_000)])
    f0, f1 = recs[0].fct_ns, recs[1].fct_ns
    assert abs(f0 - f1) <= 0.02 * f0  # interleaved, not one after the other
    assert f0 >= 1.9 * recs[0].ideal_fct_ns * 0.95


@pytest.mark.parametrize("sched", ["strict", "dwrr"])
def test_priority_scheduling(sched):
    """Two lossless priorities into one port: strict starves the lower, DWRR shares."""
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for h in ("p", "q", "r"):
        g.add_node(h, kind="host")
        g.add_edge(h, "sw", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    be, recs = run(g, [("p", "r", 1_000_000, 0, 3), ("q", "r", 1_000_000, 0, 4)],
                   params={"scheduler": sched, "lossless_priorities": "3,4"})
    lo, hi = recs[0].fct_ns, recs[1].fct_ns
    if sched == "strict":
        assert hi < 0.7 * lo
    else:
        assert abs(hi - lo) <= 0.1 * lo
    assert be.stats()["drops"] == 0


def test_tcp_delayed_acks_halve_acks_and_still_complete():
    g = _line()
    size = 100 * MSS + 7
    be1, r1 = run(g, [("a", "b", size)], cc="_test_tcp")
    be2, r2 = run(g, [("a", "b", size)], cc="_test_tcp", params={"tcp_delayed_ack_segments": 2})
    acks1 = be1.net.ports[("b", "sw")].tx_packets
    acks2 = be2.net.ports[("b", "sw")].tx_packets
    assert acks1 == 101 and acks2 == 51  # every 2nd segment, plus the last byte at once
    assert r2[0].size_bytes == size and be2.all_flows[0].timeouts == 0


def test_tcp_delayed_ack_timer_flushes_odd_segment():
    """A window of one segment would stall without the delayed-ACK timer."""
    g = _line()
    be, r = run(g, [("a", "b", 5 * MSS)], cc="_test_tcp", cc_params={"_test_tcp": {"window_bytes": MSS}},
                params={"tcp_delayed_ack_segments": 2, "tcp_delayed_ack_timeout_ns": "20us"})
    f = be.all_flows[0]
    assert f.timeouts == 0 and f.rcv_nxt == 5 * MSS
    assert r[0].fct_ns >= 4 * 20_000  # four delayed ACKs waited for the timer


def test_dctcp_style_ece_with_delayed_acks_counts_every_mark():
    be, recs = _incast("_test_tcp_ecn", params={"tcp_delayed_ack_segments": 2})
    for f in be.all_flows.values():
        acks_with_ece = sum(1 for c in f.cc.calls if c[0] == "ack" and c[4])
        assert f.ecn_marked_packets > 0 and acks_with_ece > 0


def test_unreachable_by_loss_flow_is_abandoned_not_simulated_forever():
    g = _line()
    g.edges["sw", "b"]["error_rate"] = 0.999999
    be, recs = run(g, [("a", "b", 10_000)], cc="_test_tcp", params={"max_timeouts": 3, "max_rto_ns": "1ms"})
    st = be.stats()
    assert st["completed"] == 0 and st["failed"] == 1 and st["timeouts"] == 4


def test_dwrr_weights_follow_quanta():
    """Quantum 2 MTU vs 1 MTU: the heavier class gets about twice the rate while both are backlogged."""
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for h in ("p", "q", "r"):
        g.add_node(h, kind="host")
        g.add_edge(h, "sw", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    be, recs = run(g, [("p", "r", 1_000_000, 0, 3), ("q", "r", 1_000_000, 0, 4)],
                   params={"lossless_priorities": "3,4", "dwrr_quantum_bytes.4": "3000", "window_bytes": "400KB"})
    heavy, light = recs[1].fct_ns, recs[0].fct_ns
    # heavy finishes its 1 MB while light has sent ~0.5 MB: heavy ~ 0.75 x light's FCT
    assert 0.65 * light <= heavy <= 0.85 * light


def test_initial_rto_covers_long_base_rtt():
    """RTT 2 ms > min RTO 1 ms: the automatic initial RTO (max(min RTO, 3 x base RTT)) fires no timeout.

    Base RTT = 2 hops x (2 x 500 us + serialization of one MTU and one ACK) each way. Starting at the
    1 ms RTOmin instead (``initial_rto_ns=1ms``, the old behaviour) times out before the first ACK.
    """
    from pkt_helpers import star
    g = star(2, delay_ns=500_000)
    env, be = make_backend(g, cc="cubic")
    be.send("h0", "h1", 5_000_000)
    f = be.all_flows[0]
    base_rtt_ns = 2 * (2 * 500_000 + 1500 * 8 / 100 + 64 * 8 / 100)
    assert f.rto.rto_ns == pytest.approx(3 * base_rtt_ns, abs=2)
    env.run()
    assert f.timeouts == 0 and f.retransmits == 0
    be2, recs = run(g, [("h0", "h1", 5_000_000)], cc="cubic", params={"initial_rto_ns": "1ms"})
    assert be2.all_flows[0].rto.min_rto_ns == 1_000_000 and recs[0].timeouts >= 1  # spurious
    # a short datacenter path keeps RTOmin as its initial RTO
    env, be = make_backend(_line(), cc="cubic")
    be.send("a", "b", 10_000)
    assert be.all_flows[0].rto.rto_ns == be.all_flows[0].rto.min_rto_ns
