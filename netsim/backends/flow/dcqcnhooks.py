"""The flow backend's side of the fluid DCQCN model: building it, stepping it, scheduling its ticks.

A mixin of :class:`~netsim.backends.flow.backend.FlowBackend`. The model itself
(reaction points, fluid FIFO queues, PFC, marks) is :mod:`.dcqcnfluid` and
:mod:`.fifo`; here the backend builds it on the first DCQCN flow, evaluates it
at flow events, periodic ticks while it is not at rest and the instants CNPs
reach their senders, and turns changed rate caps into dirty links.

Left out here: the model itself (see :mod:`.dcqcnfluid` for what it leaves
out); DCQCN flows that cross no switch are not added to it.
"""
from __future__ import annotations

import math

from ...units import PS_PER_NS
from .settings import PathInfo


class DcqcnHooksMixin:
    """Fluid DCQCN hooks of the flow backend."""

    def _make_dq(self):
        from .dcqcnfluid import DcqcnFluid
        g = self.graph
        tail_switch = [False] * len(self._cap)
        gap = [0.0] * len(self._cap)     # PFC XOFF - XON of each link into a switch (bytes)
        mtu = float(self.params["mtu_bytes"])
        for (a, b), l in self._lid.items():
            tail_switch[l] = g.nodes[a].get("kind") == "switch"
            e = g.edges[a, b]
            gap[l] = 2.0 * float(e["delay_ns"]) * PS_PER_NS * self._cap[l] + 2.0 * mtu
        self._dq = DcqcnFluid(self.cc_params.get("dcqcn") or {}, self._cap, tail_switch, gap,
                              int(self.params["flow_dcqcn_tick_ns"]))
        self._dq.t_last = self.env.now
        sk = self.sinks
        if sk.queues is not None or sk.pfc is not None or sk.cc is not None:
            from .dcqcnfluid import DcqcnTracer
            names = {l: ab for ab, l in self._lid.items()}
            self._dq.tracer = DcqcnTracer(sk, names, int(self.params.get("roce_priority", 3)),
                                          int(self.params["queue_sample_ns"]), int(self.params["cc_sample_ns"]))
        return self._dq

    def _rp_line_rate(self, info: "PathInfo"):
        """The DCQCN RP's line rate (bytes/ps): its path's first fabric link, as the packet backend
        (the NIC's rate, not the GPU's NVLink/PCIe hop before it). ``None`` when the path crosses
        no switch: nothing can mark it (an NVLink/PCIe path), so the flow runs at its line rate
        under the fair-share solve alone and costs the DCQCN model nothing."""
        v = info.consts.get("rp_line", 0)
        if v == 0:
            from ..packet.backend import FABRIC_KINDS
            g = self.graph
            v = None
            if any(g.nodes[n].get("kind") == "switch" for n in info.path[1:-1]):
                v = info.first_rate
                for (a, b), l in zip(zip(info.path, info.path[1:]), info.links):
                    if g.edges[a, b].get("kind") in FABRIC_KINDS:
                        v = self._cap[l]
                        break
            info.consts["rp_line"] = v
        return v

    def _dq_step(self) -> None:
        """Evaluate the DCQCN model up to now; changed caps make their links dirty."""
        dq = self._dq
        dirty = dq.step(self.env.now)
        if dirty:
            self._dirty |= dirty
            self._request_settle()
        if dq.pending:
            # a CNP on its way back is applied when it reaches the RP: evaluate then
            due = math.ceil(min(dq.pending.values()))
            if due not in self._dq_due:
                self._dq_due.add(due)
                self.env.timeout(max(0, due - self.env.now)).callbacks.append(self._dq_on_due)

    def _dq_on_due(self, _ev) -> None:
        self._dq_due.discard(self.env.now)
        if self._dq.flows:
            self._dq_step()
            self._dq_schedule()

    def _dq_schedule(self) -> None:
        if not self._dq_tick:
            self._dq_tick = True
            self.env.timeout(self._dq.tick_ps).callbacks.append(self._dq_on_tick)

    def _dq_on_tick(self, _ev) -> None:
        self._dq_tick = False
        dq = self._dq
        if not dq.flows:
            return
        self._dq_step()
        if not dq.at_rest():
            self._dq_schedule()
