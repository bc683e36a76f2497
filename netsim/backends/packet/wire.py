"""The wire of a :class:`~.port.Port`: the pipe of packets in flight and their arrival at the peer.

A link delivers in order, so the packets serialized onto it wait in the
port's ``pipe`` (a FIFO) with their arrival time ``ts_arr``; the pipe has one
pending event, :class:`PipeEvent`, for its head. On arrival at a forwarding
peer the common case is inlined (:meth:`WireMixin._arrive_fwd`: an idle,
unpaused egress starts the packet at once, control cuts in after the current
transmission, everything else goes through ``Forwarder.admit``; once INT is
on, its stamping copy ``IntMixin._arrive_fwd_int`` of :mod:`.intport`); at an
endpoint the packet goes to its flow (:meth:`WireMixin._arrive_end`, with
the time: the head of a pipe arrives at its ``ts_arr``); lossy
links, per-packet spraying and tests' interceptors use the generic
:meth:`WireMixin._arrive`, a failed link :meth:`WireMixin._arrive_down`.

Left out: bit errors other than the per-packet ``error_rate`` (applied by the
receiving node), propagation jitter.
"""
from __future__ import annotations

from heapq import heappush

from ...transport.packet import CNP, CONTROL_PRIORITY, DATA
from .scheduler import NORMAL


class PipeEvent:
    """The arrival of the head packet of a link's pipe (one pending per busy link)."""

    __slots__ = ("callbacks",)
    _ok = True



class WireMixin:
    """Arrivals at the far end of a :class:`~.port.Port`'s link (methods only; state lives in the port)."""

    __slots__ = ()

    def _arrive_down(self, ev) -> None:
        pipe = self.pipe
        pkt = pipe.popleft()
        if pipe:
            ev.callbacks = self.pipe_cbs
            heappush(self.hq, (pipe[0].ts_arr, NORMAL, next(self.eid), ev))
        self.drops += 1
        self.net.drop(pkt, self)

    def intercept(self, fn) -> None:
        """Deliver every packet arriving over this link to ``fn(pkt)`` (tests: loss injection)."""
        self.recv = fn
        self.pipe_cbs = (self._arrive, self.net.drive_cb)

    def _arrive_fwd(self, ev) -> None:
        """Head of the pipe reaches a forwarding peer: route it and, if the egress is free, send it on.

        The same as ``peer.receive(pkt)`` with the common case inlined (links
        without random loss, per-flow routes; the others use :meth:`_arrive`).
        """
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
            if port.busy_until <= now:
                if not port.paused[pkt.prio]:
                    t = pkt.size * port.ps_per_byte + port.rem
                    ser = int(t)
                    port.rem = t - ser
                    port.busy_until = bu = now + ser
                    port.tx_packets += 1
                    port.tx_bytes += pkt.size
                    pkt.ts_arr = arr = bu + port.delay_ps
                    pp = port.pipe
                    if pp:
                        pp.append(pkt)
                    else:
                        pp.append(pkt)
                        pe = port._pipe_ev
                        pe.callbacks = port.pipe_cbs
                        heappush(self.hq, (arr, NORMAL, next(self.eid), pe))
                    return
            elif pkt.prio == CONTROL_PRIORITY:  # port.commit(pkt), inlined
                t = pkt.size * port.ps_per_byte + port.rem
                ser = int(t)
                port.rem = t - ser
                port.busy_until = bu = port.busy_until + ser
                port.tx_packets += 1
                port.tx_bytes += pkt.size
                pkt.ts_arr = arr = bu + port.delay_ps
                pp = port.pipe
                if pp:
                    pp.append(pkt)
                else:
                    pp.append(pkt)
                    pe = port._pipe_ev
                    pe.callbacks = port.pipe_cbs
                    heappush(self.hq, (arr, NORMAL, next(self.eid), pe))
                return
        self.peer.admit(pkt, port, self, pkt.prio)

    def _arrive_end(self, ev) -> None:
        """Head of the pipe reaches an endpoint: hand it to its flow (``Endpoint.receive`` inlined)."""
        pipe = self.pipe
        pkt = pipe.popleft()
        if pipe:
            ev.callbacks = self.pipe_cbs
            heappush(self.hq, (pipe[0].ts_arr, NORMAL, next(self.eid), ev))
        kind = pkt.kind      # the pipe's head arrives at its ts_arr: that is the time now
        if kind == DATA:
            pkt.flow.on_data(pkt, pkt.ts_arr)
        elif kind == CNP:
            pkt.flow.on_cnp(pkt, pkt.ts_arr)
        else:
            pkt.flow.on_ack(pkt, pkt.ts_arr)

    def _arrive(self, ev) -> None:
        """Generic arrival: ``recv(pkt)`` (the peer's ``receive``, or a test's interceptor)."""
        pipe = self.pipe
        pkt = pipe.popleft()
        if pipe:
            ev.callbacks = self.pipe_cbs
            heappush(self.hq, (pipe[0].ts_arr, NORMAL, next(self.eid), ev))
        pkt.in_port = self
        self.recv(pkt)

    def use_generic_arrival(self) -> None:
        """Deliver through ``peer.receive`` (random loss on the link, per-packet spraying)."""
        self.pipe_cbs = (self._arrive, self.net.drive_cb)

    def _arrive_wd(self, ev) -> None:
        """Arrival over a link whose queue the PFC watchdog stormed with action drop (:mod:`.pfcwatch`).

        A packet of a stormed priority is discarded; any other is delivered
        by the arrival handler the watchdog replaced.
        """
        pkt = self.pipe[0]
        if self.storm[pkt.prio]:
            pipe = self.pipe
            pipe.popleft()
            if pipe:
                ev.callbacks = self.pipe_cbs
                heappush(self.hq, (pipe[0].ts_arr, NORMAL, next(self.eid), ev))
            self.drops += 1
            self.net.pfc_watch.dropped_packets += 1
            self.net.drop(pkt, self)
        else:
            self.wd[3][0](ev)
