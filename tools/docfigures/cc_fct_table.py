"""p50/p99 FCT by size bucket for every algorithm on an incast and a permutation (docs/congestion-control.md).

Scenario: ``topologies/leaf_spine_hosts.yaml`` (4 leaves × 4 hosts, 2 spines, 100 Gb/s, 1 µs;
2:1 oversubscribed), packet backend defaults (PFC on the RoCE priority; tcp algorithms on the
lossy one), seed 1. Two flow sets written by :func:`flow_rows` (each sender starts a 20 KB, a
500 KB and a 4 MB flow at t = 0):

* incast — h4..h11 to h0 (24 flows);
* permutation — every host hi to h(i+4 mod 16), the host on the next leaf (48 flows, all crossing
  the spines).

Measured per algorithm (none, cubic, dctcp, dcqcn, hpcc, swift, timely) and scenario: p50 and
p99 FCT (µs) of the small (< 100 KB) and the medium (100 KB–10 MB) flows, and the largest FCT.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np

from . import Figure
from ._run import netsim

SEED = 1
SLOW = True
DOC = "docs/congestion-control.md"
TOPO = "topologies/leaf_spine_hosts.yaml"
ALGOS = ("none", "cubic", "dctcp", "dcqcn", "hpcc", "swift", "timely")
SIZES = (20_000, 500_000, 4_000_000)
SCENARIOS = ("incast", "perm")


def flow_rows(scenario: str) -> list[str]:
    """CSV lines of the flow file of ``scenario``."""
    pairs = ([(f"h{i}", "h0") for i in range(4, 12)] if scenario == "incast"
             else [(f"h{i}", f"h{(i + 4) % 16}") for i in range(16)])
    return ["src,dst,size_bytes,start_ns"] + [f"{s},{d},{n},0" for s, d in pairs for n in SIZES]


def _row(cc: str) -> str:
    cells = " | ".join(f"{{{cc}_{sc}_small_p50:.1f}} / {{{cc}_{sc}_small_p99:.1f}} | "
                       f"{{{cc}_{sc}_mid_p50:.0f}} / {{{cc}_{sc}_mid_p99:.0f}}" for sc in SCENARIOS)
    return f"| `{cc}` | {cells} |"


FIGURES = [Figure(f"row_{cc}", DOC, _row(cc)) for cc in ALGOS]


def measure() -> dict:
    """Run 7 algorithms × 2 scenarios; FCT percentiles in µs."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sc in SCENARIOS:
            path = os.path.join(tmp, f"{sc}.csv")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(flow_rows(sc)) + "\n")
            for cc in ALGOS:
                res = netsim("flows", TOPO, path, "--cc", cc, "--seed", str(SEED))
                fct = res.fct
                us = fct["fct_ns"].to_numpy() / 1e3
                size = fct["size_bytes"].to_numpy()
                for name, sel in (("small", size < 100_000), ("mid", (size >= 100_000) & (size < 10_000_000))):
                    p50, p99 = np.percentile(us[sel], [50, 99])
                    out[f"{cc}_{sc}_{name}_p50"] = float(p50)
                    out[f"{cc}_{sc}_{name}_p99"] = float(p99)
    return out
