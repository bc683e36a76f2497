"""DCQCN reaction point against the paper's update rules and HPCC's Mellanox model."""
import math
import random

import pytest

from netsim.transport.cc.dcqcn import DCQCN, PRESETS

US = 1000


def make(line=40e9, **over):
    return DCQCN(DCQCN.PARAMS.resolve(over), mss_bytes=1000, line_rate_bps=line, base_rtt_ns=10_000)


def paper(line=40e9, **over):
    """The SIGCOMM'15 law: every reproduction of the paper's figures asks for it by name."""
    return make(line, preset="paper", **over)


def test_starts_at_line_rate_no_window():
    cc = make()
    assert cc.rate_bps == 40e9 and math.isinf(cc.cwnd_bytes)
    cc.advance(10**9)
    assert cc.rate_bps == 40e9


def test_one_cnp_then_fast_recovery_ticks():
    # reference: 40 Gbps, alpha = 1, one CNP, then 5 timer ticks -> 20, 30, 35, 37.5, 38.75, 39.375
    cc = paper()
    cc.on_cnp(0)
    got = [cc.rate_bps / 1e9]
    for i in range(1, 6):
        cc.advance(i * 55 * US)
        got.append(cc.rate_bps / 1e9)
    assert got == pytest.approx([20, 30, 35, 37.5, 38.75, 39.375])
    assert cc.target_bps == 40e9


def test_alpha_decay_halves_after_177_updates():
    g = 1 / 256
    n_half = math.log(0.5) / math.log(1 - g)
    assert 177 < n_half < 178
    cc = paper()
    cc.on_cnp(0)
    assert cc.alpha == pytest.approx(1.0)            # (1 - g) * 1 + g
    cc.advance(177 * 55 * US)
    assert cc.alpha > 0.5
    cc.advance(178 * 55 * US)
    assert cc.alpha < 0.5
    assert cc.alpha == pytest.approx((1 - g) ** 178)


def test_lazy_batching_equals_stepwise():
    rng = random.Random(7)
    for preset in PRESETS:
        a, b = make(preset=preset), make(preset=preset)
        t = 0
        cnps = sorted(rng.randrange(0, 5_000 * US) for _ in range(30))
        for c in cnps:
            while t < c:                     # b: advanced every 250 ns
                t = min(c, t + 250)
                b.advance(t)
            a.on_cnp(c)
            b.on_cnp(c)
        for x in (a, b):
            x.advance(20_000 * US)
        assert a.rate_bps == pytest.approx(b.rate_bps, rel=1e-12)
        assert a.alpha == pytest.approx(b.alpha, rel=1e-9)
        assert a.target_bps == pytest.approx(b.target_bps, rel=1e-12)


def test_additive_then_hyper_increase_paper():
    cc = paper(line=40e9)
    cc.on_cnp(0)                                    # 40 -> 20, R_T = 40
    cc.on_cnp(1)                                    # alpha = 1: 20 -> 10, R_T = 20
    assert cc.rate_bps == pytest.approx(10e9) and cc.target_bps == pytest.approx(20e9)
    for i in range(1, 6):
        cc.advance(1 + i * 55 * US)                 # 5 fast-recovery timer events
    assert cc.target_bps == pytest.approx(20e9)
    rc = cc.rate_bps
    cc.advance(1 + 6 * 55 * US)                     # timer stage 6 > F, byte stage 0: additive
    assert cc.target_bps == pytest.approx(20e9 + 40e6)
    assert cc.rate_bps == pytest.approx((rc + 20e9 + 40e6) / 2)
    # push the byte counter past F too: hyper increase with R_HAI * (min stage - F)
    for _ in range(6):
        cc.on_send(1 + 6 * 55 * US, 10_000_000)     # byte events 1..5 additive, 6 hyper (min=6)
    # byte events 1..6 each: stage max(6, b) > F, min(6, b) <= F for b <= 5 -> additive x5
    # b = 6: min = 6 > F -> hyper, +R_HAI * 1
    assert cc.target_bps == pytest.approx(20e9 + 40e6 * 6 + 200e6 * 1)
    cc.advance(1 + 7 * 55 * US)                     # timer stage 7, byte stage 6: min 6 -> +R_HAI * 1
    assert cc.target_bps == pytest.approx(20e9 + 40e6 * 6 + 200e6 * 2)


def test_hpcc_mellanox_sequence():
    # F = 1: timer event 1 fast recovery, 2 additive, 3+ hyper (flat R_HAI); rai/rhai scaled by 100/25
    cc = make(line=100e9, preset="hpcc")
    cc.on_cnp(0)
    assert cc.rate_bps == 100e9                     # no cut before the first 4 us check
    cc.advance(4 * US)
    alpha_at_cut = (1 - 1 / 256) ** 4               # four alpha ticks without a CNP first
    assert cc.rate_bps == pytest.approx(100e9 * (1 - alpha_at_cut / 2))
    r0 = cc.rate_bps
    t0 = 4 * US
    cc.advance(t0 + 300 * US)
    assert cc.rate_bps == pytest.approx((r0 + 100e9) / 2)      # fast recovery
    # target is clamped at line rate, so AI/HAI cannot raise it: check with a lower target
    cc.target_bps = 50e9
    cc.rate_bps = 40e9
    cc.advance(t0 + 600 * US)                                  # additive, R_AI = 5 Mbps * 4
    assert cc.target_bps == pytest.approx(50e9 + 20e6)
    cc.advance(t0 + 900 * US)                                  # hyper, R_HAI = 50 Mbps * 4
    assert cc.target_bps == pytest.approx(50e9 + 20e6 + 200e6)
    cc.advance(t0 + 1200 * US)
    assert cc.target_bps == pytest.approx(50e9 + 20e6 + 400e6)


def test_per_period_alpha_counts_cnps():
    cc = make(preset="hpcc")
    cc.on_cnp(0)                                    # first CNP: alpha = 1, not counted
    cc.on_cnp(500)                                  # counted at the 1 us tick
    cc.advance(1 * US)
    assert cc.alpha == pytest.approx(1.0)
    cc.advance(2 * US)
    assert cc.alpha == pytest.approx(1 - 1 / 256)


def test_min_rate_floor():
    cc = paper()
    for i in range(40):
        cc.on_cnp(i * 50 * US // 100)
    assert cc.rate_bps == pytest.approx(100e6)      # paper preset floor
    hp = make(preset="hpcc")
    t = 0
    for i in range(400):
        hp.on_cnp(t)
        t += 4 * US
    hp.advance(t)
    assert hp.rate_bps == pytest.approx(1e9)


def test_overrides_beat_preset():
    cc = make(preset="hpcc", rai_bps="7Mbps", g="1/16")
    assert cc.rai == 7e6 and cc.g == 1 / 16
    assert cc.rhai == pytest.approx(50e6 * 40 / 25)
    assert cc.params["cnp_interval_ns"] == 0 and cc.cnp_interval_ns == 0
    assert paper().cnp_interval_ns == 50 * US


def test_ecn_settings_scale_with_link_rate():
    assert DCQCN.ecn_settings({"preset": "hpcc"}, 25e9) == {
        "ecn_kmin_bytes": 100_000, "ecn_kmax_bytes": 400_000, "ecn_pmax": 0.2, "ecn_mark_at": "dequeue"}
    assert DCQCN.ecn_settings({"preset": "hpcc"}, 100e9)["ecn_kmax_bytes"] == 1_600_000
    assert DCQCN.ecn_settings({"preset": "paper"}, 100e9) == {
        "ecn_kmin_bytes": 5_000, "ecn_kmax_bytes": 200_000, "ecn_pmax": 0.01, "ecn_mark_at": "dequeue"}
    assert DCQCN.ecn_settings({"preset": "hpcc", "kmin_bytes": 1234}, 100e9)["ecn_kmin_bytes"] == 1234


def test_window_cap_optional():
    assert make(window_bytes="64KB").cwnd_bytes == 64_000
    assert make().sample() == (None, 40e9, 1.0)


def test_default_preset_is_the_deployment_law():
    # default = hpcc (Mellanox RP law, ECN thresholds scaled with the line rate), not the 2015 paper law
    cc = make(line=100e9)
    hp = make(line=100e9, preset="hpcc")
    assert cc.params == hp.params
    assert (cc.rate_period_ns, cc.dec_interval_ns, cc.f_steps, cc.min_rate) == (300 * US, 4 * US, 1, 1e9)
    assert cc.rai == pytest.approx(5e6 * 100 / 25) and cc.rhai == pytest.approx(50e6 * 100 / 25)
    assert DCQCN.ecn_settings({}, 100e9) == {
        "ecn_kmin_bytes": 400_000, "ecn_kmax_bytes": 1_600_000, "ecn_pmax": 0.2, "ecn_mark_at": "dequeue"}
    # one CNP at 40 Gb/s: the paper cuts at once, the default waits for the 4 us decrease check
    p, d = paper(), make()
    p.on_cnp(0)
    d.on_cnp(0)
    assert p.rate_bps == 20e9 and d.rate_bps == 40e9
