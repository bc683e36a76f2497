"""Fluid completions of the flow backend: the completion timer and what a departure changes.

One SimPy timer is pending for the backend: the earliest fluid completion
(heap of ``(finish_ps, flow id, version, flow)``; stale versions are skipped,
ties go in flow-id order). At a completion the flow leaves its links, its
record is written, its event fires ``latency`` later, and only links that
held another flow back are marked for recomputation (:func:`_may_gain`).

Left out: the receiver side (a flow is done when its last byte has left the
sender plus its latency term), ACKs, reordering.
"""
from __future__ import annotations

import heapq
import math

from ...records import FlowRecord
from ...units import PS_PER_NS
from .components import SOLO_TOL, FluidFlow


def _may_gain(users: dict, cap_bytes_per_ps: float, gone: FluidFlow) -> bool:
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


class CompletionsMixin:
    """Completion timer and departures of :class:`~.backend.FlowBackend`."""

    def _ensure_timer(self) -> None:
        heap = self._heap
        while heap and heap[0][2] != heap[0][3].ver:
            heapq.heappop(heap)
        if not heap:
            return
        top = heap[0][0]
        timers = self._timers
        if top in timers or (timers and min(timers) <= top):
            return
        timers.add(top)
        self.env.timeout(top - self.env.now).callbacks.append(self._on_timer)

    def _on_timer(self, _ev) -> None:
        env = self.env
        now = env.now
        self._timers.discard(now)
        self.events += 1
        heap = self._heap
        users = self._users
        cap = self._cap
        dirty = self._dirty
        sink = self.sink
        done_any = False
        while heap and heap[0][0] <= now:
            _, _, ver, f = heapq.heappop(heap)
            if ver != f.ver:
                continue
            f.ver = -1
            done_any = True
            fid = f.fid
            if f.rp is not None:
                self.dcqcn.release(f)
            for l in f.links:
                u = users[l]
                del u[fid]
                # a link left empty changes nobody's rate, nor one that holds none of
                # its other flows back (each at its solo rate or limited elsewhere)
                if u and _may_gain(u, cap[l], f):
                    dirty.add(l)
            self._active -= 1
            end_ps = now + int(f.lat_ps + 0.5)
            start_ns = (f.start_ps + 500) // PS_PER_NS
            end_ns = (end_ps + 500) // PS_PER_NS
            ideal = int(f.ideal_ns + 0.5)
            fct = end_ns - start_ns
            t = f.tag
            rec = FlowRecord(fid, f.src, f.dst, f.size, start_ns, end_ns, fct, ideal,
                             round(fct / ideal, 6) if ideal > 0 else math.nan, t.tag, f.cc, f.prio,
                             0, 0, 0, 0, 0, t.iteration, t.op, t.group, t.collective, t.step,
                             t.group_kind, t.job)
            self.n_completed += 1
            self.bytes_delivered += f.size
            if sink is not None:
                sink.add(rec)
            ev = f.event
            ev._ok = True          # succeed later than now: the latency term
            ev._value = rec
            env.schedule(ev, delay=end_ps - now)
            f.event = None
        if done_any:
            self.completion_instants += 1
            # also when nothing is dirty: the next timer is set at the settle
            if not self._settle_pending and env.peek() > now:
                self._settle(None)   # nothing else happens at this instant: settle now
            else:
                self._request_settle()
        else:
            self._ensure_timer()
