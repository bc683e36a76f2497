"""The event scheduler beneath the backends: the one place in netsim that knows SimPy's internals.

The packet backend runs millions of events, nearly all of them its own:
a link delivering the packet at the head of its pipe, a port whose wire
becomes free, a flow's pacing or retransmit tick, a PFC frame taking effect,
a sampler. None of them is a :class:`simpy.Event`: each is a *source* — a
small object with ``callbacks`` (a tuple, ``(handler, drive)``) and
``_ok = True`` — pushed straight onto SimPy's event heap, at most one entry
per pending source, in the heap's own entry layout ``(time_ps, NORMAL,
event id, source)``. SimPy's ``step()`` then pops it like any event: same
order (time, priority, insertion id), same clock.

:class:`Scheduler` owns that fast path (in the spirit of htsim's EventList):

* :attr:`Scheduler.heap` / :attr:`Scheduler.ids` — SimPy's heap and id
  counter, the only private SimPy state the backend uses, taken here once.
  :meth:`Scheduler.schedule` pushes a source; the per-packet paths of
  ``port.py`` and ``transport/flow.py`` inline exactly that push
  (``heappush(heap, (at_ps, NORMAL, next(ids), source))``), since a method
  call per packet-hop costs several per cent of the simulator's speed;
* :meth:`Scheduler.drive` — the drive loop (see there);
* reschedule and cancel are the sources' own bookkeeping: a port has at most
  one wake-up pending (``wake_pending``), a flow one pacing tick
  (``pace_ev``); a retransmit timer that is re-armed later or stopped stays
  in the heap and, when it fires, finds it is stale (its deadline moved) and
  does nothing — cancelling lazily, as removing a heap entry would cost a
  heap rebuild;
* :meth:`Scheduler.events_scheduled` — SimPy's count of scheduled events;
* :meth:`Scheduler.shift_network` / :meth:`Scheduler.next_foreign_ps` — the
  fast-forward's view: network events (sources) versus the rest (SimPy events).

* :func:`events_scheduled` — the same count for any environment (the runtime's
  ``sim_events`` of every backend).

Time is read through SimPy's public ``env.now`` everywhere else.

Left out: SimPy's event states (a source cannot be yielded on or failed),
interrupts, priorities other than NORMAL.
"""
from __future__ import annotations

from heapq import heapify, heappop, heappush

#: SimPy's priority of ordinary events (``simpy.events.NORMAL``); every source uses it
NORMAL = 1
#: network events :meth:`Scheduler.drive` runs per call before handing back to SimPy
_BUDGET = range(64)


class Scheduler:
    """SimPy fast path of one packet network (see module docstring).

    Parameters
    ----------
    env : simpy.Environment
        The simulation's environment; its heap, id counter and clock are used directly.
    """

    __slots__ = ("env", "heap", "ids", "drive_cb")

    def __init__(self, env):
        self.env = env
        self.heap = env._queue
        self.ids = env._eid
        #: the bound method every hot source carries last in its callbacks (see :meth:`drive`)
        self.drive_cb = self.drive

    def schedule(self, at_ps: int, source) -> None:
        """Make ``source`` fire at ``at_ps`` (its ``callbacks`` must be set); one heap entry."""
        heappush(self.heap, (at_ps, NORMAL, next(self.ids), source))

    def shift_network(self, delta_ps: int, owned=None) -> None:
        """Move every pending *network* event ``delta_ps`` later (the fast-forward jump, :mod:`.fastforward`).

        The tag of a network event is that it is a source, not a :class:`simpy.Event`:
        processes, timeouts and completion events (compute, the flow starter,
        what-ifs, ``run(until=...)``) keep their times. A source's own ``at``
        (flow timers and pacing ticks) moves with its entry, once per source.
        """
        from simpy.events import Event
        hq = self.heap
        moved = set()
        out = []
        for item in hq:
            ev = item[3]
            if isinstance(ev, Event) or (owned is not None and not owned(ev)):
                out.append(item)
                continue
            at = getattr(ev, "at", None)
            if at is not None and id(ev) not in moved:
                moved.add(id(ev))
                ev.at = at + delta_ps
            out.append((item[0] + delta_ps, item[1], item[2], ev))
        hq[:] = out
        heapify(hq)

    def next_foreign_ps(self):
        """Time (ps) of the earliest pending event that is not the network's (``None`` if there is none)."""
        from simpy.events import Event
        return min((item[0] for item in self.heap if isinstance(item[3], Event)), default=None)

    def events_scheduled(self) -> int:
        """Events SimPy has scheduled so far (its id counter; 0 if it cannot be read)."""
        try:
            return self.ids.__reduce__()[1][0]
        except Exception:  # pragma: no cover - CPython implementation detail
            return 0

    def drive(self, _ev) -> None:
        """Run the network's own events straight from SimPy's heap, as ``env.step()`` would.

        A packet arrival or port wake-up carries ``(handler, drive)`` as its
        callbacks. SimPy's ``step()`` pops it and calls ``handler`` and then
        this; here the following events are popped and handled in a tight
        loop for as long as the earliest one is again such a network event:
        the same order (heap order: time, priority, insertion id), the same
        clock update, minus SimPy's per-event call overhead. Any other event
        at the top (a process, a completion event, ``run(until=...)``'s stop
        event) ends the loop and SimPy takes over again, so interleaving with
        the rest of the simulation is unchanged. At most 64 events per call,
        so loops that count ``env.step()`` calls (the progress line) go on.
        """
        hq = self.heap
        env = self.env
        me = self.drive_cb
        for _ in _BUDGET:   # then back to SimPy for a moment, so step()-counting loops (progress) keep ticking
            if not hq:
                return
            at, _, _, ev = hq[0]
            cbs = ev.callbacks
            if cbs.__class__ is not tuple or cbs[-1] is not me:
                return
            heappop(hq)
            env._now = at
            ev.callbacks = None
            cbs[0](ev)


def events_scheduled(env) -> int | None:
    """Events SimPy has scheduled so far in ``env`` (its id counter), ``None`` if it cannot be read.

    Reads the counter without advancing it.
    """
    try:
        return env._eid.__reduce__()[1][0]
    except Exception:  # pragma: no cover - CPython/SimPy implementation detail
        return None
