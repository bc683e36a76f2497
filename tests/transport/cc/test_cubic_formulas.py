"""CUBIC state machine against the closed forms of RFC 9438 (windows in segments)."""
import math

import pytest

from netsim.transport.cc.cubic import Cubic

MSS = 1000


def make(**over):
    return Cubic(Cubic.PARAMS.resolve(over), mss_bytes=MSS, line_rate_bps=10e9, base_rtt_ns=100_000)


def in_avoidance(cc, cwnd_seg, w_max_seg, cwnd_prior_seg=None):
    """Put ``cc`` at the start of a congestion-avoidance epoch."""
    cc.cwnd_bytes = cwnd_seg * MSS
    cc.ssthresh_bytes = cwnd_seg * MSS
    cc.w_max_bytes = w_max_seg * MSS
    cc.cwnd_prior_bytes = (cwnd_prior_seg or w_max_seg) * MSS
    cc.epoch_start_ns = None
    return cc


def test_k_and_w_cubic_worked_example():
    # RFC 9438 Figure 1/2: W_max = 100, cwnd_epoch = 70, C = 0.4 -> K = cbrt(75) = 4.2172 s
    k = Cubic.k_seconds(100, 70, 0.4)
    assert k == pytest.approx(75 ** (1 / 3), rel=1e-12)
    assert round(k, 4) == 4.2172
    assert Cubic.w_cubic(0, 100, k) == pytest.approx(70)
    assert Cubic.w_cubic(k, 100, k) == pytest.approx(100)
    assert Cubic.w_cubic(2 * k, 100, k) == pytest.approx(130)


def test_instance_epoch_uses_same_k():
    cc = in_avoidance(make(), 70, 100)
    cc.on_ack(0, MSS, 100_000, False, 70 * MSS)
    assert cc.k_s == pytest.approx(4.2172, abs=1e-4)
    assert cc._w_cubic_bytes(2 * cc.k_s) / MSS == pytest.approx(130)


def test_loss_with_fast_convergence():
    cc = make()
    cc.cwnd_bytes, cc.w_max_bytes, cc.ssthresh_bytes = 80 * MSS, 100 * MSS, 50 * MSS
    cc.on_loss(0, 80 * MSS)
    assert cc.w_max_bytes == pytest.approx(68 * MSS)     # 80 * (1 + 0.7) / 2
    assert cc.cwnd_bytes == pytest.approx(56 * MSS)      # 0.7 * 80
    assert cc.ssthresh_bytes == pytest.approx(56 * MSS)
    assert cc.cwnd_prior_bytes == 80 * MSS


def test_loss_without_fast_convergence():
    cc = make(fast_convergence="off")
    cc.cwnd_bytes, cc.w_max_bytes, cc.ssthresh_bytes = 80 * MSS, 100 * MSS, 50 * MSS
    cc.on_loss(0, 80 * MSS)
    assert cc.w_max_bytes == pytest.approx(80 * MSS)
    assert cc.cwnd_bytes == pytest.approx(56 * MSS)


def test_ssthresh_floor_two_segments():
    cc = make()
    cc.cwnd_bytes = 2 * MSS
    cc.on_loss(0, 2 * MSS)
    assert cc.ssthresh_bytes == 2 * MSS and cc.cwnd_bytes == 2 * MSS


def run_rounds(cc, rounds, rtt_ns, t0=0):
    """One ACK per MSS, cwnd bytes acknowledged per RTT; returns cwnd (segments) per round."""
    out, now = [], t0
    for _ in range(rounds):
        n = int(cc.cwnd_bytes // MSS)
        for i in range(n):
            cc.on_ack(now + (i * rtt_ns) // n, MSS, rtt_ns, False, n * MSS)
        now += rtt_ns
        out.append(cc.cwnd_bytes / MSS)
    return out, now


def test_reno_friendly_growth_per_rtt():
    # datacenter RTT: W_cubic barely moves in milliseconds, so W_est governs
    beta = 0.7
    a_cubic = 3 * (1 - beta) / (1 + beta)
    cc = in_avoidance(make(), 70, 100, cwnd_prior_seg=100)
    w, now = run_rounds(cc, 20, 100_000)
    growth = [b - a for a, b in zip(w, w[1:])]
    for g in growth[2:]:
        assert g == pytest.approx(a_cubic, rel=0.03)
    # once W_est >= cwnd_prior, alpha becomes 1: one segment per RTT
    cc.w_est_bytes = cc.cwnd_bytes = cc.cwnd_prior_bytes
    w, _ = run_rounds(cc, 5, 100_000, now)
    for g in [b - a for a, b in zip(w, w[1:])]:
        assert g == pytest.approx(1.0, rel=0.03)


def test_cubic_region_follows_w_cubic():
    # long RTT: W_cubic(t) dominates W_est; cwnd(t) ~ W_cubic(t) (one RTT ahead at most)
    rtt = 100_000_000  # 100 ms
    cc = in_avoidance(make(), 700, 1000)
    w, _ = run_rounds(cc, 60, rtt)
    k = cc.k_s
    assert k == pytest.approx(((1000 - 700) / 0.4) ** (1 / 3))
    for r, cw in enumerate(w, start=1):
        t = r * rtt * 1e-9
        expect_lo = Cubic.w_cubic(t, 1000, k)
        expect_hi = Cubic.w_cubic(t + rtt * 1e-9, 1000, k)
        assert expect_lo * 0.99 <= cw <= expect_hi * 1.01


def test_target_clamped_to_one_and_a_half():
    cc = in_avoidance(make(), 100, 100)
    cc.on_ack(0, MSS, 100_000, False, 100 * MSS)   # epoch starts: K = 0, W_max = cwnd
    cc.w_est_bytes = 0                             # keep the Reno-friendly branch out
    before = cc.cwnd_bytes
    cc.on_ack(10 * 10**9, MSS, 100_000, False, 100 * MSS)  # t = 10 s: W_cubic >> 1.5 cwnd
    assert cc.cwnd_bytes - before == pytest.approx(0.5 * MSS * MSS / before * (before / MSS), rel=1e-9)


def test_slow_start_doubles_per_rtt():
    cc = make(hystart="off")  # plain slow start (evenly spread ACKs would trip HyStart's ACK train)
    w, _ = run_rounds(cc, 4, 100_000)
    assert w == [20, 40, 80, 160]


def test_timeout_then_first_epoch_k_zero():
    cc = make(hystart="off")  # plain slow start (evenly spread ACKs would trip HyStart's ACK train)
    cc.cwnd_bytes, cc.w_max_bytes, cc.ssthresh_bytes = 100 * MSS, 120 * MSS, 50 * MSS
    cc.on_timeout(0, 100 * MSS)
    assert cc.cwnd_bytes == MSS
    assert cc.ssthresh_bytes == pytest.approx(70 * MSS)
    w, now = run_rounds(cc, 7, 100_000)
    assert w[-1] >= 70                       # slow start reached ssthresh
    assert cc.k_s == 0.0
    assert cc.w_max_bytes == pytest.approx(70 * MSS, rel=1e-6)  # W_max = cwnd at the epoch start


def test_timeout_inside_recovery_does_not_reduce_twice():
    cc = make()
    cc.cwnd_bytes = 100 * MSS
    cc.on_loss(0, 100 * MSS)
    cc.on_timeout(1, 170 * MSS)              # inflated flight during NewReno recovery
    assert cc.ssthresh_bytes == pytest.approx(70 * MSS) and cc.cwnd_bytes == MSS


def test_slow_start_byte_counting_limit():
    cc = make()
    cc.on_ack(0, 50 * MSS, 100_000, False, 0)  # a stretch ACK (e.g. after go-back-N)
    assert cc.cwnd_bytes == 12 * MSS             # RFC 3465: at most 2 MSS per ACK


def test_no_growth_in_recovery():
    cc = make()
    cc.cwnd_bytes = 100 * MSS
    cc.on_loss(0, 100 * MSS)
    c = cc.cwnd_bytes
    cc.on_ack(1000, 10 * MSS, 100_000, False, 60 * MSS)
    assert cc.cwnd_bytes == c
    cc.on_recovery_end(2000)
    cc.on_ack(3000, MSS, 100_000, False, 60 * MSS)
    assert cc.cwnd_bytes > c


def test_hystart_plus_plus_exits_on_rtt_increase():
    cc = make(hystart="on")
    rtt = 50_000_000     # 50 ms base RTT
    now = 0
    # round 1 at base RTT, then RTT jumps by > max(4 ms, min(50/8, 16) ms) = 6.25 ms
    for rnd, r in enumerate([rtt, rtt, rtt + 8_000_000] + [rtt + 8_000_000] * 7):
        n = int(cc.cwnd_bytes // MSS)
        for i in range(n):
            cc.on_ack(now, MSS, r, False, n * MSS)
            now += r // n
        if rnd == 2:
            assert cc.in_css
    assert not math.isinf(cc.ssthresh_bytes)
    assert not cc.in_css
    # conservative slow start grew by a quarter per ack, so cwnd is far below plain doubling
    assert cc.cwnd_bytes < 10 * MSS * 2 ** 10


def test_hystart_off_never_exits():
    cc = make(hystart="off")
    run_rounds(cc, 3, 50_000_000)
    assert math.isinf(cc.ssthresh_bytes)
