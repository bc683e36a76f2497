"""What a fluid completion changes: which links need a new solve, and the flow's record.

At a completion (:meth:`.fluid.FluidNetwork._on_timer`) the flow leaves its
links, and only links that held another flow back are marked for
recomputation (:func:`may_gain`); its :class:`~netsim.records.FlowRecord` is
built by :func:`completion_record`, delivered ``latency`` after the fluid
completion.

Left out: the receiver side (a flow is done when its last byte has left the
sender plus its latency term), ACKs, reordering, retransmissions (the record's
drop and retransmit counters are zero).
"""
from __future__ import annotations

import math

from ...records import FlowRecord
from ...units import PS_PER_NS
from .components import SOLO_TOL, FluidFlow


def may_gain(users: dict, cap_bytes_per_ps: float, gone: FluidFlow) -> bool:
    """True when a flow of ``users`` (the flows left on a link of capacity ``cap_bytes_per_ps``
    after ``gone`` left it) could speed up: the link was saturated and held one of them back,
    or one is DCQCN-controlled, or sits in a component with a head-of-line pause.

    A flow is held back by a saturated link where it has the largest rate (max-min), or by
    any saturated link it shares (port fairness); at its solo rate (path bottleneck or
    cap) it has all it can get. Exact for max-min fairness: with every limiting link
    keeping its flows, the old rates are still the max-min rates. The rates read are
    those of the last solve (changes that skip a solve leave every limiting link as is).
    """
    load = gone.rate
    top = load
    eta = gone.eta
    for g in users.values():
        if g.rp is not None or g.held:
            return True
        r = g.rate
        load += r
        if r > top:
            top = r
        if g.eta < eta:
            eta = g.eta
    if load < cap_bytes_per_ps * eta * SOLO_TOL:
        return False                     # not saturated: it holds nobody back
    for g in users.values():
        r = g.rate
        if r < g.solo * SOLO_TOL and (g.pf or r >= top * SOLO_TOL):
            return True
    return False


def completion_record(f: FluidFlow, now_ps: int) -> tuple[FlowRecord, int]:
    """``(record, delivery time in ps)`` of flow ``f`` whose last byte left its sender at
    ``now_ps``: delivered its latency term later; times in ns rounded half up, the slowdown
    to 6 decimals (``nan`` for a zero ideal FCT)."""
    end_ps = now_ps + int(f.lat_ps + 0.5)
    start_ns = (f.start_ps + 500) // PS_PER_NS
    end_ns = (end_ps + 500) // PS_PER_NS
    ideal = int(f.ideal_ns + 0.5)
    fct = end_ns - start_ns
    t = f.tag
    # positional (the hot path): FlowRecord's fields in order, the five packet counters zero
    rec = FlowRecord(f.fid, f.src, f.dst, f.size, start_ns, end_ns, fct, ideal,
                     round(fct / ideal, 6) if ideal > 0 else math.nan, t.tag, f.cc, f.prio,
                     0, 0, 0, 0, 0, t.iteration, t.op, t.group, t.collective, t.step, t.group_kind, t.job)
    return rec, end_ps
