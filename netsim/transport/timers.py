"""The wake-ups a transport flow schedules: its retransmit timer, delayed-ACK and pacing ticks.

Modelled: one retransmit timer per flow (RFC 6298 §5: started when data is
sent with none running, restarted on an ACK of new data, stopped when all is
acknowledged); a deadline that moves later keeps the pending tick, which on
firing re-arms itself for the new deadline (one heap entry instead of one per
ACK); on expiry the flow backs the RTO off, gives up after ``max_timeouts``
consecutive expiries (RoCE ``retry_cnt`` / TCP ``tcp_retries2``) and
otherwise calls its ``on_timeout``. The ticks are their own SimPy events,
handled in line by the network scheduler's drive loop when it is their last
callback.

Left out: a timer per segment (one per flow, as Linux and RoCE NICs keep).
:class:`RetransmitTimer` is a mixin of :class:`~netsim.transport.flow.Flow`:
it uses the flow's ``rto``, ``rto_deadline``, ``timer_ev``, ``_sched``,
``_drive``, ``env``, ``net`` and its hooks.
"""
from __future__ import annotations

NORMAL = 1  # SimPy's NORMAL priority: the scheduler's entry layout (netsim.backends.packet.scheduler)


class _Tick:
    """A one-shot wake-up of a flow (retransmit timer or delayed ACK); it is its own SimPy event.

    With ``drive`` (the network scheduler's drive loop,
    :meth:`~netsim.backends.packet.scheduler.Scheduler.drive`) as its last
    callback the network's event loop handles it in line, like a port
    wake-up, instead of handing control back to SimPy's ``step()`` (same heap
    order, so the same simulation). It refers to its flow only while it is
    pending (through the bound method in ``callbacks``, which the event loop
    drops when it fires), so a finished flow is not kept alive by a cycle.
    """

    __slots__ = ("callbacks", "at")
    _ok = True

    def __init__(self, cb, at: int, drive=None):
        self.callbacks = (cb,) if drive is None else (cb, drive)
        self.at = at


class _PaceTick:
    """A flow's reusable pacing tick: at ``at`` (ps) it kicks the flow's NIC port.

    It holds its flow only while it is pending (``flow`` is cleared when it
    fires) and its callbacks are a module function, not a bound method: a
    flow and its tick form no reference cycle, so a finished flow is freed by
    reference counting at once (cyclic garbage waits for a full collection,
    which :mod:`netsim.gctune` makes rare).
    """

    __slots__ = ("callbacks", "at", "flow")
    _ok = True

    def __init__(self):
        self.callbacks = None
        self.at = 0
        self.flow = None


def _stale_tick(ev) -> None:
    """What a retransmit tick of a flow that has ended does when it fires: nothing."""


def _pace_fire(ev) -> None:
    """A pacing tick fired: the flow may send again; kick its port (through ``Port.kick``: the
    transport sees only the port's interface)."""
    flow = ev.flow
    ev.flow = None
    flow.pace_ev = None
    flow.port.kick(ev.at)


class RetransmitTimer:
    """The single retransmit timer of a flow (see module docstring)."""

    __slots__ = ()

    def arm_timer(self, now: int) -> None:
        """(Re)start the retransmit timer: fires ``rto`` after ``now`` unless re-armed or stopped."""
        deadline = now + self.rto.rto_ns * 1000
        self.rto_deadline = deadline
        ev = self.timer_ev
        if ev is None or ev.at > deadline:
            ev = self.timer_ev = _Tick(self._timer_fire, deadline, self._drive)
            self._sched.schedule(deadline, ev)

    def stop_timer(self) -> None:
        self.rto_deadline = None

    def _forget_timer(self) -> None:
        """The sender is done: its pending retransmit tick keeps its heap entry but no longer the flow.

        The tick would fire (up to an RTO later) only to find the flow done;
        with a no-op callback instead it still fires at the same instant
        (same event count and order) and the finished flow is freed now.
        """
        ev = self.timer_ev
        self.timer_ev = None
        if ev is not None and ev.callbacks is not None:
            ev.callbacks = (_stale_tick,) + ev.callbacks[1:]

    def _timer_fire(self, ev) -> None:
        if ev is not self.timer_ev:
            return  # superseded by an earlier deadline
        self.timer_ev = None
        deadline = self.rto_deadline
        if deadline is None or self.sender_done:
            return
        now = self.env.now
        if now < deadline:
            ev = self.timer_ev = _Tick(self._timer_fire, deadline, self._drive)
            self._sched.schedule(deadline, ev)
            return
        self.timeouts += 1
        self.consec_timeouts += 1
        if self.consec_timeouts > self.max_timeouts:
            self.sender_done = True  # give up (RoCE retry_cnt / TCP tcp_retries2 exhausted)
            self.failed = True
            self.rto_deadline = None
            self.net.flow_failed(self)
            return
        self.rto.backoff()
        self.on_timeout(now)
        self.arm_timer(now)
        self.wake_sender(now)
