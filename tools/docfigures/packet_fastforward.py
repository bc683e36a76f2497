"""Packet fast-forward against fast-forward off (docs/packet.md, "Fast-forward").

Same runs with ``fast_forward`` off (the reference) and on, seed 0, packet
backend defaults: one 20 MB flow left0 -> right0 on ``topologies/dumbbell.yaml``
under ``none`` and DCTCP, a 16 -> 1 incast of 64 KB flows on one switch
(never steady), and one component skipped while another runs: h0 -> h1 of
5 MB on one switch while 30 flows h2 -> h3 of 64 KB start every 20 us
(``none``). Figures: events off / on and the largest relative FCT error (the
short flows': whether they are bit-identical to the reference).
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = False                   # about 3 s of CPU
#: FCT errors are ~1e-5 (whole segments at the measured rate): a rerun must stay within half again
TOLERANCE = {"none_err": 0.5, "dctcp_err": 0.5, "comp_err": 0.5}

FIGURES = [
    Figure("dumbbell", "docs/packet.md", "| dumbbell, one 20 MB flow (`none` / DCTCP) | {none_ratio:.1f}x / "
           "{dctcp_ratio:.1f}x | {none_err:.4%} / {dctcp_err:.4%} |"),
    Figure("incast", "docs/packet.md", "| incast 16 -> 1 of 64 KB (`none` / DCTCP) | {incast_none_ratio:.3f}x / "
           "{incast_dctcp_ratio:.3f}x (the detector's events) | 0 (no skip) |"),
    Figure("component", "docs/packet.md", "| one 5 MB flow skipped while 30 short flows run elsewhere (`none`) | "
           "{comp_ratio:.1f}x | {comp_err:.3%}; the short flows {comp_short_err:.0%} |"),
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
    flows = [("h0", "h1", 5_000_000, 0)] + [("h2", "h3", 64_000, 20_000 * i) for i in range(30)]
    out["comp_ratio"], _ = _pair(star(4), flows, "none")
    out["comp_err"], out["comp_short_err"] = _errors(star(4), flows, "none")
    return out


def _errors(graph, flows, cc) -> tuple:
    """(relative FCT error of flow 0, largest relative FCT error of the others) of on against off."""
    from pkt_helpers import run
    _b, off = run(graph, flows, cc=cc, seed=SEED)
    _b, on = run(graph, flows, cc=cc, seed=SEED, params={"fast_forward": True})
    rel = {i: abs(on[i].fct_ns - off[i].fct_ns) / off[i].fct_ns for i in off}
    return rel[0], max(v for i, v in rel.items() if i)
