"""docs/flow-backend.md's case for port fairness: the 16-to-1 incast under ``--cc none``.

``incast(16, 1_000_000)`` of ``tests/validation/flow_scenarios.py`` (16 × 1 MB
to one host through two spines, PFC on, seed 0): the earliest and latest
packet-backend completion (FCT, all flows start at 0), and the 95th
percentile of per-flow |flow − packet| / packet with the flow backend's
per-flow max-min (``flow_fairness=maxmin``) and with its default port
fairness.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "validation"))  # flow_scenarios

from . import Figure

SEED = 0
SLOW = False                   # three runs of a 16-flow incast: about 2 s of CPU
DOC = "docs/flow-backend.md"

FIGURES = [
    Figure("why", DOC, "flows finish between {packet_first_ms:.2f} and {packet_last_ms:.2f} ms; per-flow max-min "
           "says all at {maxmin_last_ms:.2f} ms (p95 error {maxmin_p95_pct:.0f} %); port fairness reproduces the "
           "spread (p95 error {port_p95_pct:.0f} %)."),
    Figure("reading", DOC, "on the incast it put every flow at {maxmin_last_ms:.2f} ms while the packet backend's "
           "finished between {packet_first_ms:.2f} and {packet_last_ms:.2f} ms (p95 error {maxmin_p95_pct:.0f} %)."),
]


def measure() -> dict:
    """Completion times in ms and p95 errors in %."""
    from flow_scenarios import compare_fct, incast, load_graph, run_flows_on
    sc = incast(16, 1_000_000)
    g = load_graph(sc.topology)
    packet = run_flows_on("packet", g, sc.flows, seed=SEED)[0]
    maxmin = run_flows_on("flow", g, sc.flows, params={"flow_fairness": "maxmin"}, seed=SEED)[0]
    port = run_flows_on("flow", g, sc.flows, seed=SEED)[0]
    fct = sorted(r.fct_ns for r in packet)
    return {"packet_first_ms": fct[0] / 1e6, "packet_last_ms": fct[-1] / 1e6,
            "maxmin_last_ms": max(r.fct_ns for r in maxmin) / 1e6,
            "maxmin_p95_pct": compare_fct(maxmin, packet)["p95_rel_err"] * 100,
            "port_p95_pct": compare_fct(port, packet)["p95_rel_err"] * 100}
