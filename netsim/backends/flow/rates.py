"""Rate updates of the flow backend: the settle of an instant, the solve, the new rates.

All changes of one instant (flow starts, completions, DCQCN cap changes, link
changes) mark links dirty or add fresh flows; one settle event at SimPy
priority :data:`SETTLE_PRIORITY` — after every normal event of the instant —
re-solves the components they touch (:mod:`.solver`) and gives their flows
their new rates: remaining bytes advanced at the old rate, completion times
rescheduled on the heap (ps, ties in flow-id order). A flow alone on all its
links starts at its solo rate at once, without a settle. Window-based
algorithms pay slow start at a flow's first rate when it is below the rate
its latency term was charged at.

Left out: rate changes between events (a flow's rate is constant between two
solves of its component), per-packet pacing.
"""
from __future__ import annotations

import heapq
import math
import time

import simpy

from .components import FluidFlow, HeldRates

#: a flow whose remaining wire bytes fall below this is complete (float drift guard)
EPS_BYTES = 1e-6
#: SimPy priority of the recomputation event: after SimPy's NORMAL (1) events of the same instant
SETTLE_PRIORITY = 2


class RatesMixin:
    """Settle, solve and rate update of :class:`~.backend.FlowBackend`."""

    def _start_alone(self, f: FluidFlow, now: int) -> None:
        """Start ``f``, alone on every link of its path, at its solo rate now, without a solve.

        Exact: its component is itself, whatever else changes at this instant
        (a later flow that joins one of its links re-solves both from their
        paths). Saves the settle event of the instant when nothing else changed.
        """
        f.rate = r = f.solo
        if f.ramp is not None:
            self._ramp_at(f, r)
        f.ver = 1
        f.finish = now + math.ceil(f.rem / r)
        heapq.heappush(self._heap, (f.finish, f.fid, 1, f))
        self.rate_updates += 1
        if not self._settle_pending:
            self._ensure_timer()

    # -- recomputation ----------------------------------------------------------
    def _request_settle(self) -> None:
        if not self._settle_pending:
            self._settle_pending = True
            ev = simpy.Event(self.env)
            ev._ok = True
            ev._value = None
            ev.callbacks.append(self._settle)
            # behind every normal-priority event of this instant (processes resuming, more
            # sends, completions): all same-instant changes share one recomputation
            self.env.schedule(ev, SETTLE_PRIORITY)

    def _settle(self, _ev) -> None:
        self._settle_pending = False
        self.events += 1
        dirty, self._dirty = self._dirty, set()
        if dirty or self._fresh:
            t0 = time.perf_counter()
            self._recompute(dirty)
            self.recompute_wall_s += time.perf_counter() - t0
        self._ensure_timer()

    def _recompute(self, dirty: set[int]) -> None:
        """Re-solve the components of the ``dirty`` links and of the flows started since the last call."""
        fresh, self._fresh = self._fresh, []
        comps = self.solver.components(dirty, fresh)
        if comps:
            self.recomputations += 1
            self._apply(comps, self.solver.solve_all(comps))

    def _apply(self, comps, rates_of) -> None:
        """Give every component of ``comps`` its new rates (``rates_of``, same order): advance
        remaining bytes to now at the old rate, reschedule the completions (ps) of changed flows."""
        now = self.env.now
        heap = self._heap
        push = heapq.heappush
        changed = 0
        for comp, rates in zip(comps, rates_of):
            if rates is None:            # a lone flow: its solo rate, nothing holds it back
                f = comp[0]
                f.held = False
                pairs = ((f, f.solo),)
            else:
                held = rates.__class__ is HeldRates
                pf = rates.port_fair
                for f in comp:
                    f.held = held
                    f.pf = pf
                pairs = zip(comp, rates)
            for f, r in pairs:
                old = f.rate
                if old == r:
                    continue
                if old > 0.0:
                    f.rem -= old * (now - f.t_upd)
                if f.ramp is not None and f.start_ps == now:
                    self._ramp_at(f, r)
                f.t_upd = now
                f.rate = r
                f.ver += 1
                rem = f.rem
                f.finish = now if rem <= EPS_BYTES else now + math.ceil(rem / r)
                # same-instant completions in flow-id order, whatever the order of the solves
                push(heap, (f.finish, f.fid, f.ver, f))
                changed += 1
        self.rate_updates += changed

    def _ramp_at(self, f: FluidFlow, rate: float) -> None:
        """Charge ``f``'s slow start at ``rate``, the rate it gets at its start instant, instead
        of the rate charged so far (first its path bottleneck and model cap; a later solve at
        the same instant replaces an earlier one): a window that doubles per RTT covers a
        smaller bandwidth-delay product in fewer rounds (two flows sharing a NIC each need
        half the window; a host-stack cap ends the ramp sooner too)."""
        ramp = f.ramp
        charged = ramp.charged
        if rate > ramp.top:
            rate = ramp.top         # never above the rate of the path and model
        if rate != charged:
            model, rtt = ramp.model, ramp.rtt_ps
            f.lat_ps += model.ramp_ps(f.rem, rate, rtt, f.mtu) - model.ramp_ps(f.rem, charged, rtt, f.mtu)
            ramp.charged = rate
