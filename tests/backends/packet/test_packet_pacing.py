"""The NIC's pacing path: whole-ps pacing times, the lone paced flow's schedule, INT echo on ACKs.

Hand computations: a flow paced at ``R`` sends a full packet of ``wire``
bytes every ``ceil(wire * 8e12 / R)`` ps (the NIC rounds the pacing time up
to its ps clock), whether it is also window-limited (its ACK re-adds it to
the ring before the pacing time) or not.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pkt_helpers import make_backend, star  # noqa: E402

#: a pacing rate whose wire time of a 1500-byte packet is not a whole number of ps
PACED_BPS = 7e9


def _run_paced(window_pkts):
    env, be = make_backend(star(2))
    port = be.net.ports[("h0", "sw")]
    deliver = port.recv
    arrivals = []

    def spy(pkt):
        if pkt.kind == 0:   # DATA
            arrivals.append(env.now)
        deliver(pkt)

    port.intercept(spy)
    be.send("h0", "h1", 60_000)
    flow = next(iter(be.net.flows.values()))
    flow.cc.rate_bps = PACED_BPS
    if window_pkts is not None:
        flow.cc.cwnd_bytes = window_pkts * flow.mss
    readds = []
    wake = flow.wake_sender

    def counting_wake(now):
        was_out = not flow.in_ring
        wake(now)
        readds.append(was_out and flow.in_ring and flow.next_tx > now)   # re-added while still paced

    flow.wake_sender = counting_wake
    env.run()
    return flow, arrivals, sum(readds)


def test_next_tx_is_the_wire_time_rounded_up_to_a_whole_ps():
    env, be = make_backend(star(2))
    be.send("h0", "h1", 60_000)
    flow = next(iter(be.net.flows.values()))
    flow.cc.rate_bps = PACED_BPS
    now = 12_345
    pkt = flow.next_packet(now)
    expect = math.ceil(now + pkt.size * 8e12 / PACED_BPS)
    assert type(flow.next_tx) is int and flow.next_tx == expect   # old code: the unrounded float


def test_host_cap_next_tx_is_rounded_up_too():
    env, be = make_backend(star(2))
    be.send("h0", "h1", 60_000)
    flow = next(iter(be.net.flows.values()))
    flow.cap_ps_per_byte = 333.3                 # unpaced CC (rate inf), a host-stack cap
    pkt = flow.next_packet(1000)
    assert type(flow.next_tx) is int and flow.next_tx == math.ceil(1000 + pkt.payload * 333.3)


def _spacing(window_pkts):
    flow, arr, readds = _run_paced(window_pkts)
    wire = flow.mss + flow.hdr
    full = 60_000 // flow.mss                    # full-size packets (the last one may be short)
    # the first packet leaves inside ``send``, before the rate is forced, and the first window's ACKs
    # return on that unpaced start: gaps from the end of the first window on
    k = 1 + (window_pkts or 0)
    gaps = {b - a for a, b in zip(arr[k:full], arr[k + 1:full])}
    return gaps, math.ceil(wire * 8e12 / PACED_BPS), len(arr), -(-60_000 // flow.mss), readds


def test_lone_paced_flow_sends_every_rounded_wire_time():
    gaps, step, n, n_pkts, readds = _spacing(None)
    assert n == n_pkts and gaps == {step} and readds == 0


def test_window_limited_paced_flow_keeps_the_pacing_schedule():
    """Window 3 packets (2 pacing steps < RTT < 3): an ACK re-adds the flow before its pacing time.

    That is the tick-only path of ``Port.add_sender``; the schedule is still the pacing one.
    """
    gaps, step, n, n_pkts, readds = _spacing(3)
    assert n == n_pkts and gaps == {step} and readds >= n_pkts // 2


def test_hpcc_ack_carries_the_int_echo_not_a_list_to_stamp():
    """The receiver moves the INT list to ``echo``: the reverse path cannot stamp it; the sender gets it."""
    from netsim.bench.cc import dumbbell_graph, simulate
    from netsim.transport import roce
    seen = []
    orig = roce.RoceFlow.on_ack

    def spy(self, pkt, now):
        seen.append((pkt.intl, None if pkt.echo is None else [h[0].name for h in pkt.echo]))
        orig(self, pkt, now)

    roce.RoceFlow.on_ack = spy
    try:
        g = dumbbell_graph(1, host_rate_bps=100e9, host_delay_ns=1000, bott_rate_bps=100e9, bott_delay_ns=1000)
        simulate(g, [("s0", "r0", 30_000, 0)], cc="hpcc")
    finally:
        roce.RoceFlow.on_ack = orig
    assert seen and all(intl is None and echo == ["sw0", "sw1"] for intl, echo in seen)
