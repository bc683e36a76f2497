"""DCQCN as a fluid model in the flow backend: the algorithm, driven by fluid queues.

What is modelled
----------------
Each DCQCN flow carries the *real* reaction-point state machine
(:class:`netsim.transport.cc.dcqcn.DCQCN`, same presets and ``--cc-param``
values as the packet backend): its current rate ``R_C`` is the flow's rate
cap in the fair-share solve. The congestion point and notification point are
fluid (Zhu et al. SIGCOMM 2015 §5; Zhu, Ghobadi, Misra, Padhye CoNEXT 2016):

* every switch egress link ``l`` with DCQCN flows keeps a fluid backlog
  ``Q_l``, integrated between evaluation instants with
  ``dQ/dt = Σ R_C − C_l`` (offered load of the flows on it, clipped at 0)
  and bounded by PFC at ``n_in · XOFF`` (``n_in`` ingress links carrying
  those flows; ``XOFF = Kmax + 2·delay·rate + 2·MTU`` as the packet
  backend's ``pfc_xoff_above_ecn``);
* RED marking probability ``p(Q)`` (``Kmin``, ``Kmax``, ``pmax``, 1 above
  ``Kmax``, the preset's values); a flow accumulates the *expected* number
  of marked packets ``Σ_l p(Q_l) · x_f·Δt / MTU`` (``x_f`` its fluid rate)
  once ``cnp_interval`` has passed since its last CNP, and receives a CNP
  (``on_cnp``: cut ``R_C ← R_C(1 − α/2)``, α up) when that reaches one mark;
* rate increase and α decay run on the RP's own timers (``advance``) and
  its byte counter (``on_send`` with the fluid bytes sent).

The model is evaluated at flow start/end events and at a fixed period
``Δ`` (``flow_dcqcn_tick_ns``) only while it is not at rest: some DCQCN flow
below line rate or some backlog above zero. A lone flow, or flows that never
oversubscribe a link, cost no ticks.

Deliberately left out: marking randomness (expected marks, so flows on the
same links are cut in lock-step), queueing delay in the FCT, PFC pause
spreading of the backlog upstream (the backlog stays at the congested egress),
the ``per_period`` (Mellanox) styles are used as implemented by the RP class.
"""
from __future__ import annotations

from ...transport.cc.dcqcn import DCQCN
from ...units import PS_PER_NS, PS_PER_S

INF = float("inf")


class DcqcnFluid:
    """Fluid CP/NP of DCQCN over the flow backend's directed links.

    ``cap`` are link capacities in bytes/ps, ``tail_switch[l]`` whether link
    ``l`` leaves a switch (only switches mark ECN), ``prev`` maps a link to
    its upstream link on a flow's path, ``xon_bytes[l]`` the PFC XON of
    link ``l`` (headroom term of XOFF).
    """

    def __init__(self, cc_params: dict, cap: list[float], tail_switch: list[bool], xon_bytes: list[float],
                 tick_ns: int):
        p = {k: v for k, v in (cc_params or {}).items() if not k.startswith("flow_")}
        self.params = DCQCN.PARAMS.resolve(p, source="--cc-param (dcqcn)")
        self.cap = cap
        self.tail_switch = tail_switch
        self.xon = xon_bytes
        self.tick_ps = int(tick_ns) * PS_PER_NS
        self.flows: dict[int, object] = {}
        self.queue: dict[int, float] = {}
        self._ecn: dict[float, tuple] = {}
        self.cnps = 0
        self.ticks = 0
        self.rest = True                 # set by at_rest(), cleared when a flow joins
        self.over = False                # some link offered more than its capacity
        self.t_last = 0

    def ecn(self, rate_bytes_per_ps: float) -> tuple[float, float, float, float]:
        """``(kmin, kmax, pmax, ...)`` of a port of this rate (the preset's CP settings)."""
        v = self._ecn.get(rate_bytes_per_ps)
        if v is None:
            e = DCQCN.ecn_settings(self.params, rate_bytes_per_ps * 8 * PS_PER_S)
            v = self._ecn[rate_bytes_per_ps] = (float(e["ecn_kmin_bytes"]), float(e["ecn_kmax_bytes"]),
                                                float(e["ecn_pmax"]))
        return v

    def add(self, f, now_ps: int, line_rate_bytes_per_ps: float, mtu: int, rtt_ps: float) -> None:
        """Attach an RP state machine to flow ``f`` (starts at line rate)."""
        rp = DCQCN(self.params, mss_bytes=mtu, line_rate_bps=line_rate_bytes_per_ps * 8 * PS_PER_S,
                   base_rtt_ns=int(rtt_ps // PS_PER_NS), now_ns=now_ps // PS_PER_NS)
        f.rp = rp
        f.marks = 0.0
        # the first packet reaches the marking point after the backlog ahead of it: no CNP before
        # start + queueing delay (the feedback delay of the CoNEXT'16 model)
        qdelay = 0.0
        queue = self.queue
        for l in f.links:
            q = queue.get(l)
            if q:
                qdelay += q / self.cap[l]
        f.last_cnp = now_ps + qdelay - rp.cnp_interval_ns * PS_PER_NS
        self.flows[f.fid] = f
        self.rest = False

    def remove(self, f) -> None:
        self.flows.pop(f.fid, None)
        f.rp = None

    def at_rest(self) -> bool:
        """No backlog and every flow at line rate with nothing pending: no ticks needed."""
        self.rest = False
        if any(q > 0.0 for q in self.queue.values()) or self.over:
            return False
        for f in self.flows.values():
            rp = f.rp
            if rp.rate_bps < rp.line_rate_bps:
                return False
        self.rest = True
        return True

    def step(self, now_ps: int, users: list[dict]) -> set[int]:
        """Integrate queues and marks over ``[t_last, now]``; return links whose flows' caps changed."""
        dt = now_ps - self.t_last
        if dt == 0:
            return set()                 # already evaluated at this instant
        self.t_last = now_ps
        if self.rest:
            # at rest (no backlog, nobody below line rate): nothing to integrate; skipping the
            # byte counter here only changes stage counters of flows already at line rate
            return set()
        self.ticks += 1
        flows = self.flows
        if not flows:
            self.queue.clear()
            self.over = False
            return set()
        cap = self.cap
        # offered load per switch egress link
        load: dict[int, float] = {}
        ins: dict[int, set] = {}
        for f in flows.values():
            rc = f.cap
            links = f.links
            for i, l in enumerate(links):
                if self.tail_switch[l]:
                    load[l] = load.get(l, 0.0) + rc
                    s = ins.get(l)
                    if s is None:
                        s = ins[l] = (set(), set())
                    if i:
                        s[0].add(links[i - 1])
                        s[1].update(links[:i])
        queue = self.queue
        self.over = False
        prob: dict[int, float] = {}
        newq: dict[int, float] = {}
        for l, a in load.items():
            q = queue.get(l, 0.0)
            if a > cap[l]:
                self.over = True
            q += (a - cap[l]) * dt
            kmin, kmax, pmax = self.ecn(cap[l])
            near, tree = ins[l]
            xoff = kmax + self.xon[l]
            # PFC keeps the backlog behind this egress in every ingress upstream of it
            qmax = max(1, len(tree)) * xoff
            q = 0.0 if q < 0.0 else (qmax if q > qmax else q)
            if q > 0.0:
                newq[l] = q
            qe = min(q, max(1, len(near)) * xoff)
            if qe > kmin:
                prob[l] = 1.0 if qe > kmax else pmax * (qe - kmin) / (kmax - kmin)
        self.queue = newq
        dirty: set[int] = set()
        now_ns = now_ps // PS_PER_NS
        for f in flows.values():
            rp = f.rp
            sent = f.rate * dt
            if sent > 0.0:
                rp.on_send(now_ns, sent)
            if prob and now_ps - f.last_cnp >= rp.cnp_interval_ns * PS_PER_NS:
                pm = 0.0
                for l in f.links:
                    p = prob.get(l)
                    if p:
                        pm = 1.0 - (1.0 - pm) * (1.0 - p)
                if pm > 0.0:
                    f.marks += pm * sent / f.mtu
                    if f.marks >= 1.0:
                        f.marks = 0.0
                        f.last_cnp = now_ps
                        rp.on_cnp(now_ns)
                        self.cnps += 1
            rp.advance(now_ns)
            c = rp.rate_bps / 8.0 / PS_PER_S
            if c > f.ceil:
                c = f.ceil              # the model's own per-flow cap (flow_rate_cap_frac)
            if c != f.cap:
                f.cap = c
                f.solo = f.bott if f.bott < c else c
                dirty.update(f.links)
        return dirty
