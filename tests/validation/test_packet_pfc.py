"""PFC scenarios: lossless bottleneck goodput, incast head-of-line blocking, lossy vs lossless classes.

Oracles: conservation (bytes delivered exactly once, no drop under PFC), the
payload efficiency bound rate * payload / (payload + headers), and the
causal structure of HOL blocking (victim slowed only when PFC is on).
"""
import os
import sys

import networkx as nx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "backends", "packet"))
from pkt_helpers import run  # noqa: E402

from netsim.topology.builders import dumbbell  # noqa: E402


def test_bottleneck_with_pfc_goodput_no_drops_exactly_once():
    n, size = 4, 2_000_000
    g = dumbbell(n, 1)
    be, recs = run(g, [(f"left{i}", "right0", size) for i in range(n)], pfc_sink=True)
    st = be.stats()
    assert st["completed"] == n and st["drops"] == 0
    assert st["pfc_pauses"] > 0  # the bottleneck queue really built up
    for f in be.all_flows.values():
        assert f.rcv_nxt == size and f.rx_payload_bytes == size  # every byte exactly once
        assert f.retransmitted_bytes == 0
    start = min(r.start_ns for r in recs.values())
    end = max(r.end_ns for r in recs.values())
    mss = be.params["mtu_bytes"] - be.params["header_bytes"]
    bound = 100e9 * mss / be.params["mtu_bytes"]
    goodput = n * size * 8e9 / (end - start)
    assert goodput >= 0.95 * bound
    assert goodput <= 1.0001 * bound  # and never above the wire


def _incast_graph(ab_rate):
    g = nx.Graph()
    for sw in ("A", "B"):
        g.add_node(sw, kind="switch")
    for i in range(9):
        g.add_node(f"a{i}", kind="host")
        g.add_edge(f"a{i}", "A", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    for h in ("r", "v"):
        g.add_node(h, kind="host")
        g.add_edge(h, "B", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    g.add_edge("A", "B", rate_bps=ab_rate, delay_ns=1000, kind="ethernet")
    return g


def test_incast_8_to_1_pfc_hol_blocks_victim():
    """8 senders on A incast into r behind B; the victim a8 -> v shares only the A->B egress."""
    g = _incast_graph(1e12)  # A->B is not a bottleneck: only PFC can slow the victim
    incast = [(f"a{i}", "r", 1_000_000) for i in range(8)]
    victim = ("a8", "v", 1_000_000)
    _, alone = run(g, [victim])
    be, recs = run(g, incast + [victim], pfc_sink=True)
    st = be.stats()
    assert st["drops"] == 0 and st["completed"] == 9
    events = be.sinks.pfc.rows
    assert any(e[4] == "pause" for e in events) and any(e[4] == "resume" for e in events)
    assert any(e[1] == "A" and e[2] == "B" for e in events)  # the shared upstream egress was paused
    assert recs[8].fct_ns >= 1.5 * alone[0].fct_ns
    # causality: without PFC (deep buffer, lossy) the victim is not slowed
    be2, recs2 = run(g, incast + [victim], params={"pfc": "off"})
    assert recs2[8].fct_ns <= 1.1 * alone[0].fct_ns


def test_lossy_and_lossless_priorities_under_overload():
    g = nx.Graph()
    g.add_node("sw", kind="switch", buffer_bytes=400_000)
    for h in [f"l{i}" for i in range(4)] + [f"x{i}" for i in range(4)] + ["r"]:
        g.add_node(h, kind="host")
        g.add_edge(h, "sw", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    size = 300_000
    flows = [(f"l{i}", "r", size, 0, 0) for i in range(4)] + [(f"x{i}", "r", size, 0, 3) for i in range(4)]
    be, recs = run(g, flows, params={"window_bytes": "200KB"})
    st = be.stats()
    assert st["completed"] == 8
    assert st["drops_by_priority"].get("0", 0) > 0      # the lossy class drops
    assert st["drops_by_priority"].get("3", 0) == 0     # the lossless class never does
    assert st["pfc_pauses"] > 0
    for fid, r in recs.items():
        assert r.size_bytes == size
        if r.priority == 3:
            assert r.retransmitted_bytes == 0
    assert sum(r.retransmitted_bytes for r in recs.values() if r.priority == 0) > 0


def test_shared_pcie_switch_is_a_lossless_bottleneck():
    """Two GPUs behind one PCIe switch: the PCIe uplink (slower than the NIC) limits both; nothing drops."""
    g = nx.Graph()
    for s in ("s0", "s1"):
        g.add_node(f"{s}.pcie0", kind="pcie_switch")
        g.add_node(f"{s}.nic0", kind="nic", nic_kind="roce")
        g.add_edge(f"{s}.pcie0", f"{s}.nic0", rate_bps=100e9, delay_ns=150, kind="pcie")
        for i in range(2):
            g.add_node(f"{s}.gpu{i}", kind="gpu")
            g.add_edge(f"{s}.gpu{i}", f"{s}.pcie0", rate_bps=256e9, delay_ns=150, kind="pcie")
    g.add_node("leaf0", kind="switch")
    for s in ("s0", "s1"):
        g.add_edge(f"{s}.nic0", "leaf0", rate_bps=400e9, delay_ns=1000, kind="ethernet")
    size = 2_000_000
    _, alone = run(g, [("s0.gpu0", "s1.gpu0", size)])
    be, both = run(g, [("s0.gpu0", "s1.gpu0", size), ("s0.gpu1", "s1.gpu1", size)])
    st = be.stats()
    assert st["drops"] == 0 and st["completed"] == 2
    assert any(k.startswith("s0.gpu") for k in st["pfc_pause_time_ns"])  # backpressure reached the GPUs
    last = max(r.end_ns for r in both.values())
    # both flows share the 100 Gbps PCIe uplink: the pair takes about twice a lone flow
    assert 1.8 * alone[0].fct_ns <= last <= 2.2 * alone[0].fct_ns


def test_dcqcn_hpcc_incast_ecn_acts_before_pfc():
    """16-to-1 incast, DCQCN preset hpcc at 100 G (Kmin 400 KB, Kmax 1.6 MB from the preset).

    With the automatic PFC thresholds ordered after ECN (XOFF = Kmax + 2 BDP + 2 MTU per ingress)
    the egress queue crosses Kmax long before any ingress reaches XOFF: DCQCN gets marks and no
    PAUSE is sent in the second half of the run (DCQCN paper: ECN must trigger before PFC). With
    the plain automatic XOFF (56 KB per ingress) PFC keeps pausing to the end: the ordering matters.
    """
    from pkt_helpers import star
    g = star(17)
    flows = [(f"h{i}", "h16", 2_000_000) for i in range(16)]
    results = {}
    for mode in ("auto", "off"):
        be, recs = run(g, flows, cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}}, pfc_sink=True,
                       params={"pfc_xoff_above_ecn": mode})
        st = be.stats()
        assert st["drops"] == 0 and st["completed"] == 16
        end = max(r.end_ns for r in recs.values())
        pauses = [e[0] for e in be.sinks.pfc.rows if e[4] == "pause"]
        results[mode] = (st, end, pauses, be.net.ports[("h0", "sw")])
    st, end, pauses, port = results["auto"]
    gap = 2 * 1000 * 100e9 / 8e9 + 2 * 1500
    assert port.xoff[3] == 1_600_000 + gap and port.xon[3] == 1_600_000
    assert st["ecn_marks"] > 0 and st["cnps"] > 0
    assert not [t for t in pauses if t > end / 2]
    st, end, pauses, port = results["off"]
    assert port.xoff[3] == 2 * gap
    assert [t for t in pauses if t > end / 2]  # without the ordering PFC does the rate control


def test_explicit_pfc_thresholds_are_never_raised():
    from pkt_helpers import make_backend, star
    _, be = make_backend(star(3), cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}},
                         params={"pfc_xoff_bytes": "100KB", "pfc_xon_bytes": "50KB"})
    port = be.net.ports[("h0", "sw")]
    assert port.xoff[3] == 100_000 and port.xon[3] == 50_000
    _, be = make_backend(star(3), cc="none")  # not ECN-capable: plain automatic thresholds
    assert be.net.ports[("h0", "sw")].xoff[3] == 2 * (25_000 + 3_000)
