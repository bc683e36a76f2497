"""The flow backend's 1 GB ring all-reduce on 256 hosts against its closed form (README, flow-backend.md).

``netsim.bench.flow.ring_allreduce_star(256, 1 GB)``: 256 hosts on a 100 Gb/s
star, 130,560 transfers; the completion time against
2(n − 1)·(α + S/(n·B_eff)) (B_eff the payload rate, α the per-step latency).
Wall time is the bench's business (``netsim bench flow_ring_allreduce_256``),
not a figure here.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = False                   # about 1 s of CPU
HOSTS, SIZE_BYTES = 256, 10**9
#: the simulated and closed-form times agree to the nanosecond: rerun within 1e-6 relative
TOLERANCE = {"sim_ns": 1e-6, "formula_ns": 1e-6, "diff_ns": 1.0}

FIGURES = [
    Figure("readme", "README.md", "| 2(n−1)/n·S/B + latency | within {diff_ns:.0f} ns of "
           "2(n−1)·(α + S/(n·B_eff)) ({sim_ms:.3f} ms);"),
    Figure("bench_row", "docs/flow-backend.md", "simulated {sim_ns:,.0f} ns vs 2(n−1)·(α + S/(n·B_eff)) = "
           "{formula_ns:,.0f} ns"),
]


def measure() -> dict:
    """Simulated and closed-form completion times (ns, ms) and their difference (ns, rounded up)."""
    import math

    from netsim.bench.flow import ring_allreduce_star
    r = ring_allreduce_star(HOSTS, SIZE_BYTES)
    sim, formula = float(r["sim_time_ns"]), float(r["formula_ns"])
    return {"sim_ns": sim, "formula_ns": formula, "sim_ms": sim / 1e6,
            "diff_ns": float(math.ceil(abs(sim - formula)))}
