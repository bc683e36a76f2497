"""The linearised in-band TIMELY loop gain that explains the band check (docs/congestion-control.md).

:func:`netsim.bench.ccchecks.timely_loop_gain` on the 2-to-1 of the TIMELY checks: the gain K per
round of completions and its stability limit for the presets at the paper's 10 Gb/s and at 100 Gb/s.
No simulation (path constants and the presets only), so deterministic and fast.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = False
DOC = "docs/congestion-control.md"

FIGURES = [
    Figure("paper_10g", DOC, "At 10 Gb/s with two flows, T_e = 16 KB / 5 Gb/s = {te10_us:.1f} µs and the band's "
           "RTT of 50 µs is d = {d10:.0f} rounds (limit {lim10:.2f}): the `paper` preset (minRTT 20 µs) has "
           "K = {k10_paper:.2f}; normalised by the base RTT ({base10_us:.1f} µs) it would be {k10_base:.1f}."),
    Figure("hpcc_100g", DOC, "At 100 Gb/s the `hpcc` preset updates once per RTT (T_e ≈ RTT at T_low, d = "
           "{d100:.0f}, limit {lim100:.1f}) with K = 0.8 × 0.875 × 50/20 = {k100_hpcc:.2f}."),
    Figure("paper_100g", DOC, "the `paper` preset at 100 Gb/s: K = {k100_paper:.2f} against a limit of "
           "{lim100_paper:.2f}"),
    Figure("stable_10g", DOC, "paced per packet with `min_rtt_ns=100us` (K = {k10_100:.3f})"),
]


def measure() -> dict:
    """K, its limit and the loop's constants for the presets of the TIMELY checks."""
    from netsim.bench import ccchecks as c
    r10 = c.TIMELY_PAPER_RATE_BPS
    paper = c.timely_loop_gain({"preset": "paper"}, r10)
    hpcc = c.timely_loop_gain({"preset": "hpcc"}, c.RATE_BPS)
    paper100 = c.timely_loop_gain({"preset": "paper"}, c.RATE_BPS)
    return {"te10_us": paper["t_e_ns"] / 1e3, "d10": float(paper["delay_rounds"]), "lim10": paper["limit"],
            "base10_us": paper["base_rtt_ns"] / 1e3, "k10_paper": paper["k"],
            "k10_base": c.timely_loop_gain({"preset": "paper", "min_rtt_ns": int(paper["base_rtt_ns"])}, r10)["k"],
            "k10_100": c.timely_loop_gain(c.TIMELY_STABLE_PARAMS, r10)["k"],
            "d100": float(hpcc["delay_rounds"]), "lim100": hpcc["limit"], "k100_hpcc": hpcc["k"],
            "k100_paper": paper100["k"], "lim100_paper": paper100["limit"]}
