"""In-band telemetry (INT) stamping of a :class:`~.port.Port`: the switch egress variants HPCC needs.

A forwarding node's egress appends one :class:`~netsim.transport.telemetry.IntHop`
(the port, its queued bytes after the dequeue, ``tx_bytes`` including this
packet, the time, the line rate) to every data packet that carries an INT list
(``pkt.intl``, set by a flow whose algorithm ``wants_int``) as its
transmission starts. Only a run with such a flow pays for the check:
:func:`enable_int`, called when the first one is set up
(:func:`~.flowsetup.transport_flow`), turns stamping on at every forwarding
egress and switches those ports to the stamping copies of the two per-packet
paths kept here — :meth:`IntMixin._wake_int` (a forwarding port's dequeue; no
flows of its own) and :meth:`IntMixin._arrive_fwd_int` (arrival at a
forwarding peer, idle egress started at once). Each is the plain path of
:mod:`.egress` / :mod:`.wire` with the stamp added (kept inlined: they run per
packet-hop). ``Port.start`` and ``_wake_featured`` stamp by ``int_stamps``.

Left out: INT on control packets (ACKs echo the list instead), stamping at a
NIC, a hop-count limit on the list (the flow sizes its header from
``int_max_hops``).
"""
from __future__ import annotations

from heapq import heappush

from ...transport.packet import CONTROL_PRIORITY
from .scheduler import NORMAL


def enable_int(net) -> None:
    """Turn INT stamping on at every forwarding egress of ``net`` (once; later calls do nothing).

    Each such port takes the stamping wake-up (:meth:`~.egress.EgressMixin.choose_wake`), and
    every link into a forwarding node whose arrival is the plain fast path takes
    :meth:`IntMixin._arrive_fwd_int` (also as the path a PFC watchdog storm restores).
    """
    if net.int_on:
        return
    net.int_on = True
    for port in net.ports.values():
        if hasattr(port.node, "admit"):
            port.int_stamps = True
            port.choose_wake()
        plain = (port._arrive_fwd, net.drive_cb)
        if port.pipe_cbs == plain:
            port.pipe_cbs = (port._arrive_fwd_int, net.drive_cb)
            if port.pipe:
                port._pipe_ev.callbacks = port.pipe_cbs
        elif port.wd is not None and port.wd[3] == plain:
            port.wd[3] = (port._arrive_fwd_int, net.drive_cb)


class IntMixin:
    """The INT-stamping per-packet paths of a :class:`~.port.Port` (methods only; state lives in the port)."""

    __slots__ = ()

    def _wake_int(self, _ev, now=None) -> None:
        """``_wake`` of a forwarding port with INT on: dequeue (control, then data), stamp, send."""
        if now is None:
            now = self.busy_until
        self.wake_pending = False
        cq = self.cq
        if cq:
            pkt = cq.popleft()
            size = pkt.size
            self.qbytes[CONTROL_PRIORITY] -= size
            self.qtotal -= size
            self.buf.used -= size
        elif self.qtotal:
            prios = self.dprios
            if len(prios) == 1:  # one data priority at this port: inlined as in ``_wake``
                p = prios[0]
                q = self.queues[p]
                if not q or self.paused[p]:
                    return
                pkt = q.popleft()
                size = pkt.size
                qb = self.qbytes
                qb[p] -= size
                self.qtotal -= size
                self.buf.used -= size
                pp = pkt.pfc_port
                if pp is not None:
                    if pp.hdr[p] or pp.pause_sent[p]:
                        self._release_ingress(pkt, pp, p, size)
                    else:
                        pkt.pfc_port = None
                        pp.ing[p] -= size
                if self.mark_deq and pkt.ect and qb[p] > self.kmin[p]:
                    self.node.mark(self, pkt, qb[p])
            else:
                pkt = self._pick_data()
                if pkt is None:
                    return
                size = pkt.size
        else:
            return
        if pkt.intl is not None:
            pkt.intl.append((self, self.qtotal, self.tx_bytes + size, now, self.rate_bps))
        t = size * self.ps_per_byte + self.rem
        ser = int(t)
        self.rem = t - ser
        self.busy_until = bu = now + ser
        self.tx_packets += 1
        self.tx_bytes += size
        pkt.ts_arr = arr = bu + self.delay_ps
        hq = self.hq
        pipe = self.pipe
        if pipe:
            pipe.append(pkt)
        else:
            pipe.append(pkt)
            pe = self._pipe_ev
            pe.callbacks = self.pipe_cbs
            heappush(hq, (arr, NORMAL, next(self.eid), pe))
        if self.qtotal:
            self.wake_pending = True
            self.callbacks = self.wake_cbs
            heappush(hq, (bu, NORMAL, next(self.eid), self))

    def _arrive_fwd_int(self, ev) -> None:
        """``_arrive_fwd`` with INT on: a data packet that starts at once on an idle egress is stamped."""
        pipe = self.pipe
        pkt = pipe.popleft()
        if pipe:
            ev.callbacks = self.pipe_cbs
            heappush(self.hq, (pipe[0].ts_arr, NORMAL, next(self.eid), ev))
        hop = pkt.hop
        port = pkt.route[hop]
        pkt.hop = hop + 1
        if not port.wake_pending:
            now = pkt.ts_arr
            bu = port.busy_until
            prio = pkt.prio
            if bu <= now:
                if port.paused[prio]:
                    self.peer.admit(pkt, port, self, prio)
                    return
                bu = now
                if pkt.intl is not None:
                    pkt.intl.append((port, port.qtotal, port.tx_bytes + pkt.size, now,
                                                     port.rate_bps))
            elif prio != CONTROL_PRIORITY:   # busy: data queues; control goes right after (port.commit)
                self.peer.admit(pkt, port, self, prio)
                return
            size = pkt.size
            t = size * port.ps_per_byte + port.rem
            ser = int(t)
            port.rem = t - ser
            port.busy_until = bu = bu + ser
            port.tx_packets += 1
            port.tx_bytes += size
            pkt.ts_arr = arr = bu + port.delay_ps
            pp = port.pipe
            pp.append(pkt)
            if len(pp) == 1:
                pe = port._pipe_ev
                pe.callbacks = port.pipe_cbs
                heappush(self.hq, (arr, NORMAL, next(self.eid), pe))
            return
        self.peer.admit(pkt, port, self, pkt.prio)
