"""docs/flow-backend.md's pause-gate example: the flow and packet backends where no PFC pause happens.

``tests/trial/data7/mm.yaml`` (h0, h1 -- s1 -- s2 -- h2 at 100 Gb/s, h3 at 25 Gb/s, 1 us links) and
``hol3.csv`` (10 MB h0->h3 and h1->h2 at 0, 1 MB h1->h3 at 5 us): FCTs of the h1->h2 flow (f1) and the
1 MB flow (f2) on both backends under ``--cc none`` and ``hpcc``, and the packet backend's PFC pauses.
"""
from __future__ import annotations

from pathlib import Path as _Path

from . import Figure

SEED = 0
SLOW = True                    # four packet-level runs of 21 MB: about a minute
DOC = "docs/flow-backend.md"
_DATA = _Path(__file__).resolve().parents[2] / "tests" / "trial" / "data7"

FIGURES = [
    Figure("example", DOC, "now {flow_none_f1_ms:.3f} ms (the 1 MB flow {flow_none_f2_ms:.3f} ms, packet "
           "{packet_none_f1_ms:.3f} / {packet_none_f2_ms:.3f} ms, {packet_none_pauses:.0f} pauses); HPCC "
           "{flow_hpcc_f1_ms:.3f} / {flow_hpcc_f2_ms:.3f} ms (packet {packet_hpcc_f1_ms:.3f} / "
           "{packet_hpcc_f2_ms:.3f} ms, {packet_hpcc_pauses:.0f} start-up pauses)."),
]


def measure() -> dict:
    """FCTs in ms and pause counts."""
    from netsim.flowfile import load_flows
    from netsim.simulate import run_flows
    from netsim.topology import load_topology
    g = load_topology(str(_DATA / "mm.yaml"))
    flows = load_flows(str(_DATA / "hol3.csv"), g)
    out = {}
    for backend in ("flow", "packet"):
        for cc in ("none", "hpcc"):
            s = run_flows(g, flows, backend=backend, cc=cc, seed=SEED)
            fct = {r.flow_id: r.fct_ns for r in s["records"]}
            out[f"{backend}_{cc}_f1_ms"] = fct[1] / 1e6
            out[f"{backend}_{cc}_f2_ms"] = fct[2] / 1e6
            if backend == "packet":
                out[f"packet_{cc}_pauses"] = s["pfc_pauses"]
    return out
