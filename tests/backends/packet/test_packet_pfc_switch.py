"""PFC as switches do it: dynamic XOFF thresholds, PFC deadlock report, PFC watchdog (issue 19).

The deadlock scenes are a ring of three switches s0 -> s1 -> s2 -> s0 with a
host on each; host h_i sends to h_{i+2} over the two clockwise ring hops
(routes forced: in a 3-ring every shortest path is one hop), so each ring
link's traffic must cross the next ring link: a cyclic buffer dependency.
At line rate (a 4 MB window) it deadlocks within ~22 us: every ring port
paused, each holding packets that came in over the previous one.
"""
from __future__ import annotations

import networkx as nx
import pytest
from pkt_helpers import make_backend, run

from netsim.backends.base import create_backend
from netsim.errors import InputError
from netsim.network.params import resolve_params

LOSSLESS = 3
RING_PORTS = ["s0->s1", "s1->s2", "s2->s0"]


def ring_graph(rate_bps=100e9, delay_ns=1000) -> nx.Graph:
    g = nx.Graph()
    for i in range(3):
        g.add_node(f"s{i}", kind="switch")
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", f"s{i}", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    for i in range(3):
        g.add_edge(f"s{i}", f"s{(i + 1) % 3}", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    return g


class _ForcedRouter:
    """The backend's router with some (src, dst) paths replaced (static routes)."""

    def __init__(self, router, paths: dict):
        self._router, self._paths = router, paths

    def path(self, src, dst, flow_id=0):
        return self._paths.get((src, dst)) or self._router.path(src, dst, flow_id)

    def __getattr__(self, name):
        return getattr(self._router, name)


def ring_backend(params: dict, size=2_000_000):
    """The ring with its three clockwise 2-hop flows started at t = 0; returns (env, backend)."""
    env, be = make_backend(ring_graph(), params=params, pfc_sink=True)
    paths = {}
    for i in range(3):
        a, b, c = i, (i + 1) % 3, (i + 2) % 3
        paths[(f"h{a}", f"h{c}")] = (f"h{a}", f"s{a}", f"s{b}", f"s{c}", f"h{c}")
    be.router = _ForcedRouter(be.router, paths)
    for i in range(3):
        be.send(f"h{i}", f"h{(i + 2) % 3}", size)
    return env, be


LINE_RATE = dict(window_bytes=4_000_000)


def test_ring_cyclic_dependency_is_reported_as_a_deadlock_naming_its_ports(capsys):
    detect_ns = 100_000
    env, be = ring_backend(dict(LINE_RATE, pfc_deadlock_detect_ns=detect_ns, max_timeouts=2))
    env.run()
    st = be.stats()
    assert st["completed"] == 0 and st["failed"] == 3          # the flows never finish: a real deadlock
    (d,) = st["pfc_deadlocks"]
    assert d["ports"] == RING_PORTS and d["priority"] == LOSSLESS
    # reported exactly the stated time after the last port of the cycle was paused
    pauses = [r for r in be.sinks.pfc.rows if f"{r[1]}->{r[2]}" in RING_PORTS and r[4] == "pause"]
    assert len(pauses) == 3 and d["paused_since_ns"] == max(r[0] for r in pauses)
    assert d["detected_ns"] == d["paused_since_ns"] + detect_ns
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("netsim: warning:")]
    assert len(lines) == 1 and all(p in lines[0] for p in RING_PORTS)


def test_deadlock_detection_off_reports_nothing():
    env, be = ring_backend(dict(LINE_RATE, pfc_deadlock_detect_ns=0, max_timeouts=2))
    env.run()
    assert "pfc_deadlocks" not in be.stats() and be.stats()["failed"] == 3


def _scripted_cycle(hold_ns: int, detect_ns: int):
    """Flows with a 20 KB window (two share a ring link: 40 KB in flight, below the automatic 56 KB
    XOFF, so no PFC of their own); the test pauses the three ring ports at 20 us (the packets on the
    wire queue behind them: a pause cycle) and lifts the pauses ``hold_ns`` later."""
    env, be = ring_backend(dict(window_bytes=20_000, pfc_deadlock_detect_ns=detect_ns), size=1_000_000)
    ports = [be.net.ports[tuple(p.split("->"))] for p in RING_PORTS]
    cycles = []

    def script(env):
        yield env.timeout(20_000_000)
        for p in ports:
            p.set_paused(LOSSLESS, True)
        yield env.timeout(5_000_000)
        cycles.append(be.net.pfc_watch.cycle(ports[0], LOSSLESS))
        yield env.timeout(hold_ns * 1000 - 5_000_000)
        for p in ports:
            p.set_paused(LOSSLESS, False)

    env.process(script(env))
    env.run()
    return be, cycles


def test_pause_cycle_that_resolves_is_not_reported():
    be, cycles = _scripted_cycle(hold_ns=40_000, detect_ns=100_000)
    assert [f"{q.name}->{q.peer_name}" for q in cycles[0]] == RING_PORTS   # the cycle was there
    st = be.stats()
    assert "pfc_deadlocks" not in st and st["completed"] == 3
    # the same cycle held past the detection time is reported (the flows then complete too)
    be, _ = _scripted_cycle(hold_ns=150_000, detect_ns=100_000)
    st = be.stats()
    assert [d["ports"] for d in st["pfc_deadlocks"]] == [RING_PORTS] and st["completed"] == 3
    assert st["pfc_deadlocks"][0]["detected_ns"] == 20_000 + 100_000


WATCHDOG = dict(LINE_RATE, pfc_watchdog=True, pfc_watchdog_detection_ns=100_000,
                pfc_watchdog_restoration_ns=100_000)


def test_watchdog_breaks_the_deadlock_after_detection_time_with_drops_counted():
    env, be = ring_backend(dict(WATCHDOG, pfc_watchdog_action="drop"))
    env.run(until=400_000_000)
    rows = be.sinks.pfc.rows
    storms = [r for r in rows if r[4] == "storm"]
    assert storms
    first = storms[0]
    port = f"{first[1]}->{first[2]}"
    paused_at = max(r[0] for r in rows if f"{r[1]}->{r[2]}" == port and r[4] == "pause" and r[0] <= first[0])
    assert first[0] == paused_at + 100_000          # stormed exactly detection_time after its PAUSE
    wd = be.stats()["pfc_watchdog"]
    assert wd["storms"] >= 1 and wd["dropped_packets"] > 0
    assert be.stats()["drops"] >= wd["dropped_packets"]
    # the cycle is broken: its buffers drain, so the switches resume the hosts they had paused
    assert {r[1] for r in rows if r[4] == "resume" and first[0] < r[0] and r[1].startswith("h")} == {"h0", "h1", "h2"}
    assert sum(r[4] == "restore" for r in rows) >= 1          # and the queues are restored later


def test_watchdog_forward_lets_the_deadlocked_flows_complete_without_drops():
    env, be = ring_backend(dict(WATCHDOG, pfc_watchdog_action="forward", max_timeouts=2))
    env.run()
    st = be.stats()
    assert st["completed"] == 3 and st["drops"] == 0
    assert st["pfc_watchdog"]["storms"] >= 1
    assert st["pfc_watchdog"]["restorations"] == st["pfc_watchdog"]["storms"]


# -- dynamic thresholds ------------------------------------------------------------------------------
def _victim_graph() -> nx.Graph:
    """h1..h4 -> dst (an incast at sw2's 100 G port to dst) and h0 -> vdst, all over the 400 G sw1 -> sw2."""
    g = nx.Graph()
    g.add_node("sw1", kind="switch")
    g.add_node("sw2", kind="switch")
    g.add_edge("sw1", "sw2", rate_bps=400e9, delay_ns=1000, kind="ethernet")
    for i in range(5):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "sw1", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    for n in ("dst", "vdst"):
        g.add_node(n, kind="host")
        g.add_edge(n, "sw2", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    return g


def _victim(mode: str):
    flows = [(f"h{i}", "dst", 2_000_000) for i in range(1, 5)] + [("h0", "vdst", 2_000_000)]
    be, recs = run(_victim_graph(), flows, params=dict(window_bytes=2_000_000, pfc_threshold=mode))
    v = recs[4]
    return be.stats(), v.size_bytes * 8 / v.fct_ns


def test_dynamic_thresholds_give_the_victim_at_least_the_static_throughput_without_drops():
    st_static, gbps_static = _victim("static")
    st_dyn, gbps_dyn = _victim("dynamic")
    assert st_static["drops"] == 0 and st_dyn["drops"] == 0
    assert st_static["pfc_pauses"] > 0                 # static XOFF pauses the shared uplink: the victim waits
    assert gbps_dyn >= gbps_static
    assert st_dyn["pfc_pauses"] < st_static["pfc_pauses"]


def test_dynamic_xoff_is_alpha_times_the_free_shared_pool(monkeypatch):
    """Every PAUSE of a dynamic group is sent by the packet that takes it past alpha x free (pool after it)."""
    alpha = 0.5
    flows = [(f"h{i}", "dst", 1_000_000) for i in range(1, 5)]
    env, be = make_backend(_victim_graph(), params=dict(window_bytes=2_000_000, pfc_threshold="dynamic",
                                                        pfc_dynamic_alpha=alpha, buffer_bytes=1_000_000))
    net = be.net
    seen = []
    orig = net.pfc_signal

    def spy(port, prio, pause):
        if pause and port.peer_name == "sw2":
            buf = port.peer.buf
            size = 1500
            free_after = buf.shared - (buf.used - buf.hdr_used) - size
            group_after = port.ing[prio] + size - port.hdr[prio]
            seen.append((group_after > alpha * free_after or free_after < 0,
                         port.ing[prio] - port.hdr[prio] <= alpha * (free_after + size)))
        orig(port, prio, pause)

    monkeypatch.setattr(net, "pfc_signal", spy)
    for s, d, n in flows:
        be.send(s, d, n)
    env.run()
    assert seen and all(a and b for a, b in seen)
    assert be.stats()["drops"] == 0 and be.stats()["completed"] == 4


# -- validation --------------------------------------------------------------------------------------
@pytest.mark.parametrize("key,value", [("pfc_dynamic_alpha", "0"), ("pfc_dynamic_alpha", "nan"),
                                       ("pfc_threshold", "auto"), ("pfc_watchdog_action", "pause"),
                                       ("pfc_watchdog_detection_ns", "0")])
def test_bad_pfc_parameters_are_one_line_errors(key, value):
    with pytest.raises(InputError) as ei:
        resolve_params({key: value})
    msg = str(ei.value)
    assert key in msg and "\n" not in msg


@pytest.mark.parametrize("backend", ["flow", "analytic"])
@pytest.mark.parametrize("key,value", [("pfc_threshold", "dynamic"), ("pfc_watchdog", "on"),
                                       ("pfc_deadlock_detect_ns", "0")])
def test_other_backends_reject_what_they_cannot_honour(backend, key, value):
    with pytest.raises(InputError) as ei:
        create_backend(backend, ring_graph(), params={key: value})
    msg = str(ei.value)
    assert key in msg and "--backend packet" in msg and "\n" not in msg
