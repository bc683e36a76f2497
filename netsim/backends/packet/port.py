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
the rest is the port's own. The code is split by role: this module
(state, queueing, transmission start), :mod:`.egress` (the dequeue point
``_wake``: what is sent next), :mod:`.wire` (the link's pipe, arrivals at the
peer), :mod:`.pfcport` (PAUSE obeyed, ingress release), :mod:`.intport` (the INT-stamping
copies of the per-packet paths, switched on by the first HPCC flow). Events are scheduled through the network's
:class:`~.scheduler.Scheduler` (the heap push is inlined on the per-packet
paths, in the scheduler's entry layout).

Left out: cut-through switching, preamble/inter-frame gap, pause-frame
serialization (a PFC frame takes effect one propagation delay after it is
triggered).
"""
from __future__ import annotations

from collections import deque
from heapq import heappush

from ...transport.packet import CONTROL_PRIORITY, N_PRIORITIES
from .egress import EgressMixin
from .intport import IntMixin
from .pfcport import PfcMixin
from .scheduler import NORMAL
from .wire import PipeEvent, WireMixin


class Port(EgressMixin, WireMixin, PfcMixin, IntMixin):
    """Egress of ``node`` towards ``peer`` over a link of ``rate_bps`` / ``delay_ps``.

    The state of every role lives here (``__slots__``); the methods are split
    by role: queueing and transmission here, the dequeue and the scheduler in
    :mod:`.egress`, the link's pipe and arrivals in :mod:`.wire`, PFC pause
    and ingress release in :mod:`.pfcport`.
    """

    __slots__ = ("callbacks", "env", "net", "node", "peer", "name", "peer_name", "rate_bps", "ps_per_byte",
                 "delay_ps", "err", "rem", "busy_until", "wake_pending", "queues", "qbytes", "cq",
                 "dprios", "paused", "pause_since", "pause_time_ps", "pauses", "ring", "buf", "wake_cbs",
                 "ing", "hdr", "pause_sent", "xoff", "xon", "headroom", "tx_packets", "tx_bytes", "drops", "ecn_marks",
                 "deficit", "quantum", "rr", "fresh", "strict", "kmin", "kmax", "pmax", "mark_deq", "ecn_on",
                 "touched", "last_sample", "limit", "qtotal", "known", "hq", "eid", "pipe", "pipe_cbs",
                 "recv", "_pipe_ev", "down",
                 "dyn_alpha", "xon_off", "storm", "wd_req", "wd", "rng", "relay_fair", "own_credit",
                 "int_stamps", "wake")
    _ok = True  # SimPy event protocol: a port wake always succeeds

    def __init__(self, net, node, peer, rate_bps: float, delay_ps: int, err: float = 0.0):
        self.callbacks = None
        self.env = net.env
        self.hq = net.sched.heap     # the scheduler's event heap and id counter (pushes inlined, scheduler.py)
        self.eid = net.sched.ids
        self.net = net
        self.node = node            # sending Node
        #: this egress appends INT hop records (:mod:`.intport`): its node forwards and INT is on (enable_int)
        self.int_stamps = False
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
        self.pipe = deque()          # packets on the wire, in arrival order (FIFO link)
        self.recv = peer.receive
        # forwarding peers get the inlined fast path, endpoints theirs; lossy links (err) and spraying
        # use the generic one (the network sets it, see use_generic_arrival)
        self.pipe_cbs = (self._arrive_fwd, drive) if hasattr(peer, "admit") else (self._arrive_end, drive)
        if self.err:
            self.pipe_cbs = (self._arrive, drive)
        self._pipe_ev = PipeEvent()
        # PFC ingress accounting of the *peer* for traffic arriving over this link
        self.ing = [0] * N_PRIORITIES
        self.hdr = [0] * N_PRIORITIES    # of which in the peer's reserved headroom (see Forwarder.admit)
        self.pause_sent = [False] * N_PRIORITIES
        self.xoff = [0] * N_PRIORITIES
        self.xon = [0] * N_PRIORITIES
        self.headroom = [0] * N_PRIORITIES
        self.tx_packets = 0
        self.tx_bytes = 0      #: bytes this port has started transmitting (every packet; INT's txBytes)
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
        self.dyn_alpha = 0.0         # dynamic PFC XOFF alpha of the peer's ingress group (0 = static)
        self.xon_off = None          # dynamic RESUME offset per priority (thresholds.use_dynamic_thresholds)
        self.storm = None            # PFC watchdog (pfcwatch.py): per priority, stormed (None = no watchdog)
        self.wd_req = None           # per priority: the peer's PAUSE request while stormed
        self.wd = None               # watchdog settings and saved pipe callbacks (pfcwatch.enable_watchdog)
        self.relay_fair = False      # a relaying endpoint's port: transit shares with own flows (node.RelayEndpoint)
        self.own_credit = 0          # own-flow packets still due before the next transit packet (relay_fair)
        self.choose_wake()           # self.wake, self.wake_cbs: the wake-up handler for the port's features

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
                self.wake(None, now)

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
        self.tx_bytes += pkt.size
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
            self.wake(None, now)
        else:
            self.schedule_wake()

    def schedule_wake(self) -> None:
        """Wake up when the current transmission ends (``busy_until``); no wake-up may be pending."""
        self.wake_pending = True
        self.callbacks = self.wake_cbs
        heappush(self.hq, (self.busy_until, NORMAL, next(self.eid), self))

    def add_sender(self, flow, now: int) -> None:
        """``flow`` (of this endpoint) has data it may send at ``now`` (ps): join the round robin, kick.

        A flow that is alone on an idle port with nothing queued and is paced
        past ``now`` only gets its pacing tick: exactly what the wake-up would
        end in (``_pick_flow`` finds it paced), without running it.
        """
        ring = self.ring
        ring.append(flow)
        if self.wake_pending:
            return
        if now >= self.busy_until:
            if flow.next_tx > now and not self.qtotal and len(ring) == 1:
                if not self.paused[flow.prio]:
                    flow.wait_pacing()
                return
            self.wake(None, now)
        else:
            self.schedule_wake()

    def remove_sender(self, flow) -> None:
        """``flow`` no longer sends through this port (it was rerouted)."""
        if flow in self.ring:
            self.ring.remove(flow)


    # -- transmission -----------------------------------------------------------------------------
    def start(self, pkt, now: int) -> None:
        """Serialize ``pkt`` from ``now`` (ps, the port is idle); schedule its arrival at the peer."""
        if self.int_stamps and pkt.intl is not None:  # INT stamp (.intport)
            pkt.intl.append((self, self.qtotal, self.tx_bytes + pkt.size, now, self.rate_bps))
        t = pkt.size * self.ps_per_byte + self.rem
        ser = int(t)
        self.rem = t - ser
        bu = self.busy_until = now + ser
        self.tx_packets += 1
        self.tx_bytes += pkt.size
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


    def __repr__(self) -> str:  # pragma: no cover
        return f"Port({self.name}->{self.peer_name})"
