"""Cubic on the ns-3.37 reference dumbbell (docs/congestion-control.md, "Measured on netsim bench cubic_dumbbell").

The scenario of :func:`netsim.bench.cc.run_cubic_dumbbell`: 4 Cubic flows ×
100 MB, 10 Gb/s / 2 µs access links, a 10 Gb/s / 5 µs bottleneck with a
100-packet FIFO, 1448-byte segments, packet backend, seed 0. Runs the default
(HyStart ``classic``), ``hystart=off`` and ``reno_friendly=off``: drops and
bottleneck goodput.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = True
DOC = "docs/congestion-control.md"
VARIANTS = {"classic": {}, "off": {"hystart": "off"}, "no_reno": {"reno_friendly": "off"}}

FIGURES = [
    Figure("drops", DOC, "drops {off_drops:.0f} with `hystart=off`"),
    Figure("drops_classic", DOC, "{classic_drops:.0f} with `classic`"),
    Figure("goodput", DOC, "goodput {classic_goodput_gbps:.2f} Gbps either way"),
    Figure("reno", DOC, "with `reno_friendly=off` netsim drops {no_reno_drops:.0f} packets"),
]


def measure() -> dict:
    """Drops and goodput (Gb/s over the run) of each variant."""
    from netsim.bench.cc import dumbbell_graph, simulate
    n, size, mss, hdr = 4, 100_000_000, 1448, 52
    params = {"pfc": False, "ecn": False, "mtu_bytes": mss + hdr, "header_bytes": hdr,
              "buffer_mode": "static", "buffer_bytes": (n + 1) * 100 * (mss + hdr)}
    out = {}
    for name, ccp in VARIANTS.items():
        g = dumbbell_graph(n, host_rate_bps=10e9, host_delay_ns=2000, bott_rate_bps=10e9, bott_delay_ns=5000)
        r = simulate(g, [(f"s{i}", "r0", size, 0) for i in range(n)], cc="cubic", params=params,
                     cc_params={"cubic": ccp}, seed=SEED)
        s = r.stats
        out[f"{name}_drops"] = s["drops"]
        out[f"{name}_goodput_gbps"] = s["bytes_delivered"] * 8 / s["sim_time_ns"]
    return out
