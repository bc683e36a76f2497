"""What a fluid completion changes: which links need a new solve, and the delivery of records.

At a completion instant (:func:`complete_due`, the fluid network's timer) the flow leaves its
links, and only links that held another flow back are marked for
recomputation (:func:`may_gain`); its :class:`~netsim.records.FlowRecord` is
built there, delivered ``latency`` after the fluid completion: counted and
written to ``fct.csv`` then, never ahead of the clock (:class:`Deliveries`).

Left out: the receiver side (a flow is done when its last byte has left the
sender plus its latency term), ACKs, reordering, retransmissions (the record's
drop and retransmit counters are zero).
"""
from __future__ import annotations

import heapq
import math
from functools import partial
from math import nan
from operator import attrgetter

import simpy
from simpy.events import NORMAL

from ...records import FlowRecord
from ...units import PS_PER_NS
from .batch import ArrivalGroup, group_arrival
from .components import SOLO_TOL, FluidFlow
from .newflow import SOLO

_fid = attrgetter("fid")


class Deliveries:
    """Completed flows' records, counted (``n_completed``, ``bytes_delivered``) and given to
    ``sink`` (``None``: none kept) when delivered, never ahead of the clock.

    One callback per delivery time and completion instant (:meth:`batch`), the first of the
    first flow event scheduled for that time, so it runs before any of those events is
    processed: records go to the sink in the order of those events (the order of delivery).
    """

    __slots__ = ("env", "sink", "n_completed", "bytes_delivered", "last_ps", "slowdowns")

    def __init__(self, env: simpy.Environment, sink):
        self.env = env
        self.sink = sink
        self.n_completed = 0
        self.bytes_delivered = 0
        self.last_ps = 0           # when the last record was delivered (summary sim_time_ns)
        #: ``(fct_ns, ideal_fct_ns)`` -> the record's slowdown (``round(fct / ideal, 6)``, a pure
        #: function of the two, and ~0.5 µs a call): a step's flows repeat a few thousand pairs
        self.slowdowns: dict[tuple[int, int], float] = {}

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
            sink.add_many(recs)          # netsim.sinks.Sink: a TeeSink takes them in one call
        self.n_completed += len(recs)
        self.bytes_delivered += nbytes
        if recs:
            self.last_ps = self.env.now
        recs.clear()     # delivered: a record lives on only where its flow's receiver keeps it


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


#: most ``(fct, ideal)`` pairs :attr:`Deliveries.slowdowns` keeps (emptied when full)
SLOWDOWN_MEMO = 1 << 16


def _slowdown(memo: dict, fct_ns: int, ideal_ns: int) -> float:
    """A record's slowdown, ``fct_ns / ideal_ns`` rounded to 6 decimals (NaN for no ideal), kept in ``memo``."""
    if len(memo) >= SLOWDOWN_MEMO:
        memo.clear()
    slow = memo[(fct_ns, ideal_ns)] = round(fct_ns / ideal_ns, 6) if ideal_ns > 0 else nan
    return slow


def _due(times: list, due: dict, now: int):
    """The flows whose fluid completion is ``now`` (ps), earliest time first, each time's in flow-id
    order, each marked completed (``ver`` -1) as it is yielded; a time's stale entries (the flow has
    another finish since, or has completed) are skipped. A time's list stays in ``due`` until its
    last flow is done, as the timer check (:meth:`.FluidNetwork._ensure_timer`) sees it meanwhile."""
    while times and times[0] <= now:
        t = times[0]
        at = due[t]
        if len(at) > 1:
            at.sort(key=_fid)
        for f in at:          # not changed meanwhile: no push is at or before now, no stale prefix cut
            if f.finish == t and f.ver != -1:
                f.ver = -1
                yield f
        if times and times[0] == t:      # (the timer check drops a time with no live flow left itself)
            heapq.heappop(times)
            del due[t]


def complete_due(net) -> None:
    """Complete, now, the flows of fluid network ``net`` whose completion time (ps) has come: take them
    off their links (marking the links where another flow may gain), build their records and
    schedule each delivery the latency term later (a batch flow's in its delivery time's
    :class:`~.batch.ArrivalGroup`), and settle the instant; else set the next timer."""
    env = net.env
    now = env.now
    timers = net._timers
    timers.discard(now)
    net._first_timer = min(timers) if timers else math.inf
    net.events += 1
    users = net.users
    cap = net.capacity
    dirty = net._dirty
    schedule = env.schedule
    batches: dict[int, list] = {}     # delivery time (ps) -> records delivered then
    batch = net.delivered.batch
    slowdowns = net.delivered.slowdowns
    last_end, recs = -1, None
    groups: dict[int, ArrivalGroup] = {}   # delivery time (ps) -> its open group of batch flows
    done_any = False
    drained = net.on_drained
    for f in _due(net._times, net._due, now):
        done_any = True
        fid = f.fid
        if f.ctl is not None:
            groups.clear()                   # what the release schedules keeps its place
            f.ctl.release(f)
        for l in f.links:
            u = users[l]
            del u[fid]
            # a link left empty changes nobody's rate, nor one that holds none of
            # its other flows back (each at its solo rate or limited elsewhere)
            if u and may_gain(u, cap[l], f):
                dirty.add(l)
        net.active -= 1
        # delivered the latency term later; ns rounded half up, slowdown to 6 decimals, packet counters 0
        end_ps = now + int(f.lat_ps + 0.5)
        start_ns, end_ns, ideal = (f.start_ps + 500) // PS_PER_NS, (end_ps + 500) // PS_PER_NS, int(f.ideal_ns + 0.5)
        fct, t = end_ns - start_ns, f.tag
        slow = slowdowns.get((fct, ideal))
        if slow is None:
            slow = _slowdown(slowdowns, fct, ideal)
        rec = FlowRecord(fid, f.src, f.dst, f.size, start_ns, end_ns, fct, ideal, slow, t.tag, f.cc, f.prio,
                         0, 0, 0, 0, 0, t.iteration, t.op, t.group, t.collective, t.step, t.group_kind, t.job, f.key)
        ev = f.event
        f.event = None
        if f.bkey is not SOLO:     # a send_batch flow (ev: its callback): joins its delivery time's group
            group = groups.get(end_ps)
            if group is None:
                group = group_arrival(env, groups, ev, f.bkey, rec, end_ps)
            else:                  # group_arrival, inline
                group.callbacks_of.append(ev)
                group.keys.append(f.bkey)
                group.records.append(rec)
            ev = group
        else:
            if groups:
                groups.pop(end_ps, None)     # later batch flows of this time come after this event
            ev._ok = True          # succeed later than now: the latency term
            ev._value = rec
            schedule(ev, NORMAL, end_ps - now)
        if end_ps != last_end:   # one delivery per delivery time, by the first of these flows' events
            last_end, recs = end_ps, batches.get(end_ps)
            if recs is None:
                recs = batches[end_ps] = batch(ev)
        recs.append(rec)
        if drained is not None:
            drained(f)
    if done_any:
        net.completion_instants += 1
        # also when nothing is dirty: the next timer is set at the settle
        if not net._settle_pending and env.peek() > now:
            net._settle(None)   # nothing else happens at this instant: settle now
        else:
            net.request_settle()
    else:
        net._ensure_timer()
