"""Patched TIMELY (Zhu, Ghobadi, Misra, Padhye, CoNEXT 2016 §4.3) on hand-computed values.

Inside [T_low, T_high] the rate moves by ``(1 − w(g))·δ − β'·w(g)·R·(RTT − RTT_ref)/RTT_ref``
with ``w(g) = clip(2g + 1/2, 0, 1)``, β' = 0.008, RTT_ref = T_low; outside the band it is
Algorithm 1. At a flat RTT (g = 0, w = 1/2) the step vanishes at the unique fixed point
``RTT* = RTT_ref·(1 + δ/(β'·R))`` — 62.5 µs for two flows at C/2 with δ = C/1000.
"""
import pytest

from netsim.errors import InputError
from netsim.transport.cc import Timely
from netsim.transport.cc.timely import patched_weight


def _patched(line_rate_bps=10e9, **over):
    return Timely(Timely.PARAMS.resolve({"preset": "patched", **over}), mss_bytes=1000,
                  line_rate_bps=line_rate_bps, base_rtt_ns=6_500)


@pytest.mark.parametrize("g, w", [(-1.0, 0.0), (-0.25, 0.0), (-0.1, 0.3), (0.0, 0.5), (0.1, 0.7),
                                  (0.25, 1.0), (3.0, 1.0)])
def test_weight_function(g, w):
    assert patched_weight(g) == pytest.approx(w)


def test_preset_values():
    cc = _patched()
    assert (cc.t_low, cc.t_high, cc.min_rtt, cc.rtt_ref) == (50_000, 500_000, 20_000, 50_000)
    assert cc.patched and cc.patched_beta == 0.008 and cc.delta == pytest.approx(10e6)
    assert _patched(100e9).delta == pytest.approx(100e6)      # δ = line rate / 1000


def test_in_band_steps_by_hand():
    cc = _patched()
    cc.target_bps = 5e9
    cc.completion(100_000, 0)               # first event: g = 0, w = 1/2, f = 1
    # 5e9 + 0.5 x 10e6 - 0.008 x 0.5 x 5e9 x (100 - 50) / 50
    assert cc.target_bps == pytest.approx(4.985e9)
    cc.completion(110_000, 30_000)          # rtt_diff 0.875 x 10 us: g = 0.4375, w = 1; f = min(1, 30/20)
    assert cc.target_bps == pytest.approx(4.985e9 * (1 - 0.008 * (110 - 50) / 50))
    r = cc.target_bps
    cc.completion(106_000, 40_000)          # rtt_diff 0.125 x 8750 + 0.875 x (-4000) = -2406.25 ns; g = -0.1203
    w = 2 * (-2406.25 / 20_000) + 0.5       # f = 10 / 20
    assert cc.target_bps == pytest.approx(r + 0.5 * ((1 - w) * 10e6 - 0.008 * w * r * (106 - 50) / 50))


def test_fixed_point_is_unique_and_at_the_formula():
    """Flat RTT: the step is + at RTT < RTT*, 0 at RTT*, − above (one crossing, unlike Algorithm 1,
    which adds δ at every RTT of the band with g = 0)."""
    r = 5e9
    rtt_star = 50_000 * (1 + 10e6 / (0.008 * r))
    assert rtt_star == pytest.approx(62_500)
    for rtt, sign in ((55_000, 1), (rtt_star, 0), (70_000, -1), (400_000, -1)):
        cc = _patched()
        cc.target_bps = r
        cc.completion(rtt, 0)
        step = cc.target_bps - r
        assert (step > 1.0) - (step < -1.0) == sign


def test_outside_the_band_is_algorithm_1():
    cc = _patched()
    cc.target_bps = 5e9
    cc.completion(30_000, 0)                # below T_low: + δ
    assert cc.target_bps == pytest.approx(5e9 + 10e6)
    cc.completion(1_000_000, 20_000)        # above T_high: R (1 - β (1 - T_high / RTT))
    assert cc.target_bps == pytest.approx((5e9 + 10e6) * (1 - 0.8 * 0.5))


def test_events_at_least_min_rtt_apart():
    """16 KB acked every 5 us (100 Gb/s at 2 flows ~ 2.6 us per segment): an event only once
    min_rtt (20 us) has passed since the last, the bytes acked meanwhile counting towards it."""
    cc = _patched(100e9)
    for i in range(1, 21):                  # 100 us of ACKs
        cc.on_ack(i * 5_000, 16_000, 60_000, False, 0)
    assert cc.events == 5                   # at 5, 25, 45, 65, 85 us
    free = _patched(100e9, min_rtt_between_events=False)
    for i in range(1, 21):
        free.on_ack(i * 5_000, 16_000, 60_000, False, 0)
    assert free.events == 20


def test_reference_rtt_zero_needs_a_t_low():
    with pytest.raises(InputError):
        _patched(t_low_ns=0)
