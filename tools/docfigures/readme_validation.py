"""The README's validation rows that netsim's state machines compute in closed form (fast).

* DCQCN, ``preset=paper`` at 40 Gb/s: the rate after one CNP and after each of
  five rate-increase timer ticks (the paper's worked example: 20, 30, 35, 37.5,
  38.75, 39.375 Gb/s).
* CUBIC (RFC 9438 worked example): K for W_max = 100, cwnd_epoch = 70, C = 0.4;
  W_max and cwnd after a loss at cwnd = 80 with W_max = 100 and fast convergence.

The README states the reference beside netsim's value; an agreement is "exact"
only when the rendered values equal the reference's digits.
"""
from __future__ import annotations

from . import Figure

SEED = 0                       # no randomness in these state machines
SLOW = False
DOC = "README.md"
MSS_BYTES = 1000               # any MSS: the example is in segments
#: closed forms: a rerun must give the same values to rounding
TOLERANCE = {k: 1e-9 for k in ("dcqcn_r0", "dcqcn_r1", "dcqcn_r2", "dcqcn_r3", "dcqcn_r4", "dcqcn_r5",
                               "cubic_k_s", "cubic_wmax_seg", "cubic_cwnd_seg")}

FIGURES = [
    Figure("dcqcn_paper_ticks", DOC, "| DCQCN rate after one CNP and five timer ticks (`--cc-param preset=paper`) "
           "| paper: 20, 30, 35, 37.5, 38.75, 39.375 Gbps | {dcqcn_r0:g}, {dcqcn_r1:g}, {dcqcn_r2:g}, "
           "{dcqcn_r3:g}, {dcqcn_r4:g}, {dcqcn_r5:g} Gbps |"),
    Figure("cubic_worked_example", DOC, "| RFC 9438 worked example (K = 4.2172 s; W_max 68, cwnd 56) "
           "| K = {cubic_k_s:.4f} s; W_max {cubic_wmax_seg:g}, cwnd {cubic_cwnd_seg:g} |"),
]


def _dcqcn_ticks() -> list[float]:
    from netsim.transport.cc.dcqcn import DCQCN
    cc = DCQCN(DCQCN.PARAMS.resolve({"preset": "paper"}), mss_bytes=MSS_BYTES, line_rate_bps=40e9,
               base_rtt_ns=10_000)
    cc.on_cnp(0)
    rates = [cc.rate_bps / 1e9]
    for i in range(1, 6):
        cc.advance(i * cc.rate_period_ns)
        rates.append(cc.rate_bps / 1e9)
    return rates


def _cubic() -> dict:
    from netsim.transport.cc.cubic import Cubic
    k = Cubic.k_seconds(100, 70, 0.4)
    cc = Cubic(Cubic.PARAMS.resolve(), mss_bytes=MSS_BYTES, line_rate_bps=10e9, base_rtt_ns=100_000)
    cc.cwnd_bytes, cc.w_max_bytes, cc.ssthresh_bytes = 80 * MSS_BYTES, 100 * MSS_BYTES, 50 * MSS_BYTES
    cc.on_loss(0, 80 * MSS_BYTES)
    return {"cubic_k_s": k, "cubic_wmax_seg": cc.w_max_bytes / MSS_BYTES, "cubic_cwnd_seg": cc.cwnd_bytes / MSS_BYTES}


def measure() -> dict:
    """DCQCN rates in Gb/s, Cubic K in s and windows in segments."""
    out = {f"dcqcn_r{i}": r for i, r in enumerate(_dcqcn_ticks())}
    out.update(_cubic())
    return out
