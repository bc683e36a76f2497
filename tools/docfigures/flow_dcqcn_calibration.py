"""docs/flow-backend.md's DCQCN check: fluid DCQCN against packet DCQCN on the dumbbell (slow, ~15 s).

``tools/flow_calibrate.dcqcn_check``: N = 2, 4, 8 flows of 4 MB start
together across the dumbbell's 100 Gb/s bottleneck (seed 0, PFC on, nothing
fitted); efficiency = (N·wire/C) ÷ (last completion − λ) and CNPs per flow, on
the packet backend and on the flow backend's fluid DCQCN at model ticks of
1, 2, 5 and 10 µs — for the ``paper`` preset (SIGCOMM'15's law, the table the
doc has carried since 2026-11-29) and for the default ``hpcc`` preset at the
default 2 µs tick.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = True                    # 3 packet + 12 fluid runs (paper), 3 + 3 (hpcc): ~15 s unloaded
DOC = "docs/flow-backend.md"
NS = (2, 4, 8)
TICKS_US = (1, 2, 5, 10)


def _paper_row(n: int) -> str:
    ticks = " / ".join(f"{{paper_flow_eff_{n}_t{t}:.3f}}" for t in TICKS_US)
    return (f"| {n} | {{paper_packet_eff_{n}:.3f}} | {ticks} | {{paper_packet_cnps_{n}:.2f}} | "
            f"{{paper_flow_cnps_{n}:.1f}} |")


def _hpcc_row(n: int) -> str:
    return (f"| {n} | {{hpcc_packet_eff_{n}:.3f}} | {{hpcc_flow_eff_{n}:.3f}} | {{hpcc_packet_cnps_{n}:.2f}} | "
            f"{{hpcc_flow_cnps_{n}:.1f}} |")


FIGURES = ([Figure(f"paper_{n}", DOC, _paper_row(n)) for n in NS]
           + [Figure(f"hpcc_{n}", DOC, _hpcc_row(n)) for n in NS]
           + [Figure("calibration_row", DOC, "| dcqcn (`paper`) | {paper_packet_eff_2:.3f} | {paper_packet_eff_4:.3f} | "
                     "{paper_packet_eff_8:.3f} | not used: the fluid DCQCN law runs (fluid model "
                     "{paper_flow_eff_2_t2:.3f} / {paper_flow_eff_4_t2:.3f} / {paper_flow_eff_8_t2:.3f} at the 2 µs "
                     "tick); 1.00 with `flow_dynamic=off` | – | – | – |")])


def measure() -> dict:
    """Efficiencies and CNPs per flow of both presets on both backends."""
    from tools.flow_calibrate import dcqcn_check
    out = {}
    for row in dcqcn_check(ns=NS, ticks_ns=tuple(t * 1000 for t in TICKS_US), preset="paper"):
        n = row["n"]
        out[f"paper_packet_eff_{n}"] = row["packet_eff"]
        out[f"paper_packet_cnps_{n}"] = row["packet_cnps_per_flow"]
        for t in TICKS_US:
            out[f"paper_flow_eff_{n}_t{t}"] = row[f"flow_eff_tick{t}us"]
        cnps = {row[f"flow_cnps_per_flow_tick{t}us"] for t in TICKS_US}
        if len(cnps) != 1:
            raise RuntimeError(f"flow_dcqcn_calibration: the fluid CNPs per flow at N={n} depend on the tick: {cnps}")
        out[f"paper_flow_cnps_{n}"] = cnps.pop()
    for row in dcqcn_check(ns=NS, ticks_ns=(2_000,)):
        n = row["n"]
        out.update({f"hpcc_packet_eff_{n}": row["packet_eff"], f"hpcc_flow_eff_{n}": row["flow_eff_tick2us"],
                    f"hpcc_packet_cnps_{n}": row["packet_cnps_per_flow"],
                    f"hpcc_flow_cnps_{n}": row["flow_cnps_per_flow_tick2us"]})
    return out
