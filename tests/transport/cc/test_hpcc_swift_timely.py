"""Unit tests of HPCC, Swift and TIMELY against hand computations of the papers' rules."""
import math

import pytest

from netsim.transport.cc import HPCC, REGISTRY, Swift, Timely, resolve_cc_params
from netsim.transport.cc.hpcc import PRESETS
from netsim.transport.telemetry import IntHop, int_header_bytes


def _hpcc(**over):
    return HPCC(HPCC.PARAMS.resolve(over), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=10_000)


def test_registered_with_transports():
    assert REGISTRY["hpcc"].transport == "roce" and REGISTRY["timely"].transport == "roce"
    assert REGISTRY["swift"].transport == "tcp"
    out = resolve_cc_params("hpcc", ["preset=hpcc", "swift.beta=0.5", "timely.t_low_ns=20us"])
    assert out["hpcc"]["preset"] == "hpcc" and out["swift"]["beta"] == 0.5
    assert out["timely"]["t_low_ns"] == 20_000


def _ack(cc, u, update=True, queue_bytes=0):
    """One ACK whose single hop measured utilisation ``u`` over exactly one T (τ = T: U = u), with
    ``queue_bytes`` in the queue at both records; ``update``: the ACK is beyond lastUpdateSeq."""
    port = object()
    bt = cc.line_rate_bps * cc.t_ns / 8e9                    # B·T in bytes
    cc.hops = [IntHop(port, queue_bytes, 0, 0, cc.line_rate_bps)]
    seq = cc.last_update_seq + (1 if update else 0)
    cc.on_telemetry(0, [IntHop(port, queue_bytes, round((u - queue_bytes / bt) * bt), cc.t_ns * 1000,
                               cc.line_rate_bps)], seq, seq + 1)


def test_hpcc_presets_differ_as_documented():
    paper, code = _hpcc(), _hpcc(preset="hpcc")
    assert (paper.max_stage, code.max_stage) == (5, 0)
    assert paper.w_ai_bytes == 80
    # run.py: RATE_AI = 10 Mb/s x 100G/25G = 40 Mb/s, as a window: 40e6 x 10 us / 8 = 50 B
    assert code.w_ai_bytes == pytest.approx(40e6 * 10e-6 / 8)
    assert PRESETS["paper"]["eta"] == PRESETS["hpcc"]["eta"] == 0.95
    # maxStage 0: even U < eta takes the multiplicative branch (W^c / (U/eta) grows it, capped at W_init)
    code.wc = 50_000.0
    _ack(code, 0.5)
    assert code.wc == pytest.approx(50_000 / (0.5 / 0.95) + 50)


def test_hpcc_int_header_costs_payload():
    cc = _hpcc()
    assert cc.int_bytes == int_header_bytes(5) == 42 and cc.mss_bytes == 1000 - 42


def test_hpcc_additive_stages_then_multiplicative():
    cc = _hpcc()
    cc.wc = w0 = 60_000.0
    for k in range(5):                      # U < eta: W^c += W_AI for maxStage updates
        _ack(cc, 0.5)
        assert (cc.wc, cc.cwnd_bytes, cc.inc_stage) == (pytest.approx(w0 + 80 * (k + 1)),) * 2 + (k + 1,)
    _ack(cc, 0.5, update=False)             # then the multiplicative branch even at U < eta
    assert cc.cwnd_bytes == pytest.approx((w0 + 400) / (0.5 / 0.95) + 80)
    assert cc.wc == pytest.approx(w0 + 400) and cc.inc_stage == 5
    _ack(cc, 0.5)                           # an update in that branch resets the stage
    assert cc.inc_stage == 0 and cc.wc == pytest.approx(min((w0 + 400) / (0.5 / 0.95) + 80, cc.w_init))


@pytest.mark.parametrize("stage, u, w", [(0, 0.5, 90_000 + 80), (5, 0.5, 90_000 / (0.5 / 0.95) + 80),
                                         (0, 1.3, 90_000 / (1.3 / 0.95) + 80)])
def test_hpcc_fast_react_ack_leaves_the_reference_window(stage, u, w):
    """An ACK within the current RTT (fast_react): W = ComputeWind(U, False) in both branches
    (additive below maxStage, multiplicative at it or at U >= eta), W^c and the stage unchanged,
    the rate W/T (capped at line rate)."""
    cc = _hpcc()
    cc.inc_stage, cc.last_update_seq, cc.wc = stage, 10**9, 90_000.0
    _ack(cc, u, update=False)
    assert cc.cwnd_bytes == pytest.approx(min(w, cc.w_init)) and (cc.wc, cc.inc_stage) == (90_000.0, stage)
    assert cc.rate_bps == pytest.approx(min(100e9, cc.cwnd_bytes * 8 / 10e-6))
    assert cc.last_update_seq == 10**9
    off = _hpcc(fast_react=False)
    off.last_update_seq, off.wc = 10**9, 90_000.0
    _ack(off, u, update=False)              # fast_react off: nothing moves until the next RTT
    assert off.cwnd_bytes == off.w_init


def test_hpcc_measure_inflight_by_hand():
    cc = _hpcc()
    port = object()
    cc.hops = [IntHop(port, 20_000, 1_000_000, 0, 100e9)]
    cc.on_telemetry(0, [IntHop(port, 30_000, 1_000_000 + 62_500, 5_000_000, 100e9)], 1, 2)  # 62.5 KB in 5 us
    u_link = 20_000 * 8 / (100e9 * 10e-6) + 1.0                        # min qlen / (B T) + txRate / B
    assert cc.u == pytest.approx(0.5 * 1.0 + 0.5 * u_link)             # tau / T = 0.5, U was 1


def test_hpcc_measure_inflight_takes_the_most_loaded_matching_hop():
    """Two hops: hop 2 (25 Gb/s, 50 KB queue) is the bottleneck and gives u and tau; a hop whose port
    differs from the previous record's (a reroute) and a hop with no time elapsed are skipped."""
    a, b, c = object(), object(), object()
    cc = _hpcc()
    cc.hops = [IntHop(a, 0, 0, 0, 100e9), IntHop(b, 50_000, 0, 0, 25e9)]
    cc.on_telemetry(0, [IntHop(a, 0, 62_500, 5_000_000, 100e9), IntHop(b, 60_000, 15_625, 2_500_000, 25e9)], 1, 2)
    u_b = 50_000 * 8 / (25e9 * 10e-6) + 15_625 * 8 / 2.5e-6 / 25e9       # 1.6 + 2.0
    assert cc.u == pytest.approx(0.75 * 1.0 + 0.25 * u_b)              # tau = 2.5 us of hop b
    u = cc.u
    cc.on_telemetry(1, [IntHop(c, 0, 10**9, 9_000_000, 100e9), IntHop(b, 0, 15_625, 2_500_000, 25e9)], 3, 4)
    assert cc.u == u                        # hop 1 rerouted, hop 2 without elapsed time: U unchanged


def test_hpcc_empty_queue_and_tau_beyond_t_by_hand():
    """qlen 0 at one of the two records: u = txRate / B alone (min(qlen, qlen_prev) = 0); a gap
    tau = 2 T beyond T: U = u (tau/T capped at 1); then W = W^c / (U/eta) + W_AI on that update."""
    cc = _hpcc()
    port = object()
    cc.hops = [IntHop(port, 0, 0, 0, 100e9)]
    cc.on_telemetry(0, [IntHop(port, 40_000, 187_500, 20_000_000, 100e9)], 1, 2)   # 187.5 KB in 20 us
    assert cc.u == 187_500 * 8 / 20e-6 / 100e9 == 0.75                 # 75 Gb/s over 100 Gb/s
    assert cc.wc == cc.cwnd_bytes == pytest.approx(min(cc.w_init + 80, cc.w_init))   # U < eta, stage 0: + W_AI
    cc.on_telemetry(1, [IntHop(port, 10_000, 187_500 + 125_000, 30_000_000, 100e9)], 3, 4)
    u_link = 10_000 * 8 / (100e9 * 10e-6) + 125_000 * 8 / 10e-6 / 100e9  # 0.08 + 1.0, tau = T
    assert cc.u == pytest.approx(u_link)
    assert cc.wc == pytest.approx(cc.w_init / (u_link / 0.95) + 80)


def test_hpcc_hops_beyond_the_shorter_record_are_not_compared():
    """The path grew by a hop (a reroute): only hop 1 has a previous record to measure against."""
    a, b = object(), object()
    cc = _hpcc()
    cc.hops = [IntHop(a, 0, 0, 0, 100e9)]
    cc.on_telemetry(0, [IntHop(a, 0, 62_500, 5_000_000, 100e9), IntHop(b, 10**6, 10**9, 5_000_000, 100e9)],
                    1, 2)
    assert cc.u == pytest.approx(0.5 * 1.0 + 0.5 * 1.0)               # hop a: 100 Gb/s; hop b ignored
    cc.on_telemetry(1, [IntHop(a, 0, 62_500 + 31_250, 10_000_000, 100e9)], 3, 4)   # shorter again
    assert cc.u == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)               # hop a at 50 Gb/s, tau = T/2


def test_hpcc_once_per_rtt_reference_update():
    cc = _hpcc()
    port = object()
    cc.on_telemetry(0, [IntHop(port, 0, 0, 0, 100e9)], 1000, 125_000)
    wc = cc.wc
    assert cc.last_update_seq == 125_000
    cc.on_telemetry(1, [IntHop(port, 500_000, 125_000, 10_000_000, 100e9)], 2000, 130_000)
    assert cc.wc == wc                      # ack 2000 <= lastUpdateSeq 125000: W^c unchanged
    assert cc.cwnd_bytes < wc               # but the window reacts at once (fast_react)


def test_hpcc_window_floor_and_rate():
    cc = _hpcc()
    _ack(cc, 10_000.0)                      # W^c / (U/eta) + W_AI = 91.9 B, below w_min = 125 B
    assert cc.wc == cc.cwnd_bytes == pytest.approx(100e6 * 10e-6 / 8)
    assert cc.rate_bps == pytest.approx(100e6)


def test_swift_target_scaling_and_md_bound():
    cc = Swift(Swift.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=5000)
    cc.set_path(hops=3)
    cc.cwnd_pkts = 100.0                    # at fs_max_cwnd the flow term is 0
    assert cc.target_ns() == pytest.approx(25_000 + 3_000)
    cc.cwnd_pkts = 0.1                      # at fs_min_cwnd it is fs_range
    assert cc.target_ns() == pytest.approx(28_000 + 125_000)
    cc.cwnd_pkts = 50.0
    cc.on_ack(0, 1000, 1_000_000, False, 0)      # huge delay: cut bounded by max_mdf
    assert cc.cwnd_pkts == pytest.approx(25.0)
    cc.on_ack(10, 1000, 1_000_000, False, 0)     # within one RTT of the cut: no second cut
    assert cc.cwnd_pkts == pytest.approx(25.0)


def test_swift_timeouts_as_algorithm_1():
    """Swift's Algorithm 1: a timeout decreases at most once per RTT like every decrease (lines 19-21),
    a fast recovery restarts the timeout count (line 23), the RETX_RESET_THRESHOLD-th consecutive
    timeout drops to min_cwnd."""
    cc = Swift(Swift.PARAMS.resolve({"flow_scaling": False}), mss_bytes=1000, line_rate_bps=100e9,
               base_rtt_ns=5000)
    cc.cwnd_pkts, cc.rtt_ns = 40.0, 10_000.0
    cc.on_timeout(100_000, 0)
    cc.on_timeout(105_000, 0)               # 5 us later, RTT 10 us: no second cut
    assert cc.cwnd_pkts == pytest.approx(20.0)
    cc.on_timeout(120_000, 0)
    assert cc.cwnd_pkts == pytest.approx(10.0)
    cc.on_loss(200_000, 0)                  # fast recovery: halves and restarts the count (3 -> 0)
    for k in range(4):
        cc.on_timeout(300_000 + 20_000 * k, 0)
    assert cc.consec_rto == 4 and cc.cwnd_pkts == pytest.approx(5.0 / 16)
    cc.on_timeout(400_000, 0)               # the 5th in a row
    assert cc.cwnd_pkts == pytest.approx(0.001)


def test_swift_paces_below_one_packet():
    cc = Swift(Swift.PARAMS.resolve({"flow_scaling": False}), mss_bytes=1000, line_rate_bps=100e9,
               base_rtt_ns=5000)
    cc.cwnd_pkts = 0.5
    cc.rtt_ns = 40_000.0
    cc._apply()
    assert cc.rate_bps == pytest.approx(0.5 * 1000 * 8 / 40e-6)
    cc.cwnd_pkts = 2.0
    cc._apply()
    assert math.isinf(cc.rate_bps)


def test_swift_additive_increase_per_rtt():
    cc = Swift(Swift.PARAMS.resolve({"flow_scaling": False}), mss_bytes=1000, line_rate_bps=100e9,
               base_rtt_ns=5000)
    cc.cwnd_pkts = 10.0
    for _ in range(10):                     # one window of ACKs below target: +ai ~ 1 packet
        cc.on_ack(0, 1000, 6000, False, 0)
    assert cc.cwnd_pkts == pytest.approx(11.0, rel=0.01)


def _timely():
    return Timely(Timely.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=20_000)


def test_timely_regions():
    cc = _timely()
    cc.target_bps = 50e9
    cc.completion(30_000)                   # below T_low: + delta
    assert cc.target_bps == pytest.approx(50e9 + 10e6)
    cc.completion(1_000_000)                # above T_high: R (1 - beta (1 - T_high / rtt))
    assert cc.target_bps == pytest.approx((50e9 + 10e6) * (1 - 0.8 * 0.5))


def test_timely_gradient_and_hai():
    cc = _timely()
    cc.target_bps = 10e9
    cc.completion(100_000)                  # first sample: gradient 0 -> +delta (count 1)
    r = cc.target_bps
    cc.completion(110_000)                  # rtt_diff = 0.875 x 10 us, gradient 0.4375
    assert cc.target_bps == pytest.approx(r * (1 - 0.8 * 0.875 * 10_000 / 20_000))
    for _ in range(4):
        cc.completion(110_000)              # diff decays but stays > 0: still decreasing
    cc2 = _timely()
    cc2.target_bps = 10e9
    rates = []
    for _ in range(7):                      # flat RTT in the band: gradient 0, HAI from the 5th on
        cc2.completion(100_000)
        rates.append(cc2.target_bps)
    steps = [round((b - a) / 10e6) for a, b in zip([10e9] + rates, rates)]
    assert steps == [1, 1, 1, 1, 5, 5, 5]


def test_timely_hpcc_preset_as_hpcc_ns3():
    """Preset hpcc (HPCC run.py cc=timely + RdmaHw): δ = line rate / 1000, minRTT 20 us, per-RTT events,
    the first event only records the RTT (UpdateRateTimely with m_lastUpdateSeq == 0), and every increase
    counts towards HAI — also below T_low, where the paper adds only δ."""
    cc = Timely(Timely.PARAMS.resolve({"preset": "hpcc"}), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=5000)
    assert (cc.delta, cc.min_rtt, cc.segment, cc.t_low, cc.t_high) == (100e6, 20_000, 0, 50_000, 500_000)
    cc.target_bps = 10e9
    rates = []
    for _ in range(8):                      # RTT below T_low: nothing, 5 x δ, then HAI (N = 5) from the 6th increase
        cc.completion(10_000)
        rates.append(cc.target_bps)
    steps = [round((b - a) / 100e6) for a, b in zip([10e9] + rates, rates)]
    assert steps == [0, 1, 1, 1, 1, 1, 5, 5]
    paper = _timely()
    paper.target_bps = 10e9
    for _ in range(7):
        paper.completion(10_000)
    assert paper.target_bps == pytest.approx(10e9 + 7 * 10e6)     # Algorithm 1: δ only below T_low
    scaled = Timely(Timely.PARAMS.resolve({"preset": "hpcc"}), mss_bytes=1000, line_rate_bps=25e9,
                    base_rtt_ns=5000)
    assert scaled.delta == pytest.approx(25e6)                  # run.py: RATE_AI = 10 x bw / 10 Mb/s


def _code(**kw):
    return Timely(Timely.PARAMS.resolve({"preset": "code", **kw}), mss_bytes=1000, line_rate_bps=10e9,
                  base_rtt_ns=6_500)


def test_timely_code_preset_as_the_reference_code():
    """Preset code (timely-code-snippet.cc with its per-packet-pacing recommendations): alpha 0.02,
    T_low 0, T_high 1 ms, delta 10 Mb/s at 10 Gb/s, minRTT = the path's base RTT, an event per ACK."""
    cc = _code()
    assert (cc.a, cc.t_low, cc.t_high, cc.delta, cc.min_rtt, cc.segment, cc.pace_segment) == \
        (0.02, 0.0, 1_000_000.0, pytest.approx(10e6), 6_500.0, 1, False)
    cc.target_bps = 5e9
    cc.on_ack(0, 1000, 10_000, False, 0)
    cc.on_ack(100, 1000, 10_000, False, 0)  # every ACK is an event
    assert cc.events == 2


def test_timely_code_preset_hai_counts_raw_negative_differences():
    """The code counts consecutive negative raw RTT differences (a flat RTT resets it); Algorithm 1 as
    the paper preset has it counts non-positive smoothed gradients (a flat RTT reaches HAI)."""
    for rtts, want in (([100_000 - 1_000 * k for k in range(7)], [1, 1, 1, 1, 1, 5, 5]),
                       ([100_000] * 7, [1] * 7)):
        cc = _code(t_low_ns=0)
        cc.target_bps = 5e9
        rates = []
        for rtt in rtts:
            cc.completion(rtt)
            rates.append(cc.target_bps)
        assert [round((b - a) / 10e6) for a, b in zip([5e9] + rates, rates)] == want
    paper = _timely()
    paper.target_bps = 5e9
    for _ in range(7):
        paper.completion(100_000)
    assert paper.target_bps == pytest.approx(5e9 + (4 + 3 * 5) * 10e6)


def test_timely_cut_capped_at_half_the_rate():
    """The reference code caps one update's decrease at half the rate ("decrease in rate capped by 0.5
    times the old rate"; preset code); Algorithm 1 has no cap and HPCC's ns-3 floors 1 - beta g at 0
    (presets paper and hpcc: down to the rate floor)."""
    cc = _code(t_low_ns=0)                  # minRTT 6.5 us
    cc.target_bps = 5e9
    cc.completion(100_000)
    cc.completion(900_000)                  # in the band, gradient 0.02 x 800 / 6.5 = 2.5: beta g > 1
    assert cc.target_bps == pytest.approx(0.5 * (5e9 + 10e6))
    for c in (_timely(), Timely(Timely.PARAMS.resolve({"preset": "hpcc"}), mss_bytes=1000, line_rate_bps=100e9,
                                base_rtt_ns=5000)):
        c.target_bps = 10e9
        c.completion(100_000)
        c.completion(400_000)               # gradient 0.875 x 300 / 20 = 13
        assert c.target_bps == c.min_rate


def test_timely_code_preset_gradient_cut_not_scaled_by_the_interval():
    """The code's delta_factor scales the increases and the T_high cut, not the gradient cut."""
    cc = _code()
    cc.target_bps = 5e9
    cc.completion(100_000, 0)
    cc.completion(101_000, 1_000)            # 1 us later (f = 1/6.5): rtt_diff 0.02 x 1 us, g = 20 / 6500
    assert cc.target_bps == pytest.approx((5e9 + 10e6) * (1 - 0.8 * 20 / 6_500))
    paper = _timely()
    paper.target_bps = 5e9
    paper.completion(100_000, 0)
    paper.completion(101_000, 1_000)         # paper preset: x f = 1/20 as well
    assert paper.target_bps == pytest.approx((5e9 + 10e6) * (1 - (1 / 20) * 0.8 * 875 / 20_000))


def test_timely_steps_scaled_by_the_update_interval():
    """Preset paper: every step x min(1, dt / minRTT) (the reference code's delta_factor); hpcc: unscaled."""
    cc = _timely()
    cc.target_bps = 10e9
    cc.completion(30_000, 0)                # first update: factor 1
    cc.completion(30_000, 5_000)            # 5 us after it, minRTT 20 us: delta x 0.25
    assert cc.target_bps == pytest.approx(10e9 + 10e6 + 0.25 * 10e6)
    cc.completion(1_000_000, 10_000)        # above T_high, 5 us later: R (1 - 0.25 beta (1 - T_high / rtt))
    assert cc.target_bps == pytest.approx((10e9 + 12.5e6) * (1 - 0.25 * 0.8 * 0.5))
    h = Timely(Timely.PARAMS.resolve({"preset": "hpcc"}), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=5000)
    h.target_bps = 10e9
    h.completion(10_000, 0)                 # the first event records the RTT only
    h.completion(10_000, 1_000)
    assert h.target_bps == pytest.approx(10e9 + 100e6)


def test_timely_segment_pacing_bursts_at_line_rate_then_waits():
    """pacing = segment: the packets of a 16 KB segment leave unpaced; after the last one the NIC waits
    until the segment's start + 16 KB / R (here 3 x 5 KB + 1 KB at R = 1 Gb/s: 128 us)."""
    cc = _timely()
    cc.target_bps = 1e9
    for k in range(3):
        cc.on_send(1_000 * k, 5_000)
        assert cc.rate_bps == float("inf")
    cc.on_send(3_000, 1_000)                 # 16 KB reached: the gap ends at 0 + 16 KB x 8 / 1 Gb/s
    assert 1_000 * 8e9 / cc.rate_bps == pytest.approx(128_000 - 3_000)
    cc.on_send(128_000, 1_000)               # the next segment starts back to back again
    assert cc.rate_bps == float("inf")
    p = Timely(Timely.PARAMS.resolve({"pacing": "packet"}), mss_bytes=1000, line_rate_bps=100e9,
               base_rtt_ns=20_000)
    p.target_bps = 1e9
    p.completion(30_000, 0)
    assert p.rate_bps == p.target_bps == pytest.approx(1e9 + 10e6)    # packet pacing: the NIC paces at R


def test_timely_start_rate():
    """A flow starts at line rate (TIMELY's C/(N+1) for a host's first flow) unless init_rate_bps; packet pacing
    paces at it from the first packet, segment pacing sends the first segment back to back."""
    def mk(**kw):
        return Timely(Timely.PARAMS.resolve(kw), mss_bytes=1000, line_rate_bps=10e9, base_rtt_ns=6_500)

    assert mk().target_bps == 10e9
    z = mk(pacing="packet", init_rate_bps=5e9)
    assert z.target_bps == z.rate_bps == 5e9
    s = mk(init_rate_bps=5e9)
    assert s.target_bps == 5e9 and s.rate_bps == 10e9
    assert mk(init_rate_bps=40e9).target_bps == 10e9            # the rate never exceeds the line rate


def test_timely_segment_pacing_needs_a_segment():
    from netsim.errors import InputError
    with pytest.raises(InputError, match="segment_bytes"):
        Timely(Timely.PARAMS.resolve({"segment_bytes": 0}), mss_bytes=1000, line_rate_bps=100e9,
               base_rtt_ns=20_000)


def test_timely_completion_every_segment():
    cc = _timely()
    for _ in range(15):
        cc.on_ack(0, 1000, 30_000, False, 0)
    assert cc.events == 0
    cc.on_ack(0, 1000, 30_000, False, 0)
    assert cc.events == 1


def test_timely_once_per_rtt_events():
    cc = Timely(Timely.PARAMS.resolve({"segment_bytes": 0, "pacing": "packet"}), mss_bytes=1000,
                line_rate_bps=100e9, base_rtt_ns=20_000)
    cc.on_ack(0, 1000, 30_000, False, 9000)       # first ACK: event; the RTT ends when 10 KB are acked
    assert cc.events == 1
    for _ in range(9):
        cc.on_ack(0, 1000, 30_000, False, 9000)
    assert cc.events == 1
    cc.on_ack(0, 1000, 30_000, False, 9000)
    assert cc.events == 2


def test_hpcc_idle_path_opens_to_line_rate():
    cc = _hpcc(preset="hpcc")                # maxStage 0: the multiplicative branch at any U
    cc.wc = 10_000.0
    _ack(cc, 0.0)                            # U = 0: no division by zero, back to W_init
    assert cc.cwnd_bytes == cc.w_init and cc.rate_bps == 100e9


def _cli(tmp_path, capsys, *extra):
    from netsim.cli import main
    flows = tmp_path / "f.csv"
    flows.write_text("src,dst,size_bytes,start_ns\nleft0,right0,30000,0\n")
    code = main(["flows", "dumbbell:n_left=1,n_right=1", str(flows), "--out", str(tmp_path / "o"), "--quiet",
                 *extra])
    return code, capsys.readouterr().err


def test_flow_backend_rejects_timely_in_one_line(tmp_path, capsys):
    code, err = _cli(tmp_path, capsys, "--backend", "flow", "--cc", "timely")
    assert code == 2 and err.count("\n") == 1 and "timely" in err and "--backend packet" in err


def test_flow_file_cc_column_rejected_at_its_line(tmp_path, capsys):
    """A flow file's cc=timely on --backend flow: the error names the file, line and field, not --cc."""
    from netsim.cli import main
    flows = tmp_path / "f.csv"
    flows.write_text("src,dst,size_bytes,start_ns,cc\nleft0,right0,30000,0,hpcc\nleft0,right0,30000,0,timely\n")
    code = main(["flows", "dumbbell:n_left=1,n_right=1", str(flows), "--out", str(tmp_path / "o"), "--quiet",
                 "--backend", "flow"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"{flows}: line 3, field cc: congestion control has no flow-backend model (got 'timely')" in err
    assert "--cc" not in err.split("expected")[0] and "--backend packet" in err


def test_flow_backend_models_hpcc_and_swift(tmp_path, capsys):
    from netsim.backends.flow.ccmodel import resolve_model
    assert resolve_model("hpcc").efficiency == pytest.approx(0.911)
    assert resolve_model("swift").efficiency == 1.0
    code, _ = _cli(tmp_path, capsys, "--backend", "flow", "--cc", "hpcc")
    assert code == 0


def test_mtu_too_small_for_int_header_is_one_line(tmp_path, capsys):
    code, err = _cli(tmp_path, capsys, "--cc", "hpcc", "--set", "mtu_bytes=100", "--set", "header_bytes=62")
    assert code == 2 and err.count("\n") == 1 and "INT header" in err and "mtu_bytes" in err


def test_hpcc_data_packets_carry_int_on_the_wire():
    """Packet backend: each switch hop stamps once; the wire size includes the 42-byte header."""
    from netsim.bench.cc import dumbbell_graph, simulate
    g = dumbbell_graph(1, host_rate_bps=100e9, host_delay_ns=1000, bott_rate_bps=100e9, bott_delay_ns=1000)
    res = simulate(g, [("s0", "r0", 100_000, 0)], cc="hpcc")
    f = res.flows[0]
    assert f.hdr - f.cc.int_bytes == 62 and f.mss + f.hdr == 1500
    hops = [IntHop(*h) for h in f.cc.hops]                         # the stamped records, fields named
    assert [h.port.name for h in hops] == ["sw0", "sw1"]          # two switch egresses, no NIC
    n_pkts = -(-100_000 // f.mss)                                  # the last ACK's hops: all bytes sent
    assert hops[0].rate_bps == 100e9 and hops[0].tx_bytes == hops[1].tx_bytes == 100_000 + n_pkts * f.hdr


def test_hpcc_int_tx_bytes_counts_other_traffic_on_the_port():
    """INT txBytes is the port's counter of every byte sent: a DCQCN flow on the same bottleneck counts too."""
    from netsim.bench.cc import dumbbell_graph, simulate
    g = dumbbell_graph(2, host_rate_bps=100e9, host_delay_ns=1000, bott_rate_bps=100e9, bott_delay_ns=1000)
    res = simulate(g, [("s0", "r0", 200_000, 0, "hpcc"), ("s1", "r0", 200_000, 0, "dcqcn")], cc="hpcc")
    hp, dc = res.flows[0], res.flows[1]
    assert hp.cc.name == "hpcc" and dc.cc.name == "dcqcn"
    port = res.backend.net.ports[("sw0", "sw1")]
    wire = [f.size + -(-f.size // f.mss) * f.hdr for f in (hp, dc)]   # data bytes on the wire, each flow
    assert port.tx_bytes >= sum(wire)                                   # both flows' data (plus any CNPs)
    own = wire[0]
    last = IntHop(*hp.cc.hops[0])                                      # sw0's stamp on HPCC's last packet
    assert last.port is port and own < last.tx_bytes <= port.tx_bytes   # old counter: exactly `own`


def _recurrence_grows(k: float, d: int, steps: int = 4000) -> bool:
    x = [1.0] * (d + 1)
    for _ in range(steps):
        x.append(x[-1] - k * x[-1 - d])
    return max(abs(v) for v in x[-200:]) > 1.0


def test_timely_loop_gain_hand_computed_and_its_limit_is_the_recurrence_edge():
    from netsim.bench.ccchecks import timely_loop_gain
    r = timely_loop_gain({"preset": "paper"}, 10e9)
    # 16 KB at 5 Gb/s per flow = 25.6 us between completions; K = beta alpha T_e / minRTT (the paper's 20 us)
    assert (r["t_e_ns"], r["delay_rounds"], r["min_rtt_ns"]) == (25_600, 2, 20_000)
    assert r["k"] == pytest.approx(0.8 * 0.875 * 25_600 / 20_000)
    assert r["limit"] == pytest.approx((5 ** 0.5 - 1) / 2)          # 2 sin(pi/10)
    h = timely_loop_gain({"preset": "hpcc"}, 100e9)                  # one event per RTT: T_e = T_low, d = 1
    assert (h["t_e_ns"], h["delay_rounds"], h["k"]) == (50_000, 1, pytest.approx(0.8 * 0.875 * 50 / 20))
    for lim, d in ((h["limit"], 1), (r["limit"], 2)):
        assert not _recurrence_grows(0.97 * lim, d) and _recurrence_grows(1.03 * lim, d)
