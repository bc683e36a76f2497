"""Fluid DCQCN as the flow backend's dynamic rate controller: building it, stepping it, its ticks.

:class:`DcqcnController` is the :class:`~.controllers.RateController` registered
for ``dcqcn`` (built by the backend on the first DCQCN flow). The model itself (reaction points, fluid FIFO queues, PFC,
marks) is :mod:`.dcqcnfluid` and :mod:`.fifo`; here it is built on the first
DCQCN flow, evaluated at flow events, at periodic ticks while it is not at
rest and at the instants CNPs reach their senders, and its changed rate caps
become dirty links of the fluid network (``FluidNetwork.mark_dirty``).

Its hooks are those of :class:`~.controllers.RateController`: ``admit`` (a flow
starts: the controller may take it and cap it), ``release`` (a flow it holds
completes), ``catch_up`` (before a link change: integrate the queues to now),
``detach`` / ``attach`` (a flow is rerouted); its ``shape`` (the flow's
constants: DCQCN's rate cap) is the static model's, as for every algorithm
(:class:`~.controllers.CCModelController`).

Left out here: the model itself (see :mod:`.dcqcnfluid` for what it leaves
out); DCQCN flows that cross no switch are not added to it.
"""
from __future__ import annotations

import math

from ...units import PS_PER_NS
from .controllers import CCModelController, register_rate_controller
from .queueing import fifo_wait_ps
from .settings import PathInfo, ecn_fixed


@register_rate_controller("dcqcn")
class DcqcnController(CCModelController):
    """The fluid DCQCN model of one backend, built on first use (``model``: its
    :class:`~.dcqcnfluid.DcqcnFluid`, ``None`` until a DCQCN flow crosses a switch); its
    constants are those of the static model (:meth:`CCModelController.shape`)."""

    dynamic = True

    def __init__(self, backend, model):
        super().__init__(backend, model)
        self._b = backend
        self.model = None
        self._tick = False
        self._due: set[int] = set()   # instants at which a pending CNP is due (ps)
        self._ahead = None            # while _sent starts a connection's next flow: the flow ahead

    # -- hooks ------------------------------------------------------------------
    def admit(self, f, info: "PathInfo", cap: float, now: int) -> bool:
        """Take DCQCN flow ``f`` starting now on ``info``'s path (per-flow ``cap``, bytes/ps)
        when its path crosses a switch: its rate is then capped by its RP's current rate.
        False (and nothing done) otherwise."""
        if self.line_rate(info) is None:
            return False
        dq = self.model or self._make()
        self.step()
        line = self.line_rate(info)
        dq.add(f, now, line, info.mtu, info.rtt)
        if self._ahead is not None:                 # started behind a flow still delivering (_sent)
            dq.behind[f.fid] = self._ahead
        f.cap = f.ceil = min(cap, line)
        f.solo = info.bott if info.bott < f.cap else f.cap
        self._schedule()
        return True

    def release(self, f) -> None:
        """Flow ``f``, held by the model, completes now: once its last byte has left the FIFO
        queues (:func:`.queueing.fifo_wait_ps`, added to its latency term)."""
        self.step()
        dq = self.model
        f.lat_ps += fifo_wait_ps(dq.net, f.fid)
        dirty = dq.remove(f)
        if dirty:
            self._b.net.mark_dirty(dirty)

    def catch_up(self) -> None:
        """Integrate the model to now (before a link changes its capacity or fails)."""
        if self.model is not None:
            self.step()

    def detach(self, f) -> None:
        """``f`` leaves its path (its queued bytes were on a failed link)."""
        self.model.net.detach(f)

    def attach(self, f) -> None:
        """``f`` joins its new path."""
        self.model.net.attach(f)

    # -- the model ---------------------------------------------------------------
    def _make(self):
        from .dcqcnfluid import DcqcnFluid
        b = self._b
        g = b.graph
        capacity = b.net.capacity
        tail_switch = [False] * len(capacity)
        gap = [0.0] * len(capacity)     # PFC XOFF - XON of each link into a switch (bytes)
        mtu = float(b.params["mtu_bytes"])
        ecn = {}                      # ECN values --set or switch attributes fix, per egress link
        prio = int(b.params.get("roce_priority", 3))
        for (u, v), l in b.link_ids.items():
            tail_switch[l] = g.nodes[u].get("kind") == "switch"
            if tail_switch[l]:
                ecn[l] = ecn_fixed(b.params, g.nodes[u], u, prio)
            e = g.edges[u, v]
            gap[l] = 2.0 * float(e["delay_ns"]) * PS_PER_NS * capacity[l] + 2.0 * mtu
        self.model = DcqcnFluid(b.cc_params.get("dcqcn") or {}, capacity, tail_switch, gap,
                                int(b.params["flow_dcqcn_tick_ns"]), ecn_fixed=ecn)
        self.model.t_last = b.net.env.now
        sk = b.sinks
        if sk.queues is not None or sk.pfc is not None or sk.cc is not None:
            from .dcqcntrace import DcqcnTracer
            names = {l: ab for ab, l in b.link_ids.items()}
            self.model.tracer = DcqcnTracer(sk, names, int(b.params.get("roce_priority", 3)),
                                            int(b.params["queue_sample_ns"]), int(b.params["cc_sample_ns"]))
        return self.model

    def line_rate(self, info: "PathInfo"):
        """The DCQCN RP's line rate (bytes/ps): its path's first fabric link, as the packet backend
        (the NIC's rate, not the GPU's NVLink/PCIe hop before it). ``None`` when the path crosses
        no switch: nothing can mark it (an NVLink/PCIe path), so the flow runs at its line rate
        under the fair-share solve alone and costs the DCQCN model nothing."""
        v = info.consts.get("rp_line", 0)
        if v == 0:
            from ...network.fabric import FABRIC_KINDS
            b = self._b
            g = b.graph
            v = None
            if any(g.nodes[n].get("kind") == "switch" for n in info.path[1:-1]):
                v = info.first_rate
                for (u, w), l in zip(zip(info.path, info.path[1:]), info.links):
                    if g.edges[u, w].get("kind") in FABRIC_KINDS:
                        v = b.net.capacity[l]
                        break
            info.consts["rp_line"] = v
        return v

    def step(self) -> None:
        """Evaluate the model up to now; changed caps make their links dirty."""
        net = self._b.net
        dq = self.model
        dirty = dq.step(net.env.now)
        if dirty:
            net.mark_dirty(dirty)
        if dq.sent_all:
            # a flow whose RP has injected its last byte has left its sender, though bytes of it are
            # still queued: its connection's next flow starts now (inorder.py), as on the packet
            # backend once the last new packet is sent; at this instant, after this evaluation
            done, dq.sent_all = dq.sent_all, []
            if net.on_drained is not None:
                net.call_at(net.env.now, lambda: self._sent(done))
        if dq.pending:
            # a CNP on its way back is applied when it reaches the RP: evaluate then
            due = math.ceil(min(dq.pending.values()))
            if due not in self._due:
                self._due.add(due)
                net.call_at(due, self._on_due)

    def _sent(self, flows) -> None:
        hook = self._b.net.on_drained
        for f in flows:
            if f.rp is not None:      # still held by the model: not completed in between
                self._ahead = f
                try:
                    hook(f)
                finally:
                    self._ahead = None

    def _on_due(self) -> None:
        self._due.discard(self._b.net.env.now)
        if self.model.flows:
            self.step()
            self._schedule()

    def _schedule(self) -> None:
        if not self._tick:
            self._tick = True
            net = self._b.net
            net.call_at(net.env.now + self.model.tick_ps, self._on_tick)

    def _on_tick(self) -> None:
        self._tick = False
        dq = self.model
        if not dq.flows:
            return
        self.step()
        if not dq.at_rest():
            self._schedule()
