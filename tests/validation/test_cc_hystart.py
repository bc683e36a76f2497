"""Classic HyStart on the packet backend: slow start ends before the first loss.

One Cubic flow, 100 Gbps access link into a 10 Gbps bottleneck, ~100 µs RTT,
so the path holds BDP ≈ 86 segments and the bottleneck port a drop-tail
buffer of 300 packets. Without a slow-start exit heuristic, slow start doubles
the window until it overflows BDP + buffer, and packets are dropped. With
classic HyStart (Ha & Rhee 2011; Linux, ns-3.37) the ACK train of a round
exceeds minRTT/2 once the window in flight reaches half a BDP, so slow start
ends near one BDP (between BDP/2 and BDP + buffer, the bounds used here)
and nothing is dropped. HyStart++ (RFC 9406) cannot fire here: its smallest
RTT-increase threshold is 4 ms, but a full 300-packet buffer adds only 360 µs.

The ``slow`` variant runs ``netsim bench cubic_dumbbell`` (4 flows × 100 MB,
100-packet FIFO) under ``classic`` and ``off``: HyStart removes the
slow-start overshoot, so the classic run drops fewer packets, and none before
every flow has left slow start.
"""
import pytest

from netsim.bench.cc import dumbbell_graph, simulate

MTU, HDR = 1500, 52
MSS = MTU - HDR
BOTT_BPS = 10e9
BUF_PKTS = 300
HORIZON_NS = 3_000_000


def single_flow(hystart: str):
    g = dumbbell_graph(1, host_rate_bps=100e9, host_delay_ns=500, bott_rate_bps=BOTT_BPS,
                       bott_delay_ns=49_000, recv_rate_bps=100e9)
    params = {"pfc": False, "ecn": False, "mtu_bytes": MTU, "header_bytes": HDR,
              "buffer_mode": "static", "buffer_bytes": 2 * BUF_PKTS * MTU}  # 2 ports on sw0
    res = simulate(g, [("s0", "r0", 10**10, 0)], cc="cubic", params=params,
                   cc_params={"cubic": {"hystart": hystart}}, until_ns=HORIZON_NS)
    return res, next(iter(res.flows.values()))


def test_without_hystart_slow_start_overflows_the_buffer():
    res, _ = single_flow("off")
    assert res.stats["drops"] > 0


def test_hystart_plus_plus_cannot_fire_at_a_datacenter_rtt():
    res, flow = single_flow("plus")
    assert not flow.cc.in_css
    assert res.stats["drops"] > 0


def test_classic_hystart_exits_slow_start_before_any_loss():
    res, flow = single_flow("classic")
    hs = flow.cc.hs_classic
    assert hs.found and hs.reason == "train"          # the delay signal needs >= 4 ms of queueing
    min_rtt_ns = hs.min_rtt_ns
    bdp_segs = BOTT_BPS * min_rtt_ns * 1e-9 / 8 / MTU
    assert 80 <= bdp_segs <= 95
    exit_segs = hs.exit_cwnd_bytes / MSS
    assert bdp_segs / 2 <= exit_segs <= bdp_segs + BUF_PKTS
    assert hs.found_at_ns < HORIZON_NS / 3
    assert res.stats["drops"] == 0                     # none in slow start, none soon after
    assert flow.snd_una > 2_000_000                    # and the flow is moving data


def bench_dumbbell(hystart: str, until_ns=None):
    """The ``cubic_dumbbell`` benchmark scenario (netsim.bench.cc) with a chosen ``hystart``."""
    n, mss, hdr = 4, 1448, 52
    g = dumbbell_graph(n, host_rate_bps=10e9, host_delay_ns=2000, bott_rate_bps=10e9, bott_delay_ns=5000)
    params = {"pfc": False, "ecn": False, "mtu_bytes": mss + hdr, "header_bytes": hdr,
              "buffer_mode": "static", "buffer_bytes": (n + 1) * 100 * (mss + hdr)}
    flows = [(f"s{i}", "r0", 100_000_000, 0) for i in range(n)]
    return simulate(g, flows, cc="cubic", params=params, cc_params={"cubic": {"hystart": hystart}},
                    until_ns=until_ns)


def test_bench_dumbbell_slow_start_without_drops():
    # first 500 us of the 4-flow benchmark: slow start of every flow
    off = bench_dumbbell("off", until_ns=500_000)
    classic = bench_dumbbell("classic", until_ns=500_000)
    assert off.stats["drops"] > 0
    assert classic.stats["drops"] == 0
    assert all(f.cc.hs_classic.found and f.cc.hs_classic.reason == "train" for f in classic.flows.values())
    # together the four windows fit the path and the 100-packet FIFO
    total_segs = sum(f.cc.hs_classic.exit_cwnd_bytes for f in classic.flows.values()) / 1448
    assert total_segs <= 100 + 10e9 * 25e-6 / 8 / 1500


@pytest.mark.slow
def test_bench_dumbbell_classic_drops_less_than_off():
    off = bench_dumbbell("off")
    classic = bench_dumbbell("classic")
    assert classic.stats["drops"] < off.stats["drops"]
