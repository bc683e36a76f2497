"""The fluid network of the flow backend: directed links, the flows on them, completions, events.

:class:`FluidNetwork` is one object (no mixins) that owns the dynamic state of
a flow-backend run:

* the directed links — ``capacity[l]`` (bytes/ps) and ``users[l]``, the
  active flows on link ``l`` (``{flow id: FluidFlow}``);
* the completions: flows by fluid completion time (``due[finish_ps]``, in push order;
  an entry whose flow has since been given another finish, or has completed, is stale and
  skipped), a heap of those times, and the one SimPy timer pending for the earliest time
  with a live entry; a time's flows complete in flow-id order;
* the changes of the current instant — *dirty* links and *fresh* flows — and
  the one settle event (SimPy priority :data:`SETTLE_PRIORITY`, after every
  normal event of the instant) that re-solves the components they touch
  through its rate solver (:class:`~.solver.ComponentSolver`, the strategy)
  and gives their flows their new rates (:meth:`FluidNetwork._apply`).

A flow alone on all its links starts at its solo rate at once, without a
settle. Rate controllers (:mod:`.controllers`) change rate caps, report links
through :meth:`FluidNetwork.mark_dirty` and schedule evaluations through
:meth:`FluidNetwork.call_at`. A flow's record is counted and written when it
is delivered (never ahead of the clock). Flow state is one numeric
:class:`~.components.FluidFlow` per flow (arrays later: issue 22).

Left out: rate changes between events (a flow's rate is constant between two
solves of its component), per-packet pacing, the receiver side (a flow is
done when its last byte has left the sender plus its latency term), ACKs.
"""
from __future__ import annotations

import heapq
import math
import time
from typing import Callable

import simpy

from .completions import Deliveries, complete_due
from .components import FluidFlow, HeldRates

#: a flow whose remaining wire bytes fall below this is complete (float drift guard)
EPS_BYTES = 1e-6
#: SimPy priority of the recomputation event: after SimPy's NORMAL (1) events of the same instant
SETTLE_PRIORITY = 2


class FluidNetwork:
    """Links, active flows, completion heap and events of one flow-backend run.

    ``env``: the SimPy environment; ``capacity``: directed-link capacities
    (bytes/ps, written by link changes); ``solver``: the rate-solver strategy
    (``components(dirty, fresh)`` and ``solve_all(comps)``; may be set after
    construction, as it is built over :attr:`users`, before the first flow); ``sink``: the
    ``fct.csv`` sink (``None``: no records kept).
    """

    #: start a flow alone on all its links at its solo rate at once, without a settle (exact);
    #: ``False`` makes every start wait for the settle and its solve (to test the shortcut)
    eager_start = True
    #: called with each flow at its fluid completion, ``None``: nobody listens (:mod:`.inorder`)
    on_drained = None

    def __init__(self, env: simpy.Environment, capacity: list[float], solver, sink):
        self.env = env
        self.capacity = capacity
        self.users: list[dict[int, FluidFlow]] = [dict() for _ in capacity]
        self.solver = solver
        self._due: dict[int, list[FluidFlow]] = {}   # finish time (ps) -> flows pushed for it
        self._times: list[int] = []                   # heap of the keys of _due
        self._dirty: set[int] = set()          # links whose flows' rates may have changed
        self._fresh: list[FluidFlow] = []       # flows started since the last recomputation
        self._settle_pending = False
        self._timers: set[int] = set()
        self._first_timer = math.inf            # min(self._timers): a finish at or after it needs no new timer
        self.active = 0
        self.max_active = 0
        #: completed flows' records, counted and written when delivered
        self.delivered = Deliveries(env, sink)
        self.events = 0
        self.recomputations = 0      # solves of changed components (a flow starting alone needs none)
        self.completion_instants = 0 # instants at which at least one flow completed
        self.rate_updates = 0        # flow rates set (a start counts one): the fluid model's work
        self.recompute_wall_s = 0.0

    # -- the interface of the backend and the rate controllers ------------------------
    def start(self, f: FluidFlow, now: int) -> None:
        """Put flow ``f`` (fields set by the backend) on its links at ``now`` (ps, the current
        time) and give it a rate.

        A flow alone on every link of its path starts at its solo rate at once,
        without a solve (:attr:`eager_start`). Exact: its component is itself,
        whatever else changes at this instant (a later flow that joins one of its
        links re-solves both from their paths). Saves the settle event of the
        instant when nothing else changed.
        """
        users = self.users
        fid = f.fid
        alone = f.rp is None
        for l in f.links:
            u = users[l]
            u[fid] = f
            if len(u) != 1:
                alone = False
        active = self.active = self.active + 1
        if active > self.max_active:
            self.max_active = active
        if alone and self.eager_start:
            f.rate = r = f.solo
            if f.ramp is not None:
                f.lat_ps += f.ramp.recharge(f.rem, r, f.mtu)
            f.ver = 1
            f.finish = finish = now + math.ceil(f.rem / r)
            due = self._due.get(finish)
            if due is None:
                self._due[finish] = [f]
                heapq.heappush(self._times, finish)
            else:
                due.append(f)
            self.rate_updates += 1
            if finish < self._first_timer and not self._settle_pending:
                self._ensure_timer()
        else:
            self._fresh.append(f)
            if not self._settle_pending:
                self.request_settle()

    def mark_dirty(self, links) -> None:
        """The rates of the flows on ``links`` may have changed (a cap or capacity changed):
        re-solve their components at this instant."""
        self._dirty.update(links)
        self.request_settle()

    def move(self, f: FluidFlow, links: tuple) -> None:
        """Move active flow ``f`` to ``links`` now (a reroute), marking old and new links dirty;
        its remaining bytes are advanced to now at its old rate first."""
        now = self.env.now
        if f.rate > 0.0:
            f.rem -= f.rate * (now - f.t_upd)
        f.t_upd = now
        users = self.users
        for l in f.links:
            del users[l][f.fid]
        self._dirty.update(f.links)
        f.links = links
        for l in links:
            users[l][f.fid] = f
        self._dirty.update(links)

    def call_at(self, t_ps: int, callback: Callable[[], None]) -> None:
        """Call ``callback()`` at simulated time ``t_ps`` (not before now), for rate controllers."""
        self.env.timeout(max(0, t_ps - self.env.now)).callbacks.append(lambda _ev: callback())

    def request_settle(self) -> None:
        """Schedule the settle of this instant (once), behind every normal event of it."""
        if not self._settle_pending:
            self._settle_pending = True
            ev = simpy.Event(self.env)
            ev._ok = True
            ev._value = None
            ev.callbacks.append(self._settle)
            # behind every normal-priority event of this instant (processes resuming, more
            # sends, completions): all same-instant changes share one recomputation
            self.env.schedule(ev, SETTLE_PRIORITY)

    def recompute(self) -> None:
        """Re-solve, now, the components of the dirty links and of the flows started since the
        last solve, and give their flows their new rates."""
        dirty, self._dirty = self._dirty, set()
        fresh, self._fresh = self._fresh, []
        comps = self.solver.components(dirty, fresh)
        if comps:
            self.recomputations += 1
            self._apply(comps, self.solver.solve_all(comps))

    # -- rates ----------------------------------------------------------------------
    def _settle(self, _ev) -> None:
        self._settle_pending = False
        self.events += 1
        if self._dirty or self._fresh:
            t0 = time.perf_counter()
            self.recompute()
            self.recompute_wall_s += time.perf_counter() - t0
        self._ensure_timer()

    def _apply(self, comps, rates_of) -> None:
        """Give every component of ``comps`` its new rates (``rates_of``, same order): advance
        remaining bytes to now at the old rate, reschedule the completions (ps) of changed flows."""
        now = self.env.now
        due, times = self._due, self._times
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
                    f.lat_ps += f.ramp.recharge(f.rem, r, f.mtu)
                f.t_upd = now
                f.rate = r
                f.ver += 1
                rem = f.rem
                f.finish = finish = now if rem <= EPS_BYTES else now + math.ceil(rem / r)
                # (same-instant completions go in flow-id order, whatever the order of the solves)
                at = due.get(finish)
                if at is None:
                    due[finish] = [f]
                    push(times, finish)
                else:
                    at.append(f)
                changed += 1
        self.rate_updates += changed

    # -- completions -----------------------------------------------------------------
    def _ensure_timer(self) -> None:
        times, due = self._times, self._due
        while times:                # drop the earliest times' stale entries, and times left with none
            t = times[0]
            at = due[t]
            stale = 0
            for f in at:
                if f.finish == t and f.ver != -1:     # live: its last push, not completed
                    break
                stale += 1
            else:
                heapq.heappop(times)
                del due[t]
                continue
            if stale and t > self.env.now:           # (a time now may be completing: left whole)
                del at[:stale]
            break
        if not times:
            return
        top = times[0]
        timers = self._timers
        if top in timers or (timers and min(timers) <= top):
            return
        timers.add(top)
        if top < self._first_timer:
            self._first_timer = top
        self.env.timeout(top - self.env.now).callbacks.append(self._on_timer)

    def _on_timer(self, _ev) -> None:
        complete_due(self)      # the flows whose fluid completion is now (completions.py)
