"""How the analytic backend shares a pacing link among the flows paced there.

Each analytic flow's bits drain through the first bottleneck link of its path
(:mod:`.pathcost`); the flows charged to one such link form a
:class:`PacingShare`. Between events every flow drains at a constant rate:

- ``source_sharing=fair``: processor sharing — ``rate_bps / n`` each, or
  max-min (:func:`water_fill`) when host-stack per-connection caps sit below
  that share;
- ``source_sharing=fifo``: only the oldest flow drains, at the link's rate
  (or its cap), the others wait.

:func:`assign_rates` sets the rates and returns the time to the next flow
done; :func:`advance` drains the bits up to now. Scheduling those events, the
flows' latency tails and their records are the backend's (:mod:`.backend`).
Left out: any link other than the pacing one (what overruns there is
measured by :mod:`.contention`, not shared).
"""
from __future__ import annotations

from ...units import PS_PER_S


class PacedFlow:
    """One flow still draining at its pacing link: ``bits`` left, rate ``cap`` at most, then ``tail`` ps.

    Parameters
    ----------
    bits : float
        Wire bits still to drain, bits.
    cap : float
        Highest rate it may drain at (the bottleneck, or a host-stack cap), bit/s.
    tail : float
        Time from its last bit leaving the pacing link to delivery, ps.
    lone : float
        Its lone-flow time (the record's ideal FCT), ps.
    meta : tuple
        The backend's record fields of the flow.
    event : simpy.Event
        The event handed to the sender, succeeded at delivery.
    path : tuple
        Its route (node names).
    links : tuple
        The :class:`.contention.LinkLoad` of every hop.
    """

    __slots__ = ("bits", "cap", "rate", "tail", "lone", "meta", "event", "path", "links", "load")

    def __init__(self, bits: float, cap: float, tail: float, lone: float, meta: tuple, event, path: tuple,
                 links: tuple):
        self.bits, self.cap, self.rate, self.tail, self.lone, self.meta, self.event, self.path = \
            bits, cap, cap, tail, lone, meta, event, path
        self.links = links   # contention.LinkLoad of every hop
        self.load = 0.0      # the rate counted on them (contention.LinkLoads)


class PacingShare:
    """The flows draining at one pacing link of rate ``rate_bps``, drained up to ``last_ps``.

    ``gen`` counts reschedules: a drain event scheduled under an older
    generation is stale and ignored.
    """

    __slots__ = ("rate_bps", "flows", "last_ps", "gen")

    def __init__(self, rate_bps: float, now: int):
        self.rate_bps, self.flows, self.last_ps, self.gen = rate_bps, [], now, 0


def advance(sh: PacingShare, now: int) -> None:
    """Drain every flow of ``sh`` at its current rate from ``sh.last_ps`` to ``now`` (ps)."""
    dt = (now - sh.last_ps) / PS_PER_S
    if dt > 0:
        for f in sh.flows:
            f.bits -= f.rate * dt
    sh.last_ps = now


def assign_rates(sh: PacingShare, fifo: bool) -> float:
    """Set the rate of every flow of ``sh`` (non-empty); the time until the first one drains, ps."""
    flows = sh.flows
    if fifo:                               # one after another: only the head drains
        for f in flows:
            f.rate = 0.0
        f = flows[0]
        f.rate = min(sh.rate_bps, f.cap)
        return max(f.bits, 0.0) / f.rate * PS_PER_S
    if len(flows) == 1:
        f = flows[0]
        f.rate = min(sh.rate_bps, f.cap)
        return max(f.bits, 0.0) / f.rate * PS_PER_S
    share = sh.rate_bps / len(flows)       # every flow here is bottlenecked by this link: equal shares
    if any(f.cap < share for f in flows):
        water_fill(sh)                     # host-stack caps below the fair share
    else:
        for f in flows:
            f.rate = share
    return min(f.bits / f.rate for f in flows) * PS_PER_S


def water_fill(sh: PacingShare) -> None:
    """Max-min shares of one link among flows with per-flow caps (host-stack limits)."""
    left, n = sh.rate_bps, len(sh.flows)
    for f in sorted(sh.flows, key=lambda f: f.cap):
        f.rate = min(f.cap, left / n)
        left -= f.rate
        n -= 1
