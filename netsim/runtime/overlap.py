"""Compute and communication slowing each other on one GPU (``overlap.slowdown`` f, ``overlap.comm_slowdown`` g).

Model, compute side: while at least one communication op (a collective or a
pipeline send/receive) that a rank takes part in is in flight, that rank's
compute kernels progress at 1/(1+f) of their speed; otherwise at full speed.
So a compute kernel of which work x (measured in its own uncontended time)
runs beside communication takes f·x longer. A communication op counts as
running on each of its ranks' GPUs from its launch (after any what-if delay)
to its end — NCCL kernels occupy SMs for the whole collective, not only while
a rank's own bytes move.

Communication side: while a compute kernel runs on the GPU of any of its
ranks, a communication op progresses at 1/(1+g) (its kernels lose SMs and
memory bandwidth to the compute; a collective moves at its slowest rank's
pace). The backend computes the op's uncontended network time D; the time
it spent beside compute before the network finished delivered only 1/(1+g)
of its progress, so the op's end is deferred until the missing progress is
made up, at the rate of that moment (1/(1+g) beside compute, else 1): an op
whose work y runs beside compute takes g·y longer, and one that runs beside
compute throughout ends at D·(1+g).

Why charging at the end equals a slower injection for the op itself: let
r(t) be the op's progress rate (1/(1+g) while any of its ranks computes, else
1) from its start t0. Slowing its injection ends it at T with
∫_{t0}^{T} r = D. Charging at the end lets the network finish at t0 + D,
having lost L = ∫_{t0}^{t0+D} (1 − r) of progress, and makes L up at r(t):
it ends at T' with ∫_{t0+D}^{T'} r = L, i.e. ∫_{t0}^{T'} r = D, so T' = T
(compute that waits for the op starts at the same T either way). The
equality needs D to scale with the progress rate, which holds for an op alone
on its links whose time is bandwidth (or SM-paced) time;
tests/runtime/test_overlap_injection.py checks it on analytic and flow
against the same all-reduce on links slowed to B/(1+g) while compute runs.

With f = g = 0 the model is not installed at all and the step is exactly as
without it. The defaults and measured values of f and g are in
:mod:`netsim.workloads.variability`. Works on every backend (it lives in the
executor, above the network).

Left out: the network seeing the slower injection when the op shares links
with other traffic (its flows keep the rate the backend gave them, so the
other traffic is not relieved; and an op already held by contention below
B/(1+g) would not be slowed by a rate cap, but is by the end charge: an
upper bound on its end there); no backend offers a per-flow rate cap that
changes during a flow, which charging inside the network would need; and
concurrent communication (or compute) kernels slowing each other more than
one does.
"""
from __future__ import annotations

import math
from collections import defaultdict


class _Running:
    """Work in progress (a compute op, or a communication op's deferred tail): ps of uncontended time left."""

    __slots__ = ("op", "remaining_ps", "since_ps", "rate", "version", "done")

    def __init__(self, op, work_ps: float, now: int, rate: float, done):
        self.op, self.remaining_ps, self.since_ps, self.rate = op, float(work_ps), now, rate
        self.version, self.done = 0, done


class _Comm:
    """A communication op in flight: wall time it ran beside compute before its network part ended."""

    __slots__ = ("op", "ranks", "slowed_since", "beside_ps", "tail", "network_end_ps")

    def __init__(self, op, now: int, slowed: bool):
        self.op, self.ranks = op, tuple(dict.fromkeys(op.ranks))
        self.slowed_since = now if slowed else None
        self.beside_ps = 0
        self.tail: _Running | None = None
        self.network_end_ps = -1


def overlap_model(env, slowdown: float, workload) -> "OverlapModel | None":
    """The model for compute slowdown f = ``slowdown`` and the workload's ``overlap_comm_slowdown`` g.

    ``None`` when both are 0 (nothing installed: the step is exactly as without the setting).
    """
    g = float(getattr(workload, "overlap_comm_slowdown", 0.0) or 0.0)
    return OverlapModel(env, slowdown, g) if slowdown > 0 or g > 0 else None


class OverlapModel:
    """Tracks communication and compute per rank and stretches each where they overlap.

    Parameters
    ----------
    env : simpy.Environment
    slowdown : float
        f >= 0: compute progresses at 1/(1+f) while communication runs on its GPU.
    comm_slowdown : float
        g >= 0: communication progresses at 1/(1+g) while compute runs on one of its ranks' GPUs.
        At least one of f, g is > 0 (both 0: do not install the model).
    """

    def __init__(self, env, slowdown: float, comm_slowdown: float = 0.0):
        if not (slowdown >= 0 and comm_slowdown >= 0 and slowdown + comm_slowdown > 0):
            raise ValueError("OverlapModel needs f, g >= 0, not both 0 (f = g = 0: do not install it)")
        self.env, self.f, self.g = env, float(slowdown), float(comm_slowdown)
        self.slow_rate = 1.0 / (1.0 + self.f)
        self.comm_slow_rate = 1.0 / (1.0 + self.g)
        self.comm_active: dict[int, int] = defaultdict(int)
        self.compute_active: dict[int, int] = defaultdict(int)
        self.running: dict[int, dict] = defaultdict(dict)   # rank -> {id(op): _Running}
        self.comms: dict[int, _Comm] = {}                    # id(op) -> communication in flight (g > 0)
        self.comms_on: dict[int, dict] = defaultdict(dict)   # rank -> {id(op): None} in start order (deterministic)
        self.extra_ps = 0                                    # compute time added by contention, all ranks
        self.comm_extra_ps = 0                               # communication time added, summed over ops

    def _rate(self, rank: int) -> float:
        return self.slow_rate if self.comm_active[rank] else 1.0

    def _slowed(self, c: _Comm) -> bool:
        return any(self.compute_active[r] for r in c.ranks)

    # -- compute -----------------------------------------------------------------------------------
    def start_compute(self, op, work_ps: int, done) -> None:
        """Run compute ``op`` (``work_ps`` of uncontended time); call ``done()`` when it ends."""
        rank = op.ranks[0]
        r = _Running(op, work_ps, self.env.now, self._rate(rank), done)
        self.running[rank][id(op)] = r
        self._schedule(r, self._maybe_done)
        self._compute_count(rank, +1)

    def _schedule(self, r: _Running, wake) -> None:
        wait = max(0, math.ceil(r.remaining_ps / r.rate - 1e-6))
        ev = self.env.timeout(wait)
        version = r.version
        ev.callbacks.append(lambda _e, r=r, v=version: wake(r, v))

    def _maybe_done(self, r: _Running, version: int) -> None:
        if r.version != version:
            return                      # rescheduled meanwhile: a stale wake-up
        rank = r.op.ranks[0]
        del self.running[rank][id(r.op)]
        self.extra_ps += max(0, self.env.now - r.op.start_ps - r.op.duration_ps - r.op.delay_ps)
        self._compute_count(rank, -1)
        r.done()

    def _rescale(self, rank: int) -> None:
        rate = self._rate(rank)
        for r in self.running[rank].values():
            if r.rate != rate:
                self._rerate(r, rate, self._maybe_done)

    def _rerate(self, r: _Running, rate: float, wake) -> None:
        now = self.env.now
        r.remaining_ps = max(0.0, r.remaining_ps - (now - r.since_ps) * r.rate)
        r.since_ps, r.rate = now, rate
        r.version += 1
        self._schedule(r, wake)

    def _compute_count(self, rank: int, delta: int) -> None:
        """One more / fewer compute op on ``rank``; on 0 <-> 1 the communication on it changes speed."""
        self.compute_active[rank] += delta
        if self.g and self.compute_active[rank] == (1 if delta > 0 else 0):
            now = self.env.now
            for cid in self.comms_on[rank]:
                c = self.comms[cid]
                slowed = self._slowed(c)
                if c.tail is not None:
                    rate = self.comm_slow_rate if slowed else 1.0
                    if c.tail.rate != rate:
                        self._rerate(c.tail, rate, self._tail_done)
                elif slowed and c.slowed_since is None:
                    c.slowed_since = now
                elif not slowed and c.slowed_since is not None:
                    c.beside_ps += now - c.slowed_since
                    c.slowed_since = None

    # -- communication -----------------------------------------------------------------------------
    def comm_started(self, op) -> None:
        """Communication ``op`` is now running on its ranks' GPUs."""
        for rank in set(op.ranks):
            self.comm_active[rank] += 1
            if self.comm_active[rank] == 1:
                self._rescale(rank)
        if self.g:
            c = _Comm(op, self.env.now, False)
            if self._slowed(c):
                c.slowed_since = self.env.now
            self.comms[id(op)] = c
            for rank in c.ranks:
                self.comms_on[rank][id(op)] = None

    def network_done(self, op, done) -> None:
        """The backend finished ``op``'s transfers; call ``done()`` once the progress lost beside compute is made up."""
        c = self.comms.get(id(op))
        if c is None:
            done()
            return
        now = c.network_end_ps = self.env.now
        if c.slowed_since is not None:
            c.beside_ps += now - c.slowed_since
            c.slowed_since = None
        missing_ps = c.beside_ps * self.g / (1.0 + self.g)
        if missing_ps <= 0:
            self._drop(c)
            done()
            return
        c.tail = _Running(op, missing_ps, now, self.comm_slow_rate if self._slowed(c) else 1.0, done)
        self._schedule(c.tail, self._tail_done)

    def _tail_done(self, r: _Running, version: int) -> None:
        if r.version != version:
            return
        c = self.comms[id(r.op)]
        self.comm_extra_ps += self.env.now - c.network_end_ps
        self._drop(c)
        r.done()

    def _drop(self, c: _Comm) -> None:
        del self.comms[id(c.op)]
        for rank in c.ranks:
            self.comms_on[rank].pop(id(c.op), None)

    def comm_ended(self, op) -> None:
        """Communication ``op`` finished."""
        for rank in set(op.ranks):
            self.comm_active[rank] -= 1
            if self.comm_active[rank] == 0:
                self._rescale(rank)
