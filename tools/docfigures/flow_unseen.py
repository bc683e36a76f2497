"""docs/flow-backend.md's "known gaps" figures on topologies the agreement tests do not cover (slow).

The runs of ``tests/validation/test_unseen_topologies.py`` (seed 0):
``gpt-1.5b-t2p2d2-small`` with ``compute.gpu=h100`` on 8 one-GPU servers
with mixed 400/200/100 Gb/s RoCE NICs, packet vs flow backend: how much
shorter the flow backend's iteration is (``--cc none`` and ``--cc dcqcn``)
and the PFC pauses of the ``none`` packet run; and ZeRO-3 (dp 4, pp 1) on
two GPUs per NIC (``RAIL2x4``) with Cubic: the flow backend's excess.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = True
DOC = "docs/flow-backend.md"

FIGURES = [
    Figure("mixed_none", DOC, "({mixed_none_pauses:,.0f} pauses,"),
    Figure("mixed_gap", DOC, "the flow backend's iteration is {mixed_none_flow_shorter_pct:.1f} % shorter "
           "(DCQCN on the same: {mixed_dcqcn_flow_shorter_pct:.1f} % shorter)"),
    Figure("zero3", DOC, "+{zero3_cubic_flow_excess_pct:.1f} % for Cubic and DCTCP"),
]


def _unseen():
    path = os.path.join(ROOT, "tests", "validation")
    if path not in sys.path:
        sys.path.insert(0, path)
    import test_unseen_topologies
    return test_unseen_topologies


def measure() -> dict:
    """Packet-over-flow excess in %, PFC pauses; flow-over-packet excess of the ZeRO-3 Cubic run in %."""
    from netsim.runtime import run_training
    u = _unseen()
    out = {}
    for cc in ("none", "dcqcn"):
        runs = {b: run_training(u.MIXED_NICS, u.SMALL_GPT, backend=b, cc=cc, seed=SEED, progress=False,
                                workload_overrides=u.H100) for b in ("packet", "flow")}
        flow_over_packet = runs["flow"]["iteration_time_s"] / runs["packet"]["iteration_time_s"]
        out[f"mixed_{cc}_flow_shorter_pct"] = (1 - flow_over_packet) * 100
        if cc == "none":
            out["mixed_none_pauses"] = runs["packet"]["network"]["pfc_pauses"]
    out["zero3_cubic_flow_excess_pct"] = u._gap(u.RAIL2x4, "cubic", u.ZERO3) * 100
    return out
