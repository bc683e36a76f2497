"""The DCQCN Kmin × Kmax sweep example of docs/sweep.md, point by point.

Runs every point of ``workloads/sweeps/dcqcn_kmin_kmax_incast.yaml`` (3 Kmin ×
2 Kmax × seeds 1 and 2, default DCQCN preset, PFC on) in-process with the
exact command line ``netsim sweep`` gives it (:func:`netsim.sweep.expand`),
without Dask; the figures are the ranges over seeds of each (Kmin, Kmax) cell
and the FCT range over all points.
"""
from __future__ import annotations

from . import Figure
from ._run import netsim

SEED = 1
SLOW = True
DOC = "docs/sweep.md"
SWEEP = "workloads/sweeps/dcqcn_kmin_kmax_incast.yaml"
KMIN_KB, KMAX_KB = (5, 20, 80), (200, 800)

FIGURES = [
    Figure("marks_kmin5", DOC, "ECN marks {marks_5_200_lo:,.0f}–{marks_5_200_hi:,.0f} at 200 KB vs "
           "{marks_5_800_lo:,.0f}–{marks_5_800_hi:,.0f} at 800 KB for Kmin = 5 KB"),
    Figure("pauses_kmin5", DOC, "PFC pauses {pauses_5_200_lo:.0f}–{pauses_5_200_hi:.0f} vs "
           "{pauses_5_800_lo:.0f}–{pauses_5_800_hi:.0f}"),
    Figure("fct_all", DOC, "mean FCT {fct_lo_ms:.2f}–{fct_hi_ms:.2f} ms over the 12 points"),
    Figure("fct_kmin", DOC, "with Kmax 200 KB and seed 1: {fct_kmin5_ms:.2f} ms at Kmin = 5 KB, "
           "{fct_kmin80_ms:.2f} ms at Kmin = 80 KB"),
]


def _points():
    import os

    from netsim.sweep import expand, load_sweep

    from . import ROOT
    return expand(load_sweep(os.path.join(ROOT, SWEEP)))


def measure() -> dict:
    """Every point's ECN marks, PFC pauses and mean FCT, reduced to the figures above."""
    cells: dict[tuple[int, int], list[dict]] = {}
    for p in _points():
        kmin = int(str(p.axes["set.ecn_kmin_bytes"]).removesuffix("KB"))
        kmax = int(str(p.axes["set.ecn_kmax_bytes"]).removesuffix("KB"))
        res = netsim(*p.argv)
        cells.setdefault((kmin, kmax), []).append({
            "seed": p.axes["seed"], "marks": res.summary["ecn_marks"], "pauses": res.summary["pfc_pauses"],
            "fct_ms": float(res.fct["fct_ns"].mean()) / 1e6})
    out = {}
    for (kmin, kmax), rows in cells.items():
        for key in ("marks", "pauses", "fct_ms"):
            vals = [r[key] for r in rows]
            name = key.removesuffix("_ms")
            out[f"{name}_{kmin}_{kmax}_lo"], out[f"{name}_{kmin}_{kmax}_hi"] = min(vals), max(vals)
    fcts = [r["fct_ms"] for rows in cells.values() for r in rows]
    out["fct_lo_ms"], out["fct_hi_ms"] = min(fcts), max(fcts)
    seed1 = {k: next(r for r in rows if r["seed"] == SEED) for k, rows in cells.items()}
    out["fct_kmin5_ms"], out["fct_kmin80_ms"] = seed1[(5, 200)]["fct_ms"], seed1[(80, 200)]["fct_ms"]
    return out
