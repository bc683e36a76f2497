"""DCTCP's converged queue against the steady-state band [K/2, K + N·MTU] (README validation row).

The scenario of ``tests/validation/test_cc_dctcp.py``: N = 2, 4, 8 long flows
into one 10 Gb/s port (5 µs links, starts 0.1 ms apart), step marking at the
DCTCP paper's K (65 packets at 10 Gb/s = 97.5 KB), PFC off, 30 ms, seed 0; the
queue sampled every 2 µs after the first 10 ms. Figures: its 5th and 95th
percentiles in KB for each N.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = False                   # about 2 s of CPU
RATE_BPS, DELAY_NS, UNTIL_MS, MTU_BYTES = 10e9, 5_000, 30, 1500
NS = (2, 4, 8)

FIGURES = [
    Figure("readme", "README.md", "| p5–p95 inside the band: {p5_2:.1f}–{p95_2:.1f}, {p5_4:.1f}–{p95_4:.1f} and "
           "{p5_8:.1f}–{p95_8:.1f} KB for N = 2/4/8 (K = {k_kb:.1f} KB) |"),
]


def measure() -> dict:
    """Queue p5/p95 (KB) per N, K (KB) and the band's edges (KB)."""
    import numpy as np

    from netsim.bench.cc import incast_graph, simulate
    from netsim.transport.cc import ecn_overrides
    ecn = ecn_overrides("dctcp", {}, RATE_BPS)
    k = ecn["ecn_kmin_bytes"]
    out = {"k_kb": k / 1e3}
    for n in NS:
        flows = [(f"s{i}", "r0", 10**12, i * 100_000) for i in range(n)]
        res = simulate(incast_graph(n, rate_bps=RATE_BPS, delay_ns=DELAY_NS), flows, cc="dctcp",
                       params={"pfc": False, **ecn}, until_ns=UNTIL_MS * 1_000_000, probe_ns=2_000,
                       watch=("sw0", "r0"), seed=SEED)
        t = np.asarray(res.t_ns) / 1e6
        q = np.asarray(res.queue)[t >= UNTIL_MS / 3]
        p5, p95 = np.percentile(q, [5, 95])
        out[f"p5_{n}"], out[f"p95_{n}"] = float(p5) / 1e3, float(p95) / 1e3
        out[f"band_hi_{n}"] = (k + n * MTU_BYTES) / 1e3
    return out
