"""docs/flow-backend.md's calibration table: the none / cubic / dctcp rows (slow, about 1 min).

``tools/flow_calibrate.py``'s measurements on the packet backend with its
defaults (no seed-dependent draws for these algorithms; seed 0):

* efficiency (and its mean over N) = (N·wire/C) ÷ (last completion − λ) of N = 2, 4, 8 flows of
  4 MB started together across a dumbbell's 100 Gb/s bottleneck;
* for cubic and dctcp, the lone-flow slow-start penalty (fct − ideal) of
  0.1, 1 and 10 MB flows in µs, and the least-squares ``ramp_scale`` against
  the flow model's ramp at scale 1.

Left out: the dcqcn row, measured with the ``paper`` preset when it was the
default (the doc says so; ``calibrate --dcqcn`` now runs the ``hpcc`` default).
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = True                   # 2-30 s depending on load (packet runs of 8 flows)
DOC = "docs/flow-backend.md"
NS = (2, 4, 8)

FIGURES = [
    Figure("none", DOC, "| none | {none_eff_2:.4f} | {none_eff_4:.4f} | {none_eff_8:.4f} | 1.00 |"),
    Figure("cubic", DOC, "| cubic | {cubic_eff_2:.3f} | {cubic_eff_4:.3f} | {cubic_eff_8:.3f} | 1.00 | "
           "{cubic_pen_0:.1f} / {cubic_pen_1:.1f} / {cubic_pen_2:.1f} µs |"),
    Figure("cubic_fit", DOC, "| 1.00 (fit {cubic_ramp_scale:.3f}) |"),
    Figure("model_cubic", DOC, "| cubic | 1.00 (calibrated {cubic_eff_mean:.3f}) |"),
    Figure("model_dctcp", DOC, "| dctcp | 1.00 (calibrated {dctcp_eff_mean:.3f}) |"),
    Figure("dctcp", DOC, "| dctcp | {dctcp_eff_2:.3f} | {dctcp_eff_4:.3f} | {dctcp_eff_8:.3f} | 1.00 | "
           "{dctcp_pen_0:.1f} / {dctcp_pen_1:.1f} / {dctcp_pen_2:.1f} µs |"),
]


def measure() -> dict:
    """Efficiencies, penalties in µs and the fitted ramp scales."""
    from tools import flow_calibrate as cal
    out = {}
    for cc in ("none", "cubic", "dctcp"):
        eff = cal.efficiency(cc, ns=NS)
        out.update({f"{cc}_eff_{n}": eff[str(n)]["efficiency"] for n in NS})
        out[f"{cc}_eff_mean"] = eff["mean"]
        if cc != "none":
            r = cal.ramp(cc)
            out.update({f"{cc}_pen_{i}": row["extra_ns"] / 1e3 for i, row in enumerate(r["rows"])})
            out[f"{cc}_ramp_scale"] = r["ramp_scale"]
    return out
