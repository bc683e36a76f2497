"""HPCC, Swift and TIMELY on the packet backend: the checks of issue #19 (all ``slow``).

Oracles: HPCC holds the bottleneck at η with near-zero queue (Li et al. §3:
the windows converge to η·B·T); against DCQCN on an incast HPCC's queue is
far lower and PFC pauses fewer; Swift's queueing delay settles at its target;
TIMELY's RTT stays within its [T_low, T_high] band once its gradient loop is stable: with the
authors' reference code and its per-packet-pacing values (preset code, T_low 0) it does; with the
paper's band (T_low 50 us: presets paper and hpcc, and Zhu et al.'s scenario) it does not — the three
strict xfails, docs/congestion-control.md; Zhu et al.'s Patched TIMELY (preset patched), whose law has a
unique fixed point in the band, meets the paper's band at 10 and 100 Gb/s. Scenarios and numbers:
:mod:`netsim.bench.ccchecks` (the same ones ``tools/docfigures/cc_checks.py``
puts in docs/congestion-control.md).
"""
import pytest

from netsim.bench import ccchecks

pytestmark = pytest.mark.slow
MTU = 1500


@pytest.mark.parametrize("preset", ["paper", "hpcc"])
def test_hpcc_two_to_one_utilisation_and_queue(preset):
    r = ccchecks.hpcc_two_to_one(preset=preset)
    assert abs(r["util"] - r["eta"]) <= 0.02
    assert r["queue_bytes"] < 2 * MTU               # below one MTU per flow


@pytest.mark.parametrize("pfc_threshold", ["dynamic", "static"])
def test_hpcc_incast_queue_and_pauses_vs_dcqcn(pfc_threshold):
    """16-to-1, both at line rate from the start; DCQCN preset ``hpcc``; dynamic PFC (the issue's check) and static."""
    h = ccchecks.incast_queue("hpcc", pfc_threshold=pfc_threshold)
    d = ccchecks.incast_queue("dcqcn", {"preset": "hpcc"}, pfc_threshold=pfc_threshold)
    assert h["drops"] == d["drops"] == 0
    assert d["queue_bytes"] >= 5 * h["queue_bytes"]
    assert h["pauses"] < d["pauses"]


@pytest.mark.parametrize("n", [2, 8, 32])
def test_swift_queueing_delay_at_target(n):
    r = ccchecks.swift_queue_delay(n)
    assert abs(r["qdelay_ns"] - r["target_ns"]) <= 0.10 * r["target_ns"]


def test_swift_incast_64_converges_without_loss():
    r = ccchecks.swift_incast(64)
    assert r["completed"] == 64 and r["drops"] == 0


def test_swift_64_to_1_below_one_packet_is_paced_without_loss():
    """At 10 Gb/s the 64 fair windows are below one packet (BDP + target queue ~ 23 packets): every
    flow goes below one packet and is paced, with no drop and no timeout (the 100 Gb/s check above
    never leaves the window regime: its windows stay above 5 packets)."""
    r = ccchecks.swift_paced_incast()
    assert r["flows_below_one"] == 64 and r["min_cwnd_pkts"] < 0.1
    assert r["drops"] == 0 and r["timeouts"] == 0


def _in_band(r) -> bool:
    return r["t_low_ns"] <= r["p5_ns"] and r["p95_ns"] <= r["t_high_ns"]


@pytest.mark.xfail(strict=True, reason="measured (2 flows, 100 Gb/s, 10 ms, preset hpcc = HPCC ns-3's TIMELY: "
                   "T_low 50 us, T_high 500 us, minRTT 20 us, delta 100 Mb/s, HAI 500 Mb/s, per-RTT updates): the RTT "
                   "cycles from the empty queue (p5 = base RTT 4.25 us) to ~61 us; HPCC's ns-3 uses the same band "
                   "at 100 Gb/s, so no sourced 100 Gb/s band exists to check instead (docs/congestion-control.md)")
def test_timely_rtt_within_band_hpcc_preset_100g():
    assert _in_band(ccchecks.timely_rtt({"preset": "hpcc"}))


@pytest.mark.xfail(strict=True, reason="measured (2 flows, the paper's 10 Gb/s, 200 ms, preset paper: the paper's "
                   "parameters with minRTT 20 us, 16 KB segments paced as segments, steps scaled by "
                   "min(1, dt/minRTT)): p5 = the base RTT, p95 below T_low; the law has no fixed point (Zhu et al., "
                   "CoNEXT 2016, Theorem 1) and its in-band gain beta x alpha x (16 KB / 5 Gb/s) / minRTT = 0.9 "
                   "exceeds the 0.62 limit of two completions of feedback delay, so each crossing of T_low "
                   "overshoots (docs/congestion-control.md)")
def test_timely_rtt_within_band_paper_preset_10g():
    assert _in_band(ccchecks.timely_rtt({"preset": "paper"}, until_ns=ccchecks.TIMELY_PAPER_UNTIL_NS,
                                        rate_bps=ccchecks.TIMELY_PAPER_RATE_BPS))


@pytest.mark.xfail(strict=True, reason="measured in Zhu et al.'s TIMELY scenario (CoNEXT 2016 §4, Fig. 6a: the "
                   "paper's parameters, 10 Gb/s, 2 flows both starting at 5 Gb/s, per-packet pacing), 200 ms: p5 = "
                   "the base RTT, p95 below T_low; Zhu et al. report the same scenario oscillating (no fixed point)")
def test_timely_rtt_within_band_zhu_scenario_10g():
    assert _in_band(ccchecks.timely_rtt(ccchecks.TIMELY_ZHU_PARAMS, until_ns=ccchecks.TIMELY_PAPER_UNTIL_NS,
                                        rate_bps=ccchecks.TIMELY_PAPER_RATE_BPS))


@pytest.mark.parametrize("rate_bps, until_ns", [(ccchecks.TIMELY_PAPER_RATE_BPS, ccchecks.TIMELY_PAPER_UNTIL_NS),
                                                 (ccchecks.RATE_BPS, 10_000_000)])
def test_timely_rtt_within_band_code_preset(rate_bps, until_ns):
    """The sourced configuration that meets the band check: the authors' reference code with its values
    for per-packet pacing (preset code: T_low 0, T_high 1 ms, alpha 0.02, an update per ACK, minRTT =
    the base RTT, cuts capped at half the rate), at the paper's 10 Gb/s and at 100 Gb/s. With T_low = 0
    the band's lower edge cannot fail, so the test also asks what it stands for: the queue never
    empties (p5 above the base RTT), and the RTT holds within 40 % of its p5 (a settled queue, not a cycle)."""
    r = ccchecks.timely_rtt(ccchecks.TIMELY_CODE_PARAMS, until_ns=until_ns, rate_bps=rate_bps)
    assert r["t_low_ns"] == 0 and r["t_high_ns"] == 1_000_000
    assert _in_band(r)
    assert r["p5_ns"] > r["base_rtt_ns"] + 500          # a standing queue (>= 0.5 us) at the 5th percentile
    assert r["p95_ns"] <= 1.4 * r["p5_ns"]


@pytest.mark.parametrize("rate_bps, until_ns", [(ccchecks.TIMELY_PAPER_RATE_BPS, ccchecks.TIMELY_PAPER_UNTIL_NS),
                                                 (ccchecks.RATE_BPS, ccchecks.TIMELY_PATCHED_100G_UNTIL_NS)])
def test_patched_timely_rtt_within_the_papers_band(rate_bps, until_ns):
    """Patched TIMELY (Zhu et al., CoNEXT 2016 §4.3; preset patched, every value sourced) in the paper's
    band [50, 500] us at 10 and 100 Gb/s: p5-p95 of the RTT inside it, around the law's unique fixed
    point RTT* = RTT_ref (1 + δ/(β' R)) = 62.5 us, and the queue never empty."""
    r = ccchecks.timely_rtt(ccchecks.TIMELY_PATCHED_PARAMS, until_ns=until_ns, rate_bps=rate_bps)
    star = ccchecks.timely_patched_fixed_point_ns(ccchecks.TIMELY_PATCHED_PARAMS, rate_bps)
    assert (r["t_low_ns"], r["t_high_ns"]) == (50_000, 500_000)
    assert _in_band(r)
    assert r["p5_ns"] <= star <= r["p95_ns"]
    assert r["p95_ns"] - r["p5_ns"] <= 0.2 * star       # settled around RTT*, not a cycle through the band


def test_timely_rtt_within_band_when_the_gradient_loop_is_stable():
    """The explanation of the xfails, checked: the paper run paced per packet with the gradient normalised
    by 100 us (loop gain below 0.18 per completion, under the 0.62 limit of two completions of delay)
    holds the RTT in [T_low, T_high] — it enters the band from below and drifts inside (no unique fixed
    point). Not a sourced setting: the check of the gain argument only."""
    r = ccchecks.timely_rtt(ccchecks.TIMELY_STABLE_PARAMS, until_ns=ccchecks.TIMELY_PAPER_UNTIL_NS,
                            rate_bps=ccchecks.TIMELY_PAPER_RATE_BPS)
    assert r["min_rtt_ns"] == 100_000 and _in_band(r)


def test_hpcc_fattree_short_flows_p99_below_dcqcn():
    """HPCC's own fat tree (mix/fat.txt), WebSearch at 30 %, both with dynamic PFC: the paper's headline
    in direction (short-flow p99 slowdown HPCC < DCQCN). About 5 min per algorithm (1 ms of
    arrivals); scenario in
    tools/docfigures/hpcc_fattree.py."""
    import os
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:
        sys.path.insert(0, root)                 # tools/ is run from the checkout, not installed
    from tools.docfigures import hpcc_fattree
    r = hpcc_fattree.measure()
    assert r["n_short"] > 100
    assert r["hpcc_p99"] < r["dcqcn_p99"]
