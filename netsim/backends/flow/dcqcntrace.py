"""Trace rows of the fluid DCQCN model: approximate ``queues.csv``, ``pfc.csv`` and ``cc.csv``.

:class:`DcqcnTracer` is set on a :class:`~.dcqcnfluid.DcqcnFluid` by the DCQCN
controller (:mod:`.dcqcnhooks`) when a trace sink is open, and is called at
every model step.

Left out: rows between model steps (times are the model's own instants, off
by up to one tick), queues of non-DCQCN traffic, cwnd and srtt columns (a
rate-based fluid model has neither).
"""
from __future__ import annotations

from ...units import PS_PER_NS


class DcqcnTracer:
    """Approximate ``queues.csv``, ``pfc.csv`` and ``cc.csv`` rows of the fluid DCQCN model.

    Queue rows (``time_ns, node, port, priority, queue_bytes``) and cc rows
    (``time_ns, flow_id, cc, cwnd_bytes, rate_bps, alpha, srtt_ns``; no cwnd
    or srtt) are written at the first model step at or after each multiple
    of their sample period — the model's own instants, so times are off by up
    to one tick; queue rows as in the packet backend: while a queue is
    non-zero plus one zero row when it empties. PFC rows (``time_ns, node,
    port, priority, pause|resume``: the sender ``node`` of the link towards
    ``port``) at the step an ingress crosses XOFF or XON.
    """

    def __init__(self, sinks, names: dict, prio: int, queue_sample_ns: int, cc_sample_ns: int):
        self.queues, self.pfc, self.cc = sinks.queues, sinks.pfc, sinks.cc
        self.names = names               # link id -> (node, peer)
        self.prio = prio
        self.q_ps = int(queue_sample_ns) * PS_PER_NS if self.queues is not None else 0
        self.c_ps = int(cc_sample_ns) * PS_PER_NS if self.cc is not None else 0
        self.next_q = self.next_c = 0
        self.last: dict[int, float] = {}

    def record(self, now_ps: int, net, was_paused: set, flows) -> None:
        t = (now_ps + 500) // PS_PER_NS
        names, prio = self.names, self.prio
        if was_paused != net.paused:
            for l in sorted(was_paused ^ net.paused):
                on = l in net.paused
                if self.pfc is not None:
                    a, b = names[l]
                    self.pfc.add((t, a, b, prio, "pause" if on else "resume"))
        if self.q_ps and now_ps >= self.next_q:
            self.next_q = (now_ps // self.q_ps + 1) * self.q_ps
            last = self.last
            for l in sorted(set(net.queues) | set(last)):
                qu = net.queues.get(l)
                q = int(qu.q + 0.5) if qu is not None else 0
                if q or last.get(l):
                    a, b = names[l]
                    self.queues.add((t, a, b, prio, q))
                if q:
                    last[l] = q
                else:
                    last.pop(l, None)
        if self.c_ps and now_ps >= self.next_c:
            self.next_c = (now_ps // self.c_ps + 1) * self.c_ps
            for f in sorted(flows, key=lambda x: x.fid):
                rp = f.rp
                self.cc.add((t, f.fid, "dcqcn", "", rp.rate_bps, rp.alpha, ""))
