"""DCQCN presets against no congestion control on the 8-to-1 incast of docs/congestion-control.md.

Scenario (the sweep example's base run): ``topologies/leaf_spine_hosts.yaml``
(100 Gb/s links, 1 µs), ``workloads/sweeps/incast_8to1.csv`` (h4..h11 send
2 MB each to h0 at t = 0), packet backend, PFC on, seed 1. Measured: mean FCT
for ``--cc none``, default DCQCN (= ``hpcc``) and the other presets by name, ECN marks and PFC
pauses of the default and of ``paper``, and the lowest rate a DCQCN sender
fell to (``cc.csv``).
"""
from __future__ import annotations

from . import Figure
from ._run import netsim

SEED = 1
SLOW = False
DOC = "docs/congestion-control.md"
BASE = ("flows", "topologies/leaf_spine_hosts.yaml", "workloads/sweeps/incast_8to1.csv",
        "--set", "pfc=true", "--seed", str(SEED))
#: run label -> extra arguments
RUNS = {"none": ("--cc", "none"), "default": ("--cc", "dcqcn"),
        "nvidia": ("--cc", "dcqcn", "--cc-param", "preset=nvidia"),
        "paper": ("--cc", "dcqcn", "--cc-param", "preset=paper")}

FIGURES = [
    Figure("table_none", DOC, "| `--cc none` | {none_fct_ms:.2f} ms | {none_pauses:.0f} | — | — |"),
    Figure("table_default", DOC, "| `--cc dcqcn` (default = `hpcc`) | {default_fct_ms:.2f} ms | "
           "{default_pauses:.0f} | {default_marks:.0f} | {default_min_rate_gbps:.2f} Gb/s |"),
    Figure("table_nvidia", DOC, "| `--cc-param preset=nvidia` | {nvidia_fct_ms:.2f} ms | {nvidia_pauses:.0f} | "
           "{nvidia_marks:.0f} | {nvidia_min_rate_gbps:.3f} Gb/s |"),
    Figure("table_paper", DOC, "| `--cc-param preset=paper` | {paper_fct_ms:.2f} ms | {paper_pauses:.0f} | "
           "{paper_marks:.0f} | {paper_min_rate_gbps:.2f} Gb/s |"),
    Figure("paper_ratio", DOC, "holds the incast {paper_vs_none:.1f}× longer than no congestion control"),
    Figure("default_ratio", DOC, "the default finishes {default_vs_none:.2f}× the no-CC mean"),
    Figure("sweep_reference", "docs/sweep.md", "(Kmin 400 KB, Kmax 1.6 MB at 100 Gb/s: {default_fct_ms:.2f} ms,"),
]


def measure() -> dict:
    """Run the five configurations; values in ms, Gb/s and counts."""
    out = {}
    for label, extra in RUNS.items():
        res = netsim(*BASE, *extra)
        out[f"{label}_fct_ms"] = float(res.fct["fct_ns"].mean()) / 1e6
        out[f"{label}_pauses"] = res.summary["pfc_pauses"]
        out[f"{label}_marks"] = res.summary["ecn_marks"]
        if label != "none":
            out[f"{label}_min_rate_gbps"] = float(res.cc["rate_bps"].min()) / 1e9
    out["paper_vs_none"] = out["paper_fct_ms"] / out["none_fct_ms"]
    out["default_vs_none"] = out["default_fct_ms"] / out["none_fct_ms"]
    return out
