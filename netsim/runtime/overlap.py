"""Compute slowed by communication running beside it on the same GPU (``overlap.slowdown`` f).

Model: while at least one communication op (a collective or a pipeline
send/receive) that a rank takes part in is in flight, that rank's compute
kernels progress at 1/(1+f) of their speed; otherwise at full speed.  So a
compute kernel of which work x (measured in its own uncontended time) runs
beside communication takes f·x longer; with f = 0 the model is not installed
at all and the step is exactly as without it.  A communication op counts as
running on each of its ranks' GPUs from its launch (after any what-if delay)
to its end — NCCL kernels occupy SMs for the whole collective, not only while
a rank's own bytes move.  The default and a measured value of f are in
:mod:`netsim.workloads.variability` (``MEASURED_OVERLAP_SLOWDOWN``).

Works on every backend (it lives in the executor, above the network).

Left out — the communication side: collectives and sends are not slowed by
the compute beside them (their time is the network's; slowing them would
need each backend to scale a flow's injection rate while compute runs), and
concurrent communication kernels do not slow each other more than one does.
"""
from __future__ import annotations

import math
from collections import defaultdict


class _Running:
    """A compute op in progress: its remaining work (ps of uncontended time) since ``since_ps``."""

    __slots__ = ("op", "remaining_ps", "since_ps", "rate", "version", "done")

    def __init__(self, op, work_ps: float, now: int, rate: float, done):
        self.op, self.remaining_ps, self.since_ps, self.rate = op, float(work_ps), now, rate
        self.version, self.done = 0, done


class OverlapModel:
    """Tracks communication per rank and stretches the compute ops that overlap it.

    Parameters
    ----------
    env : simpy.Environment
    slowdown : float
        f > 0: compute progresses at 1/(1+f) while communication runs on its GPU.
    """

    def __init__(self, env, slowdown: float):
        if not slowdown > 0:
            raise ValueError("OverlapModel needs slowdown > 0 (f = 0: do not install it)")
        self.env, self.f = env, float(slowdown)
        self.slow_rate = 1.0 / (1.0 + self.f)
        self.comm_active: dict[int, int] = defaultdict(int)
        self.running: dict[int, dict] = defaultdict(dict)   # rank -> {id(op): _Running}
        self.extra_ps = 0                                    # compute time added by contention, all ranks

    def _rate(self, rank: int) -> float:
        return self.slow_rate if self.comm_active[rank] else 1.0

    def start_compute(self, op, work_ps: int, done) -> None:
        """Run compute ``op`` (``work_ps`` of uncontended time); call ``done()`` when it ends."""
        rank = op.ranks[0]
        r = _Running(op, work_ps, self.env.now, self._rate(rank), done)
        self.running[rank][id(op)] = r
        self._schedule(r)

    def _schedule(self, r: _Running) -> None:
        wait = max(0, math.ceil(r.remaining_ps / r.rate - 1e-6))
        ev = self.env.timeout(wait)
        version = r.version
        ev.callbacks.append(lambda _e, r=r, v=version: self._maybe_done(r, v))

    def _maybe_done(self, r: _Running, version: int) -> None:
        if r.version != version:
            return                      # rescheduled meanwhile: a stale wake-up
        rank = r.op.ranks[0]
        del self.running[rank][id(r.op)]
        self.extra_ps += max(0, self.env.now - r.op.start_ps - r.op.duration_ps - r.op.delay_ps)
        r.done()

    def _rescale(self, rank: int) -> None:
        now, rate = self.env.now, self._rate(rank)
        for r in self.running[rank].values():
            if r.rate == rate:
                continue
            r.remaining_ps = max(0.0, r.remaining_ps - (now - r.since_ps) * r.rate)
            r.since_ps, r.rate = now, rate
            r.version += 1
            self._schedule(r)

    def comm_started(self, op) -> None:
        """Communication ``op`` is now running on its ranks' GPUs."""
        for rank in set(op.ranks):
            self.comm_active[rank] += 1
            if self.comm_active[rank] == 1:
                self._rescale(rank)

    def comm_ended(self, op) -> None:
        """Communication ``op`` finished."""
        for rank in set(op.ranks):
            self.comm_active[rank] -= 1
            if self.comm_active[rank] == 0:
                self._rescale(rank)
