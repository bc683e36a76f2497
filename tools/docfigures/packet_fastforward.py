"""Packet fast-forward against fast-forward off (docs/packet.md, "Fast-forward").

Same runs with ``fast_forward`` off (the reference) and on, seed 0, packet
backend defaults: one 20 MB flow left0 -> right0 on ``topologies/dumbbell.yaml``
under ``none`` and DCTCP, and a 16 -> 1 incast of 64 KB flows on one switch
(never steady). Figures: events off / on and the largest relative FCT error.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = False                   # about 3 s of CPU
#: FCT errors are ~1e-5 (whole segments at the measured rate): a rerun must stay within half again
TOLERANCE = {"none_err": 0.5, "dctcp_err": 0.5}

FIGURES = [
    Figure("dumbbell", "docs/packet.md", "| dumbbell, one 20 MB flow (`none` / DCTCP) | {none_ratio:.1f}x / "
           "{dctcp_ratio:.1f}x | {none_err:.4%} / {dctcp_err:.4%} |"),
    Figure("incast", "docs/packet.md", "| incast 16 -> 1 of 64 KB (`none` / DCTCP) | {incast_none_ratio:.3f}x / "
           "{incast_dctcp_ratio:.3f}x (the detector's events) | 0 (no skip) |"),
]


def _pair(graph, flows, cc) -> tuple:
    """(events off / events on, largest relative FCT error of on against off)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "packet"))
    from pkt_helpers import run
    be_off, off = run(graph, flows, cc=cc, seed=SEED)
    be_on, on = run(graph, flows, cc=cc, seed=SEED, params={"fast_forward": True})
    err = max(abs(on[i].fct_ns - off[i].fct_ns) / off[i].fct_ns for i in off)
    return be_off.stats()["events"] / be_on.stats()["events"], err


def measure() -> dict:
    from netsim.topology import load_topology
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "packet"))
    from pkt_helpers import star
    db = load_topology(os.path.join(ROOT, "topologies", "dumbbell.yaml"))
    out = {}
    for cc in ("none", "dctcp"):
        out[f"{cc}_ratio"], out[f"{cc}_err"] = _pair(db, [("left0", "right0", 20_000_000, 0)], cc)
        out[f"incast_{cc}_ratio"], _ = _pair(star(17), [(f"h{i}", "h16", 64_000, 0) for i in range(16)], cc)
    return out
