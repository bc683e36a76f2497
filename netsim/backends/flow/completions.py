"""What a fluid completion changes: which links need a new solve, and the delivery of records.

At a completion (:meth:`.fluid.FluidNetwork._on_timer`) the flow leaves its
links, and only links that held another flow back are marked for
recomputation (:func:`may_gain`); its :class:`~netsim.records.FlowRecord` is
built there, delivered ``latency`` after the fluid completion: counted and
written to ``fct.csv`` then, never ahead of the clock (:class:`Deliveries`).

Left out: the receiver side (a flow is done when its last byte has left the
sender plus its latency term), ACKs, reordering, retransmissions (the record's
drop and retransmit counters are zero).
"""
from __future__ import annotations

from functools import partial

import simpy

from .components import SOLO_TOL, FluidFlow


class Deliveries:
    """Completed flows' records, counted (``n_completed``, ``bytes_delivered``) and given to
    ``sink`` (``None``: none kept) when delivered, never ahead of the clock.

    One callback per delivery time and completion instant (:meth:`batch`), the first of the
    first flow event scheduled for that time, so it runs before any of those events is
    processed: records go to the sink in the order of those events (the order of delivery).
    """

    __slots__ = ("env", "sink", "n_completed", "bytes_delivered", "last_ps")

    def __init__(self, env: simpy.Environment, sink):
        self.env = env
        self.sink = sink
        self.n_completed = 0
        self.bytes_delivered = 0
        self.last_ps = 0           # when the last record was delivered (summary sim_time_ns)

    def batch(self, first: simpy.Event) -> list:
        """The list of records to deliver with flow event ``first`` (the first of them to be
        scheduled, so the first processed), for the caller to fill now: written by ``first``'s
        first callback."""
        recs: list = []
        first.callbacks.insert(0, partial(self._deliver, recs))
        return recs

    def _deliver(self, recs: list, _ev) -> None:
        sink = self.sink
        nbytes = 0
        for rec in recs:
            nbytes += rec.size_bytes
            if sink is not None:
                sink.add(rec)
        self.n_completed += len(recs)
        self.bytes_delivered += nbytes
        if recs:
            self.last_ps = self.env.now


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
