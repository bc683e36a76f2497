"""Egress service of a :class:`~.port.Port`: the dequeue point, the scheduler among queues, the NIC ring.

:meth:`EgressMixin._wake` runs when a port's wire is free: it takes the next
packet — the control class first (ACK, NACK, CNP: never paused), then the
data priorities (strict priority, or deficit round robin with per-priority
quanta, Shreedhar & Varghese), then, at an endpoint's NIC, the next sending
flow of the round robin ``ring`` (window and pacing honoured) — and starts
its serialization. At a relaying endpoint (``relay_fair``: a GPU with
``gpu_forwarding``, :class:`~.node.RelayEndpoint`) the transit queue and the
own flows take turns instead (:meth:`EgressMixin._relay_pick`).

A port's wake-up handler is chosen once for its features
(:meth:`EgressMixin.choose_wake`, kept in ``Port.wake`` / ``wake_cbs``), so
the per-packet path tests nothing it does not need: plain :meth:`_wake`
(no relay fairness, no INT stamping: nearly every port), ``_wake_int`` of
:mod:`.intport` (a forwarding port once INT is on) and
:meth:`EgressMixin._wake_featured` (relay fairness, or INT at a port with
flows: the same steps through the helpers :meth:`_pick_next` and
:meth:`_send_woken`). A data packet leaves its queue in exactly one of two
ways, the inlined single-priority branch of ``_wake`` / ``_wake_int`` and
:meth:`EgressMixin._dequeued` (several priorities): both release its buffer
bytes, its PFC ingress count (:mod:`.pfcport`) and, with ``ecn_mark_at:
dequeue``, ECN-mark it. A packet that finds its egress idle on arrival
never queues (``Port.start`` / the inlined fast path in :mod:`.wire`).

Where a packet's transmission starts (``ts_arr`` set, ``tx_packets`` and
``tx_bytes`` counted), for whoever stamps packets as they leave (in-band
telemetry, :mod:`.intport`): the wake-up handlers here and in
:mod:`.intport` (after the dequeue, every queued packet and every packet a
NIC pulls from its flows), ``Port.start`` (idle port), ``Port.commit``
(control behind the current packet) and the inlined copies in
``WireMixin._arrive_fwd`` and ``IntMixin._arrive_fwd_int``.

Left out: weighted strict-priority mixes, shaping, per-queue rate limits.
"""
from __future__ import annotations

from heapq import heappush

from ...transport.packet import CONTROL_PRIORITY
from .scheduler import NORMAL


class EgressMixin:
    """Packet selection and dequeue of a :class:`~.port.Port` (methods only; state lives in the port)."""

    __slots__ = ()

    def _wake(self, _ev, now=None) -> None:
        """The wire is free: send the next packet (control, data queues, then flows). Plain ports only.

        As the port's own event (``now`` None) it fires at ``busy_until`` (unchanged while a wake-up is
        pending); a direct call passes the current time ``now`` (ps)."""
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
            if len(prios) == 1:  # the common case, inlined: one data priority at this port
                p = prios[0]
                q = self.queues[p]
                if q and not self.paused[p]:
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
                        else:  # nothing in headroom, no PAUSE to lift: just the count (inlined)
                            pkt.pfc_port = None
                            pp.ing[p] -= size
                    if self.mark_deq and pkt.ect and qb[p] > self.kmin[p]:
                        self.node.mark(self, pkt, qb[p])
                else:
                    pkt = None
            else:
                pkt = self._pick_data()
        else:
            pkt = None
        if pkt is None:  # no control, no data queued or none may go: the NIC's flows, if any
            if not self.ring:
                return
            pkt = self._pick_flow(now)
            if pkt is None:
                return
        size = pkt.size
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
        elif self.ring:
            ring = self.ring
            # the only flow paced past the end of this transmission: its pacing tick (which kicks the port)
            # instead of a wake-up at ``busy_until`` that would only find it paced and schedule that tick
            if len(ring) == 1 and ring[0].next_tx > bu:
                ring[0].wait_pacing()
                return
            self.wake_pending = True
            self.callbacks = self.wake_cbs
            heappush(hq, (bu, NORMAL, next(self.eid), self))

    def _wake_featured(self, _ev, now=None) -> None:
        """:meth:`_wake` of a port with a feature: relay fairness (``relay_fair``) or INT stamping with flows.

        The same steps through helpers (these ports are few): :meth:`_pick_next`, the INT stamp, then
        :meth:`_send_woken`.
        """
        if now is None:
            now = self.busy_until
        self.wake_pending = False
        pkt = self._pick_next(now)
        if pkt is None:
            return
        if pkt.intl is not None and self.int_stamps:  # INT stamp (netsim.transport.telemetry)
            pkt.intl.append((self, self.qtotal, self.tx_bytes + pkt.size, now, self.rate_bps))
        self._send_woken(pkt, now)

    def _pick_next(self, now: int):
        """The packet :meth:`_wake` would send next (dequeued), ``None`` if nothing may go."""
        cq = self.cq
        if cq:
            pkt = cq.popleft()
            size = pkt.size
            self.qbytes[CONTROL_PRIORITY] -= size
            self.qtotal -= size
            self.buf.used -= size
            return pkt
        if self.relay_fair and self.qtotal and self.ring:
            return self._relay_pick(now)
        pkt = self._pick_data() if self.qtotal else None
        if pkt is None and self.ring:
            pkt = self._pick_flow(now)
        return pkt

    def _send_woken(self, pkt, now: int) -> None:
        """Serialize ``pkt`` from ``now`` (ps) and schedule the next wake-up: the tail of :meth:`_wake`."""
        size = pkt.size
        t = size * self.ps_per_byte + self.rem
        ser = int(t)
        self.rem = t - ser
        self.busy_until = bu = now + ser
        self.tx_packets += 1
        self.tx_bytes += size
        pkt.ts_arr = arr = bu + self.delay_ps
        pipe = self.pipe
        pipe.append(pkt)
        if len(pipe) == 1:
            self._pipe_ev.callbacks = self.pipe_cbs
            heappush(self.hq, (arr, NORMAL, next(self.eid), self._pipe_ev))
        ring = self.ring
        if not self.qtotal:
            if not ring:
                return
            if len(ring) == 1 and ring[0].next_tx > bu:   # paced past this transmission: its tick instead
                ring[0].wait_pacing()
                return
        self.wake_pending = True
        self.callbacks = self.wake_cbs
        heappush(self.hq, (bu, NORMAL, next(self.eid), self))

    def choose_wake(self) -> None:
        """Pick this port's wake-up handler once for its features (again when one is switched on).

        Plain :meth:`_wake` (no relay fairness, no INT stamping: the common case), ``_wake_int``
        (:mod:`.intport`: a forwarding port stamping INT) or :meth:`_wake_featured` (the rest).
        A wake-up already pending fires the new handler.
        """
        if self.relay_fair or (self.int_stamps and self.ring is not None):
            fn = self._wake_featured
        elif self.int_stamps:
            fn = self._wake_int
        else:
            fn = self._wake
        self.wake = fn
        self.wake_cbs = (fn, self.net.drive_cb)
        if self.wake_pending:
            self.callbacks = self.wake_cbs

    def _dequeued(self, pkt, prio: int) -> None:
        size = pkt.size
        self.qbytes[prio] -= size
        self.qtotal -= size
        self.buf.used -= size
        pp = pkt.pfc_port
        if pp is not None:
            self._release_ingress(pkt, pp, prio, size)
        if self.mark_deq and pkt.ect:
            self.node.mark(self, pkt, self.qbytes[prio])


    def _pick_data(self):
        prios = self.dprios
        queues, paused = self.queues, self.paused
        if len(prios) == 1 or self.strict:
            for p in prios:
                q = queues[p]
                if q and not paused[p]:
                    pkt = q.popleft()
                    self._dequeued(pkt, p)
                    return pkt
            return None
        # deficit round robin
        n = len(prios)
        i, fresh = self.rr, self.fresh
        deficit, quantum = self.deficit, self.quantum
        for _ in range(2 * n + 1):
            p = prios[i]
            q = queues[p]
            if q and not paused[p]:
                if not fresh:
                    deficit[p] += quantum[p]
                    fresh = True
                size = q[0].size
                if deficit[p] >= size:
                    deficit[p] -= size
                    self.rr, self.fresh = i, fresh
                    pkt = q.popleft()
                    self._dequeued(pkt, p)
                    return pkt
            elif not q:
                deficit[p] = 0
            i = (i + 1) % n
            fresh = False
        self.rr, self.fresh = i, fresh
        return None


    def _relay_pick(self, now: int):
        """A relaying endpoint's port with transit queued and own flows: round robin between them.

        The transit queue is one member of the round robin and each own flow is
        one (so one relayed connection and ``k`` own ones share the link
        ``1/(k+1)`` each, the flow backend's max-min; relayed connections share
        their one turn, as the flow backend's port-fair lossless hop shares by
        ingress): after a transit packet, each own flow in the ring may send one
        before the next transit packet.
        """
        if self.own_credit > 0:
            pkt = self._pick_flow(now)
            if pkt is not None:
                self.own_credit -= 1
                return pkt
        pkt = self._pick_data()
        if pkt is not None:
            self.own_credit = len(self.ring)
            return pkt
        return self._pick_flow(now)

    def _pick_flow(self, now: int):
        ring = self.ring
        paused = self.paused
        for _ in range(len(ring)):
            f = ring.popleft()
            if not f.ready():
                f.in_ring = False
                continue
            ring.append(f)
            if paused[f.prio]:
                continue
            if f.next_tx > now:
                f.wait_pacing()
                continue
            pkt = f.next_packet(now)
            if len(ring) == 1 and not f.ready():
                # its window is closed: leave the ring now rather than at a wake-up that would find
                # nothing to send (an ACK puts it back, wake_sender); with one flow the order is unchanged
                ring.pop()
                f.in_ring = False
            return pkt
        return None

