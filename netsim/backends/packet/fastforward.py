"""Steady-state fast-forward of the packet network (``--fast-forward on``; issue #21, first case).

What is modelled. A detector (a network event of its own, every
``W = DETECT_WINDOW_RTTS`` x the largest base RTT of the active flows) takes
a snapshot of every active flow's in-order delivered bytes and of every
port's queue and counters. The network is *steady* when, over the last
``STEADY_WINDOWS`` to ``MAX_HISTORY_WINDOWS`` windows with an unchanged set
of flows, every flow delivered bytes in every window and the mean of its
window deliveries (its rate) is known within ``fast_forward_tolerance``
(standard error of the mean; first and second half of the windows agree
within twice that), and no port's queue drifted by more than the tolerance
x the bytes it sent plus one MTU. It then jumps
``dt``: up to ``MARGIN_WINDOWS`` windows before the earliest flow would end
at its measured rate, and no later than the next event that is not the
network's (a flow start, a compute completion, a what-if, ``until``), so
nothing outside the network sees a frozen state. The jump
(:func:`.ffstate.jump`):

* shifts every pending network event and every absolute time held in the
  network's state (ports, packets on wires and in queues, flow timers and
  pacing) by ``dt`` (:meth:`.scheduler.Scheduler.shift_network`) — events
  that are not the network's (SimPy events: processes, timeouts, flow
  completions) keep their times;
* advances each flow's sequence space by ``rate x dt`` in whole segments
  (sender, receiver, and the packets of the flow in flight), so the flow
  ends ``dt`` later in simulated time having sent those segments unsimulated;
* advances port counters (packets, bytes, ECN marks) and flow counters (ECN
  marks, CNPs) at their measured rates.

Packet simulation resumes from the shifted state. Only deterministic cases
are skipped: every active flow uses ``none`` or DCTCP (step marking, no
random draw), no link is lossy, no spraying, no port is paused and no PFC
pause happened in the windows, no retransmission or timeout in the windows,
no Jain window; otherwise the detector only watches.

Left out: per connected component skipping (the whole network is one
component here: every active flow must be steady), limit cycles (DCQCN,
Cubic: averages over whole cycles), advancing pauses and CNPs at rates,
marking skipped intervals in the traces, exact memoisation of repeated
iterations.
"""
from __future__ import annotations

from collections import deque

from ...units import PS_PER_NS
from . import ffcycles, ffstate

#: detection window in base RTTs of the slowest active flow (netsim choice: short enough that detection and
#: margin stay a few per cent of a 5 ms ring step; a rate that wobbles between windows is averaged over up to
#: MAX_HISTORY_WINDOWS of them; issue #21 asks for stability "over several RTTs")
DETECT_WINDOW_RTTS = 4
#: fewest consecutive windows the steadiness test looks at (netsim choice, issue #21: "several")
STEADY_WINDOWS = ffcycles.FIXED_WINDOWS
#: most windows kept: a limit cycle up to a third of this long can be tested over 3 whole cycles
#: (netsim choice: 512 windows of 4 RTTs of 8 us hold DCQCN's ~1 ms cycle three times over)
MAX_HISTORY_WINDOWS = 512
#: windows of packet simulation kept before the earliest flow end (issue #21: "minus a few RTTs")
MARGIN_WINDOWS = 2
#: a jump shorter than this many windows is not worth the state shift (netsim choice)
MIN_JUMP_WINDOWS = 2


class FastForward:
    """The detector and jump of one packet backend (see module docstring).

    Parameters
    ----------
    backend : PacketBackend
        The backend whose network it watches; its ``params`` give ``fast_forward_tolerance``.
    """

    __slots__ = ("callbacks", "be", "net", "tol", "cycle_tol", "hist", "running", "period_ps", "skips",
                 "skipped_ps", "skipped_packets", "eligible_net", "intervals")
    _ok = True

    def __init__(self, backend):
        self.callbacks = None
        self.be = backend
        self.net = backend.net
        self.tol = float(backend.params["fast_forward_tolerance"])
        self.cycle_tol = float(backend.params["fast_forward_cycle_tolerance"])
        self.hist: deque = deque(maxlen=MAX_HISTORY_WINDOWS + 1)
        self.running = False
        self.period_ps = 0
        self.skips = 0
        self.skipped_ps = 0
        self.skipped_packets = 0
        #: (from_ps, to_ps) of every jump: the network was frozen from ``from_ps`` and resumed at ``to_ps``
        self.intervals: list = []
        self.eligible_net = ffstate.network_is_deterministic(self.net, backend.params)

    def ensure(self) -> None:
        """A flow started: (re)start the detector and forget the history (the flow set changed)."""
        self.hist.clear()
        if self.running or not self.eligible_net:
            return
        self.running = True
        self._schedule()

    def _schedule(self, after_ps: int = 0) -> None:
        """Next tick one window after now (+ ``after_ps``: the jump just made, which moved the network)."""
        rtt_ns = max((f.cc.base_rtt_ns for f in self.net.flows.values()), default=0)
        self.period_ps = max(1, int(rtt_ns)) * DETECT_WINDOW_RTTS * PS_PER_NS
        self.callbacks = (self._tick,)
        self.net.sched.schedule(self.net.env.now + after_ps + self.period_ps, self)

    def _tick(self, _ev) -> None:
        net = self.net
        if not net.active:
            self.running = False
            self.hist.clear()
            return
        snap = ffstate.snapshot(net, net.env.now)
        if snap is None or (self.hist and self.hist[-1].fids != snap.fids):
            self.hist.clear()
        dt = 0
        if snap is not None:
            self.hist.append(snap)
            if len(self.hist) > STEADY_WINDOWS:
                dt = self._maybe_jump()
        self._schedule(dt)

    def _maybe_jump(self) -> int:
        """Jump if the history is steady; returns the simulated time skipped (ps, 0 if none)."""
        plan = ffcycles.plan_jump(self.net, list(self.hist), self.tol, self.cycle_tol, MARGIN_WINDOWS,
                                 MIN_JUMP_WINDOWS * self.period_ps)
        if plan is None:
            return 0
        self.skipped_packets += ffstate.jump(self.net, plan)
        self.skips += 1
        self.skipped_ps += plan.dt_ps
        now = self.net.env.now
        self.intervals.append((now, now + plan.dt_ps))
        self.hist.clear()
        return plan.dt_ps

    def stats(self) -> dict:
        """The ``fast_forward`` block of ``summary.json``."""
        return {"skips": self.skips, "skipped_sim_time_ns": (self.skipped_ps + 500) // PS_PER_NS,
                "skipped_packets": self.skipped_packets, "tolerance": self.tol,
                "cycle_tolerance": self.cycle_tol,
                "deterministic_network": self.eligible_net,
                "skipped_intervals_ns": [[(a + 500) // PS_PER_NS, (b + 500) // PS_PER_NS] for a, b in self.intervals]}
