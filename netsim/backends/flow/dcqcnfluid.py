"""DCQCN as a fluid model in the flow backend: the algorithm, driven by fluid FIFO queues.

What is modelled
----------------
Each DCQCN flow carries the *real* reaction-point state machine
(:class:`netsim.transport.cc.dcqcn.DCQCN`, same presets and ``--cc-param``
values as the packet backend): its current rate ``R_C`` is what it injects.
The congestion point and notification point are fluid (after Zhu et al.
SIGCOMM 2015 §5 and Zhu, Ghobadi, Misra, Padhye CoNEXT 2016), on the FIFO
queues of :mod:`.fifo`:

* every switch egress a DCQCN flow crosses is a fluid FIFO; each flow
  injects ``R_C·Δt`` unless PFC pauses its sender, every ingress into a
  switch is paused above ``XOFF = Kmax + 2·delay·rate + 2·MTU`` and resumed
  at ``XON = Kmax`` (the packet backend's ``pfc_xoff_above_ecn``), a paused
  link stops serving its queue — so backlogs spread upstream as PFC spreads
  them, and a paused sender leaves a gap in the FIFO;
* marking at dequeue: the bytes of flow ``f`` that leave egress ``l`` in a
  step carry ``p(q̄_l) · bytes / MTU`` expected marks (RED ``Kmin``,
  ``Kmax``, ``pmax`` of the preset, 1 above ``Kmax``; ``q̄`` the standing
  queue over the step), and reach the receiver after the queues and hops
  downstream of ``l``;
* the NP: marked bytes are taken in their order of arrival at the receiver;
  outside the ``cnp_interval`` since its last CNP, once they sum to
  :data:`MARK_THRESHOLD` expected marks the NP sends a CNP, which reaches the
  RP half a base RTT later (``on_cnp``: ``R_C ← R_C(1 − α/2)``, α up); the
  model is evaluated at that instant;
* delivery: the flow's rate in the fair-share solve is capped at
  ``R_C + backlog/Δ`` where ``backlog`` is what it injected and has not yet
  delivered — the bytes queued during a cut phase drain at the flow's share
  of the links (port-fair under PFC), not at the RP's rate;
* rate increase and α decay run on the RP's own timers (``advance``) and
  its byte counter (``on_send`` with the bytes injected);
* in-order connections (:mod:`.inorder`): a flow has left its sender once its
  RP has injected its last byte (``sent_all``), though bytes of it are still
  queued; the connection's next flow starts then (as on the packet backend,
  once the last new packet is sent) with a fresh RP, injects behind it in the
  FIFOs and is delivered only after it (``behind``: its fair-share cap is
  :data:`HELD_RATE` until the flow ahead completes).

Flows whose path crosses no switch (NVLink/PCIe only) cannot be marked and
are left to the fair-share solve at line rate (the backend does not add them).
The model is evaluated at flow start/end events, when a CNP reaches its RP,
and every ``Δ`` (``flow_dcqcn_tick_ns``) while it is not at rest: some
DCQCN flow below line rate, a byte queued, an ingress paused or a mark on
its way. A lone flow, or flows that never oversubscribe a link, cost no
ticks.

Deliberately left out: marking randomness (expected marks; near the end of
a cut phase, where the queue sits between Kmin and Kmax, whether a flow takes
one more halving is a coin flip in the packet backend — docs/flow-backend.md),
propagation delay between queues, queueing delay in the FCT, non-DCQCN
traffic in the FIFOs; the ``per_period`` (Mellanox) styles are used as
implemented by the RP class.
"""
from __future__ import annotations

import math

from ...transport.cc.dcqcn import DCQCN
from ...units import PS_PER_NS, PS_PER_S
from .fifo import FifoNet

#: expected marks at which the NP sends its CNP. The NP reacts to the *first* marked packet; with
#: marks as independent draws (RED) the expected count at the first mark is an Exp(1) variate, whose
#: median is ln 2: the fluid NP fires at the median first-mark time of the packet-level one
MARK_THRESHOLD = math.log(2.0)

#: delivery cap (bytes/ps, 8 kb/s) of a flow whose connection's flow ahead is still being delivered:
#: its bytes are queued behind that flow's (FIFO), so it is delivered next, not alongside
HELD_RATE = 1e-9


class DcqcnFluid:
    """Fluid CP/NP of DCQCN over the flow backend's directed links.

    ``cap`` are link capacities in bytes/ps, ``tail_switch[l]`` whether link
    ``l`` leaves a switch (only switches queue and mark ECN), ``gap_bytes[l]``
    the PFC XOFF−XON gap of link ``l`` into a switch (``2·delay·rate + 2·MTU``).
    """

    def __init__(self, cc_params: dict, cap: list[float], tail_switch: list[bool], gap_bytes: list[float],
                 tick_ns: int, ecn_fixed: dict | None = None):
        p = {k: v for k, v in (cc_params or {}).items() if not k.startswith("flow_")}
        self.params = DCQCN.PARAMS.resolve(p, source="--cc-param (dcqcn)")
        self.cap = cap
        self.tick_ps = int(tick_ns) * PS_PER_NS
        self.net = FifoNet(cap, tail_switch, gap_bytes, lambda l: self.link_ecn(l)[1])
        self.flows: dict[int, object] = {}
        self._ecn: dict[float, tuple] = {}
        self._ecn_fixed = ecn_fixed or {}    # link -> ECN values set by --set / switch attributes
        self._link_ecn: dict[tuple, tuple] = {}
        #: per flow ``[unsent wire bytes, backlog bytes, R_C bytes/ps]``: what the RP has not injected
        #: yet, and what it injected that the flow has not delivered (queued in switch buffers)
        self.st: dict[int, list] = {}
        self.hop: dict[int, float] = {}      # one hop's share of the base one-way delay (ps)
        self.ret: dict[int, float] = {}      # CNP return delay, receiver -> RP (ps)
        self.infl: dict[int, list] = {}      # marked bytes on their way: [(arrival at receiver ps, marks)]
        self.pending: dict[int, float] = {}  # CNPs on their way back to the RP: fid -> arrival (ps)
        self.cnps = 0
        self.sent_all: list = []          # flows whose RP injected its last byte in the last step
        #: a connection's next flow -> the flow ahead of it, still delivering (queued bytes): the next
        #: one injects behind it, in FIFO order, and is delivered only once the flow ahead has been
        self.behind: dict[int, object] = {}
        self.ticks = 0
        self.rest = True                 # set by at_rest(), cleared when a flow joins
        self.t_last = 0
        self.tracer = None               # DcqcnTracer: queues/pfc/cc rows (set by the backend)

    def ecn(self, rate_bytes_per_ps: float) -> tuple[float, float, float]:
        """``(kmin, kmax, pmax)`` of a port of this rate (the preset's CP settings)."""
        v = self._ecn.get(rate_bytes_per_ps)
        if v is None:
            e = DCQCN.ecn_settings(self.params, rate_bytes_per_ps * 8 * PS_PER_S)
            v = self._ecn[rate_bytes_per_ps] = (float(e["ecn_kmin_bytes"]), float(e["ecn_kmax_bytes"]),
                                                float(e["ecn_pmax"]))
        return v

    def link_ecn(self, l: int) -> tuple[float, float, float]:
        """``(kmin, kmax, pmax)`` of egress ``l``: the preset's, under what ``--set`` or the switch fixes."""
        key = (l, self.cap[l])             # a degraded link rescales the preset's thresholds
        v = self._link_ecn.get(key)
        if v is None:
            kmin, kmax, pmax = self.ecn(self.cap[l])
            f = self._ecn_fixed.get(l) or {}
            v = self._link_ecn[key] = (f.get("ecn_kmin_bytes", kmin), f.get("ecn_kmax_bytes", kmax),
                                     f.get("ecn_pmax", pmax))
        return v

    def add(self, f, now_ps: int, line_rate_bytes_per_ps: float, mtu: int, rtt_ps: float) -> None:
        """Attach an RP state machine to flow ``f`` (starts at line rate)."""
        rp = DCQCN(self.params, mss_bytes=mtu, line_rate_bps=line_rate_bytes_per_ps * 8 * PS_PER_S,
                   base_rtt_ns=int(rtt_ps // PS_PER_NS), now_ns=now_ps // PS_PER_NS)
        f.rp = rp
        f.marks = 0.0
        f.last_cnp = now_ps - rp.cnp_interval_ns * PS_PER_NS   # its bytes' queueing delays the first mark
        self.hop[f.fid] = rtt_ps / (2.0 * len(f.links))
        self.ret[f.fid] = 0.5 * rtt_ps
        self.infl[f.fid] = []
        self.flows[f.fid] = f
        self.st[f.fid] = [f.rem, 0.0, line_rate_bytes_per_ps]
        self.net.attach(f)
        self.rest = False

    def remove(self, f) -> set[int]:
        """Detach flow ``f``; the links of flows that were delivered behind it (their caps rise now)."""
        self.flows.pop(f.fid, None)
        self.behind.pop(f.fid, None)
        dirty = set()
        for g in [self.flows[k] for k, ahead in self.behind.items() if ahead is f]:
            st = self.st[g.fid]
            g.cap = c = self._delivery_cap(g, st[2], st[1] / self.tick_ps)    # drops it from behind
            g.solo = g.bott if g.bott < c else c
            dirty.update(g.links)
        self.st.pop(f.fid, None)
        self.hop.pop(f.fid, None)
        self.ret.pop(f.fid, None)
        self.infl.pop(f.fid, None)
        self.pending.pop(f.fid, None)
        self.net.detach(f)
        f.rp = None
        return dirty

    def at_rest(self) -> bool:
        """Nothing queued or paused, no CNP on its way, every flow at line rate: no ticks needed."""
        self.rest = False
        if self.pending or self.net.busy() or any(self.infl.values()):
            return False
        for f in self.flows.values():
            rp = f.rp
            if rp.rate_bps < rp.line_rate_bps or self.st[f.fid][1] > 0.0:
                return False
        self.rest = True
        return True

    def _mark_prob(self, l: int, q: float) -> float:
        kmin, kmax, pmax = self.link_ecn(l)
        if q <= kmin:
            return 0.0
        return 1.0 if q > kmax else pmax * (q - kmin) / (kmax - kmin)

    def step(self, now_ps: int) -> set[int]:
        """Move the fluid over ``[t_last, now]``; return links whose flows' caps changed."""
        dt = now_ps - self.t_last
        if dt == 0:
            return set()                 # already evaluated at this instant
        t0 = self.t_last
        self.t_last = now_ps
        if self.rest:
            # at rest (nothing queued, nobody below line rate): nothing to integrate; skipping the
            # byte counter here only changes stage counters of flows already at line rate
            return set()
        self.ticks += 1
        flows = self.flows
        if not flows:
            return set()
        st = self.st
        fl = list(flows.values())
        inject = {}
        for f in fl:
            s = st[f.fid]
            b = s[2] * dt
            inject[f.fid] = b if b < s[0] else s[0]
        was_paused = set(self.net.paused) if self.tracer is not None else None
        sent, departed, qavg = self.net.step(fl, inject, dt)
        qdelay = {l: qavg[l] / self.cap[l] for l in qavg}
        tm = 0.5 * (t0 + now_ps)                 # marks of this step, at its middle
        infl = self.infl
        for l, out in departed.items():
            p = self._mark_prob(l, qavg[l])
            if p <= 0.0:
                continue
            for fid, b in out.items():
                f = flows.get(fid)
                if f is not None:
                    # a marked byte reaches the receiver after the queues and hops downstream of l
                    infl[fid].append((tm + self._downstream_ps(f, l, qdelay), p * b / f.mtu))
        pend = self.pending
        dirty: set[int] = set()
        now_ns = now_ps // PS_PER_NS
        tick = float(self.tick_ps)
        for f in fl:
            rp = f.rp
            fid = f.fid
            s = st[fid]
            inj = sent.get(fid, 0.0)
            s[0] -= inj
            if inj > 0.0 and s[0] <= 1e-6:
                self.sent_all.append(f)      # its RP injected its last byte in this step
            b = s[1] + inj - f.rate * dt
            s[1] = b if b > 0.0 else 0.0
            due = pend.get(fid)
            if due is not None and due <= now_ps:
                del pend[fid]
                rp.on_cnp(int(due) // PS_PER_NS)
                self.cnps += 1
            if infl[fid]:
                self._notify(f, rp, now_ps)
            if inj > 0.0:
                rp.on_send(now_ns, inj)
            rp.advance(now_ns)
            rc = rp.rate_bps / 8.0 / PS_PER_S
            if rc > f.ceil:
                rc = f.ceil             # the model's own per-flow cap (flow_rate_cap_frac)
            s[2] = rc
            c = self._delivery_cap(f, rc, s[1] / tick)
            if c != f.cap:
                f.cap = c
                f.solo = f.bott if f.bott < c else c
                dirty.update(f.links)
        if self.tracer is not None:
            self.tracer.record(now_ps, self.net, was_paused, fl)
        return dirty

    def _delivery_cap(self, f, rc: float, drain: float) -> float:
        """Flow ``f``'s cap in the fair-share solve (bytes/ps): its RP's rate ``rc`` plus ``drain``
        (its backlog over one tick) — delivery may exceed R_C while the network holds its earlier
        bytes, which drain at its share of the links (PFC/FIFO) — under its ceiling; or
        :data:`HELD_RATE` while its connection's flow ahead of it is still being delivered."""
        c = rc + drain
        if c > f.ceil:
            c = f.ceil
        if self.behind:
            ahead = self.behind.get(f.fid)
            if ahead is not None:
                if ahead.fid in self.flows:
                    return HELD_RATE        # FIFO: nothing of it delivered before the flow ahead
                del self.behind[f.fid]
        return c

    def _downstream_ps(self, f, l: int, qdelay: dict) -> float:
        """Time (ps) from leaving egress ``l`` to reaching ``f``'s receiver: later queues and hops."""
        links = f.links
        k = links.index(l)
        d = self.hop[f.fid] * (len(links) - k)
        for j in range(k + 1, len(links)):
            d += qdelay.get(links[j], 0.0)
        return d

    def _notify(self, f, rp, now_ps: int) -> None:
        """The NP: marked bytes that reached the receiver by now, in arrival order, make a CNP once
        they sum to one expected mark outside the CNP interval; the CNP reaches the RP half an RTT later."""
        fid = f.fid
        arrived = sorted(x for x in self.infl[fid] if x[0] <= now_ps)
        if not arrived:
            return
        self.infl[fid] = [x for x in self.infl[fid] if x[0] > now_ps]
        interval = rp.cnp_interval_ns * PS_PER_NS
        for t, m in arrived:
            if t < f.last_cnp + interval or fid in self.pending:
                continue                 # within the interval: the NP sends no CNP for it
            f.marks += m
            if f.marks >= MARK_THRESHOLD:
                f.marks = 0.0
                f.last_cnp = t
                t_cnp = t + self.ret[fid]
                if t_cnp <= now_ps:
                    rp.on_cnp(int(t_cnp) // PS_PER_NS)
                    self.cnps += 1
                else:
                    self.pending[fid] = t_cnp
