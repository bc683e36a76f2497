"""docs/flow-backend.md's DCQCN trace agreement: fluid queues and PFC pauses against the packet backend.

The runs of ``tests/validation/test_flow_dcqcn_traces.py`` (16-to-1 incast of
1 MB flows from ``tests/validation/flow_scenarios.py``, DCQCN ``paper``
preset, PFC on, seed 0), on both backends: the largest relative difference of
a port's peak queue among the ports whose packet-backend peak is ≥ 100 KB,
two of those peaks in KB, the paused links of each backend, and pause frames.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0                       # the backends' default seed (the test does not set one)
SLOW = False                   # one incast on each backend: under a second of CPU unloaded
DOC = "docs/flow-backend.md"
BIG_BYTES = 100_000            # the test's threshold for a port whose peak is compared

FIGURES = [
    Figure("traces", DOC, "every port's peak queue within {peak_max_err_pct:.1f} % (e.g. leaf0→h0 "
           "{leaf0_h0_flow_kb:.0f} vs {leaf0_h0_packet_kb:.0f} KB, spine1→leaf0 {spine1_leaf0_flow_kb:.0f} vs "
           "{spine1_leaf0_packet_kb:,.0f} KB), {flow_paused_links:.0f} of the packet backend's "
           "{packet_paused_links:.0f} paused links paused and no other, {flow_pauses:.0f} pause frames against "
           "{packet_pauses:.0f}."),
]


def measure() -> dict:
    """Peak-queue agreement, KB, paused-link and pause-frame counts."""
    path = os.path.join(ROOT, "tests", "validation")
    if path not in sys.path:
        sys.path.insert(0, path)
    import test_flow_dcqcn_traces as traces
    from flow_scenarios import incast
    sc = incast(16, 1_000_000)
    fpeak, fpaused, frows = traces._run("flow", sc)
    ppeak, ppaused, prows = traces._run("packet", sc)
    if not fpaused <= ppaused:
        raise RuntimeError(f"flow_dcqcn_traces: the flow backend paused links the packet one did not: "
                           f"{sorted(fpaused - ppaused)}")
    big = {k: v for k, v in ppeak.items() if v >= BIG_BYTES}
    return {"peak_max_err_pct": max(abs(fpeak.get(k, 0) - v) / v for k, v in big.items()) * 100,
            "leaf0_h0_flow_kb": fpeak[("leaf0", "h0")] / 1e3, "leaf0_h0_packet_kb": ppeak[("leaf0", "h0")] / 1e3,
            "spine1_leaf0_flow_kb": fpeak[("spine1", "leaf0")] / 1e3,
            "spine1_leaf0_packet_kb": ppeak[("spine1", "leaf0")] / 1e3,
            "flow_paused_links": len(fpaused), "packet_paused_links": len(ppaused),
            "flow_pauses": sum(1 for r in frows if r[4] == "pause"),
            "packet_pauses": sum(1 for r in prows if r[4] == "pause")}
