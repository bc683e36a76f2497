"""An egress port: per-priority queues, a scheduler, PFC pause state, a wire.

One :class:`Port` per direction of every link (``node -> peer``). Speed
design (the hot path of the whole simulator):

* a packet starts serialization the moment the port is free; the port then
  only records the packet's *arrival* time at the peer (``ser + delay``
  later) in the link's pipe, a FIFO of the packets on the wire (a link
  delivers in order). The pipe has one pending SimPy event, for its head, so
  an uncongested hop costs one event and the event heap holds one entry per
  busy link rather than one per packet in flight;
* a port with more work queued schedules itself (it is its own event, at
  most one pending) for the instant its current transmission ends
  (``busy_until``) and picks the next packet then. So a busy port has one
  pending event, an idle one none; a NIC whose only flow is paced beyond the
  end of the current transmission has instead the flow's pacing tick pending
  (one event per paced packet, not a wake-up plus a tick);
* serialization keeps its fractional picoseconds (``rem``), so a 400 Gbps or
  1.2 Tbps link carries exactly its rate over a long flow.

Queues: one deque per 802.1p priority (0..7) plus a control class (ACK, NACK,
CNP: served first, never paused, never dropped). Data priorities are served by
strict priority (higher number first) or deficit round robin. A port at a
host/GPU also serves the flows of that endpoint (``ring``): the NIC pulls the
next packet of each sending flow round robin, honouring each flow's window
and pacing rate, so it never holds a queue of data packets.

The transport talks to its NIC port through :meth:`Port.add_sender`,
:meth:`Port.remove_sender`, :meth:`Port.kick` (a flow's window opened or its
pacing expired), :meth:`Port.send_control` (ACK/NACK/CNP) and ``rate_bps``;
the rest is the port's own. Events are scheduled through the network's
:class:`~.scheduler.Scheduler` (the heap push is inlined on the per-packet
paths, in the scheduler's entry layout).

Left out: cut-through switching, preamble/inter-frame gap, pause-frame
serialization (a PFC frame takes effect one propagation delay after it is
triggered).
"""
from __future__ import annotations

from collections import deque
from heapq import heappush

from ...transport.packet import CNP, CONTROL_PRIORITY, DATA, N_PRIORITIES
from ...transport.telemetry import stamp as int_stamp
from .scheduler import NORMAL


class _PipeEvent:
    """The arrival of the head packet of a link's pipe (one pending per busy link)."""

    __slots__ = ("callbacks",)
    _ok = True


class Port:
    """Egress of ``node`` towards ``peer`` over a link of ``rate_bps`` / ``delay_ps``."""

    __slots__ = ("callbacks", "env", "net", "node", "peer", "name", "peer_name", "rate_bps", "ps_per_byte",
                 "delay_ps", "err", "rem", "busy_until", "wake_pending", "queues", "qbytes", "cq",
                 "dprios", "paused", "pause_since", "pause_time_ps", "pauses", "ring", "buf", "wake_cbs",
                 "ing", "hdr", "pause_sent", "xoff", "xon", "headroom", "tx_packets", "drops", "ecn_marks",
                 "deficit", "quantum", "rr", "fresh", "strict", "kmin", "kmax", "pmax", "mark_deq", "ecn_on",
                 "touched", "last_sample", "limit", "qtotal", "known", "hq", "eid", "pipe", "pipe_cbs",
                 "recv", "_pipe_ev", "down")
    _ok = True  # SimPy event protocol: a port wake always succeeds

    def __init__(self, net, node, peer, rate_bps: float, delay_ps: int, err: float = 0.0):
        self.callbacks = None
        self.env = net.env
        self.hq = net.sched.heap     # the scheduler's event heap and id counter (pushes inlined, scheduler.py)
        self.eid = net.sched.ids
        self.net = net
        self.node = node            # sending Node
        self.peer = peer            # receiving Node
        self.name = node.name
        self.peer_name = peer.name
        self.rate_bps = float(rate_bps)
        self.ps_per_byte = 8e12 / self.rate_bps
        self.delay_ps = int(delay_ps)
        self.err = float(err)
        self.rem = 0.0
        self.busy_until = 0
        self.wake_pending = False
        self.queues = [deque() for _ in range(N_PRIORITIES)]
        self.qbytes = [0] * N_PRIORITIES
        self.qtotal = 0              # bytes queued, all priorities (> 0 iff a packet is queued)
        self.cq = self.queues[CONTROL_PRIORITY]
        self.dprios: list[int] = []  # data priorities seen here, in service order
        self.known = [False] * N_PRIORITIES
        self.known[CONTROL_PRIORITY] = True
        self.paused = [False] * N_PRIORITIES
        self.pause_since = [0] * N_PRIORITIES
        self.pause_time_ps = 0
        self.pauses = 0
        self.ring = None             # deque of sending flows (endpoint ports only)
        self.buf = node.buf          # the node's shared-buffer accounting
        drive = net.drive_cb
        self.wake_cbs = (self._wake, drive)
        self.pipe = deque()          # packets on the wire, in arrival order (FIFO link)
        self.recv = peer.receive
        # forwarding peers get the inlined fast path, endpoints theirs; lossy links (err) and spraying
        # use the generic one (the network sets it, see use_generic_arrival)
        self.pipe_cbs = (self._arrive_fwd, drive) if hasattr(peer, "admit") else (self._arrive_end, drive)
        if self.err:
            self.pipe_cbs = (self._arrive, drive)
        self._pipe_ev = _PipeEvent()
        # PFC ingress accounting of the *peer* for traffic arriving over this link
        self.ing = [0] * N_PRIORITIES
        self.hdr = [0] * N_PRIORITIES    # of which in the peer's reserved headroom (see Forwarder.admit)
        self.pause_sent = [False] * N_PRIORITIES
        self.xoff = [0] * N_PRIORITIES
        self.xon = [0] * N_PRIORITIES
        self.headroom = [0] * N_PRIORITIES
        self.tx_packets = 0
        self.drops = 0
        self.ecn_marks = 0
        self.deficit = [0] * N_PRIORITIES
        self.quantum = [0] * N_PRIORITIES
        self.rr = 0
        self.fresh = False
        self.strict = False
        self.kmin = [0] * N_PRIORITIES
        self.kmax = [0] * N_PRIORITIES
        self.pmax = [0.0] * N_PRIORITIES
        self.ecn_on = False
        self.mark_deq = False        # ECN marking at dequeue (implies ecn_on)
        self.touched = False
        self.last_sample = [0] * N_PRIORITIES
        self.limit = 0               # static buffer share (bytes), 0 = unused
        self.down = False            # failed link (fail): everything sent on it is lost

    # -- queueing ---------------------------------------------------------------------------------
    def add_prio(self, prio: int) -> None:
        """Register a data priority for service at this port (kept in service order)."""
        self.known[prio] = True
        if prio not in self.dprios:
            self.dprios.append(prio)
            self.dprios.sort(reverse=True)
            self.rr = 0
            self.fresh = False

    def enqueue(self, pkt) -> None:
        """Queue ``pkt`` (accounting already done by the node) and make sure it gets served."""
        prio = pkt.prio
        size = pkt.size
        if not self.known[prio]:
            self.add_prio(prio)
        self.queues[prio].append(pkt)
        self.qbytes[prio] += size
        self.qtotal += size
        if not self.touched:
            self.touched = True
            if self.ring is None:
                self.net.touched_ports.append(self)
        if not self.wake_pending:
            now = self.env.now
            if now < self.busy_until:
                self.wake_pending = True
                self.callbacks = self.wake_cbs
                heappush(self.hq, (self.busy_until, NORMAL, next(self.eid), self))
            elif not self.paused[prio]:
                self._wake(None, now)

    def send_control(self, pkt, now: int) -> None:
        """Send an ACK/NACK/CNP from this (endpoint) port at ``now`` (ps): at once if idle, else first in line."""
        if not self.wake_pending:
            if now >= self.busy_until:
                self.start(pkt, now)
                if self.qtotal or self.ring:
                    self.schedule_wake()
            else:
                self.commit(pkt)
        else:
            self.buf.used += pkt.size  # the accounting a node's admit does (released when dequeued)
            self.enqueue(pkt)

    def commit(self, pkt) -> None:
        """Transmit a control packet right after the current transmission (port busy, nothing pending).

        Exactly what a wake-up at ``busy_until`` would do — control is served
        first and never paused — without the wake-up event.
        """
        t = pkt.size * self.ps_per_byte + self.rem
        ser = int(t)
        self.rem = t - ser
        bu = self.busy_until = self.busy_until + ser
        self.tx_packets += 1
        pkt.ts_arr = arr = bu + self.delay_ps
        pipe = self.pipe
        pipe.append(pkt)
        if len(pipe) == 1:
            self._pipe_ev.callbacks = self.pipe_cbs
            heappush(self.hq, (arr, NORMAL, next(self.eid), self._pipe_ev))

    def kick(self, now: int) -> None:
        """New work may be eligible at ``now`` (ps): a flow's window opened, pacing expired, PFC resume."""
        if self.wake_pending:
            return
        if now >= self.busy_until:
            self._wake(None, now)
        else:
            self.schedule_wake()

    def schedule_wake(self) -> None:
        """Wake up when the current transmission ends (``busy_until``); no wake-up may be pending."""
        self.wake_pending = True
        self.callbacks = self.wake_cbs
        heappush(self.hq, (self.busy_until, NORMAL, next(self.eid), self))

    def add_sender(self, flow, now: int) -> None:
        """``flow`` (of this endpoint) has data it may send at ``now`` (ps): join the round robin, kick."""
        self.ring.append(flow)
        self.kick(now)

    def remove_sender(self, flow) -> None:
        """``flow`` no longer sends through this port (it was rerouted)."""
        if flow in self.ring:
            self.ring.remove(flow)

    def _wake(self, _ev, now=None) -> None:
        """The wire is free: pick the next packet (control, data queues, then flows) and send it.

        As the port's own event (``now`` None) it fires at ``busy_until``
        (which nothing changes while a wake-up is pending), so that is the
        time; a direct call passes the current time ``now`` (ps).
        """
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
            if pkt is None:
                if not self.ring:
                    return
                pkt = self._pick_flow(now)
                if pkt is None:
                    return
        elif self.ring:
            pkt = self._pick_flow(now)
            if pkt is None:
                return
        else:
            return
        if pkt.intl is not None: int_stamp(self, pkt, now)  # noqa: E701  (INT hook: netsim.transport.telemetry)
        t = pkt.size * self.ps_per_byte + self.rem
        ser = int(t)
        self.rem = t - ser
        self.busy_until = bu = now + ser
        self.tx_packets += 1
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
            if len(ring) == 1:
                f = ring[0]
                nt = f.next_tx
                if nt > bu:
                    # the only flow is paced past the end of this transmission: one wake-up, at its
                    # pacing time (the flow's tick kicks the port), instead of a wake-up at
                    # ``busy_until`` that would only find it paced and schedule that tick
                    f.wait_pacing()
                    return
            self.wake_pending = True
            self.callbacks = self.wake_cbs
            heappush(hq, (bu, NORMAL, next(self.eid), self))

    # -- transmission -----------------------------------------------------------------------------
    def start(self, pkt, now: int) -> None:
        """Serialize ``pkt`` from ``now`` (ps, the port is idle); schedule its arrival at the peer."""
        if pkt.intl is not None: int_stamp(self, pkt, now)  # noqa: E701  (INT hook)
        t = pkt.size * self.ps_per_byte + self.rem
        ser = int(t)
        self.rem = t - ser
        bu = self.busy_until = now + ser
        self.tx_packets += 1
        pkt.ts_arr = arr = bu + self.delay_ps
        pipe = self.pipe
        pipe.append(pkt)
        if len(pipe) == 1:
            self._pipe_ev.callbacks = self.pipe_cbs
            heappush(self.hq, (arr, NORMAL, next(self.eid), self._pipe_ev))

    def fail(self) -> None:
        """The link fails: from now on every packet reaching its end is dropped (a black hole).

        Packets keep being serialized (queued ones drain, so buffer and PFC
        accounting stay exact) and are lost on arrival; a pause in force is
        lifted (the peer can no longer resume it) and later PAUSEs are ignored.
        """
        self.down = True
        self.pipe_cbs = (self._arrive_down, self.net.drive_cb)
        if self.pipe:
            self._pipe_ev.callbacks = self.pipe_cbs
        for prio in range(N_PRIORITIES):
            if self.paused[prio]:
                self.set_paused(prio, False)

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
                    if pkt.intl is not None: int_stamp(port, pkt, now)  # noqa: E701  (INT hook)
                    t = pkt.size * port.ps_per_byte + port.rem
                    ser = int(t)
                    port.rem = t - ser
                    port.busy_until = bu = now + ser
                    port.tx_packets += 1
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
        kind = pkt.kind
        if kind == DATA:
            pkt.flow.on_data(pkt)
        elif kind == CNP:
            pkt.flow.on_cnp(pkt)
        else:
            pkt.flow.on_ack(pkt)

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

    def _release_ingress(self, pkt, pp, prio: int, size: int) -> None:
        """A lossless packet leaves the buffer: release it from its ingress group (``pp``), headroom first.

        RESUME goes upstream once the group is at or below XON with its
        headroom empty (a group paused because the shared pool was full, not
        its own share, waits until what landed in headroom has drained, so a
        resumed sender finds the whole headroom again).
        """
        pkt.pfc_port = None
        c = pp.ing[prio] - size
        pp.ing[prio] = c
        h = pp.hdr[prio]
        if h:
            if h > size:
                h -= size
                self.buf.hdr_used -= size
            else:
                self.buf.hdr_used -= h
                h = 0
            pp.hdr[prio] = h
        if c <= pp.xon[prio] and pp.pause_sent[prio] and not h:
            self.net.pfc_signal(pp, prio, False)

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

    # -- PFC --------------------------------------------------------------------------------------
    def set_paused(self, prio: int, on: bool) -> None:
        now = self.env.now
        if on == self.paused[prio]:
            return
        self.paused[prio] = on
        if on:
            self.pause_since[prio] = now
            self.pauses += 1
        else:
            self.pause_time_ps += now - self.pause_since[prio]
            self.kick(now)

    def __repr__(self) -> str:  # pragma: no cover
        return f"Port({self.name}->{self.peer_name})"
