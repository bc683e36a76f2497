"""Nodes of the packet network: forwarding devices and endpoints.

* :class:`Forwarder` — an output-queued device (``switch``, ``nic``,
  ``pcie_switch``, ``nvswitch``). On arrival a packet goes straight to its
  egress port (taken from the packet's route, or sprayed over the equal-cost
  next hops). If the port is idle it starts at once; otherwise it is admitted
  into the queue:

  - lossy priority: tail drop when the buffer refuses it — shared buffer with
    the dynamic threshold ``queue + size <= alpha * (buffer - used)`` or a
    static per-port share ``buffer / ports``;
  - lossless priority (PFC on and the priority listed in
    ``lossless_priorities``; every priority at NVLink/PCIe/NIC devices):
    counted per (ingress link, priority); within XOFF and while the shared
    pool has room it is held there, otherwise a PAUSE goes upstream and it
    lands in the headroom reserved for that ingress priority (at a switch;
    :mod:`.thresholds`); at or below XON with the headroom empty a RESUME. A
    switch drops only what overflows the headroom (``pfc_headroom_overflows``),
    which the automatic headroom (one link round trip) never does;
  - ECN (switches only, ECT packets only): RED on the instantaneous egress
    queue of that priority, Kmin = Kmax is step marking.

  ACK/NACK/CNP (control class) are never dropped nor paused.
* :class:`Endpoint` — a ``gpu`` or ``host``: hands data to the flow's
  receiver and ACK/NACK/CNP to its sender. Routes never transit endpoints —
  except a :class:`RelayEndpoint`: on a topology with ``gpu_forwarding`` (GPUs
  linked to each other: ASTRA-sim Ring/FullyConnected dimensions, tori,
  meshes) a GPU is an endpoint for its own packets and an NVLink-style
  forwarder (lossless on every priority, unbounded buffer, no ECN) for the
  packets routed through it, sharing its egress with its own flows by turns.

Lossless NVLink/PCIe/NIC hops model credit-based flow control as PFC-style
backpressure with small thresholds (``internal_xoff_bytes`` /
``internal_xon_bytes``) on every priority and an unbounded buffer: they never
drop, and a slow PCIe hop backs traffic up to the GPU.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from ...transport.packet import CNP, CONTROL_PRIORITY, DATA, N_DATA_PRIORITIES, N_PRIORITIES

SWITCH_KINDS = ("switch",)
INTERNAL_KINDS = ("nic", "pcie_switch", "nvswitch")
ENDPOINT_KINDS = ("gpu", "host")


class Buffer:
    """Packet-buffer accounting of one node: a shared pool plus headroom reserved for lossless ingresses.

    ``total`` = ``shared`` + ``reserved``: ``reserved`` is the PFC headroom of
    every (ingress link, lossless priority) of the node (set by the network
    builder, :func:`~.thresholds.reserve_headroom`); ``used`` counts every
    byte queued, ``hdr_used`` those of it held in headroom, so the shared
    pool holds ``used - hdr_used``.
    """

    __slots__ = ("used", "total", "alpha", "static", "shared", "reserved", "hdr_used")

    def __init__(self, total: float, alpha: float, static: bool):
        self.used = 0
        self.total = total
        self.alpha = alpha
        self.static = static
        self.shared = total
        self.reserved = 0
        self.hdr_used = 0


class Node(ABC):
    """Base: a named device with a buffer and egress ports (filled by the network builder)."""

    def __init__(self, net, name, kind: str, params: dict):
        self.net = net
        self.env = net.env
        self.name = name
        self.kind = kind
        self.params = params
        self.ports: dict = {}   # neighbour name -> Port
        self.buf = Buffer(float("inf"), 1.0, False)

    @abstractmethod
    def receive(self, pkt) -> None:
        """A packet arrived at this node (switch: forward it; endpoint: hand it to its flow)."""


class Forwarder(Node):
    """Switch, NIC, PCIe switch or NVSwitch."""

    def __init__(self, net, name, kind, params, lossless: frozenset):
        super().__init__(net, name, kind, params)
        self.is_switch = kind in SWITCH_KINDS
        if self.is_switch:
            self.buf = Buffer(params["buffer_bytes"], params["buffer_alpha"], params["buffer_mode"] == "static")
            self.lossless = [p in lossless for p in range(N_DATA_PRIORITIES)] + [True]
        else:  # NVLink / PCIe / NIC: lossless for every priority, unbounded buffer
            self.lossless = [True] * N_PRIORITIES
        self.rng = None   # this node's spray stream (streams.assign_streams)
        self.spray: dict = {}

    def _spray_port(self, pkt):
        ports = self.spray.get(pkt.dst)
        if ports is None:
            ports = self.spray[pkt.dst] = tuple(self.ports[n] for n in self.net.router.next_hops(self.name, pkt.dst))
        if len(ports) == 1:
            return ports[0]
        return ports[int(self.rng.random() * len(ports))]

    def receive(self, pkt) -> None:
        in_port = pkt.in_port
        if in_port.err and in_port.rng.random() < in_port.err:
            self.net.drop(pkt, in_port)
            return
        route = pkt.route
        if route is not None:
            hop = pkt.hop
            port = route[hop]
            pkt.hop = hop + 1
        else:
            port = self._spray_port(pkt)
        prio = pkt.prio
        if not port.wake_pending:
            now = pkt.ts_arr     # it arrives now: a pipe head arrives at its ts_arr
            if port.busy_until <= now:
                if not port.paused[prio]:
                    port.start(pkt, now)
                    return
            elif prio == CONTROL_PRIORITY:
                port.commit(pkt)
                return
        self.admit(pkt, port, in_port, prio)

    def admit(self, pkt, port, in_port, prio: int) -> None:
        """Slow path: the egress is busy or paused — buffer admission, PFC accounting, ECN, queue."""
        size = pkt.size
        buf = self.buf
        if prio != CONTROL_PRIORITY:
            if self.lossless[prio]:
                # the common case inlined: shared pool and group share both have room
                c = in_port.ing[prio] + size
                if c - in_port.hdr[prio] <= in_port.xoff[prio] and buf.used - buf.hdr_used + size <= buf.shared:
                    in_port.ing[prio] = c
                    pkt.pfc_port = in_port
                elif not self._admit_lossless(pkt, port, in_port, prio, size, buf):
                    return
            elif buf.static:
                if port.qtotal + size > port.limit:
                    port.drops += 1
                    self.net.drop(pkt, port)
                    return
            else:
                free = buf.shared - (buf.used - buf.hdr_used)   # room left in the shared pool
                if port.qbytes[prio] + size > buf.alpha * free or size > free:
                    port.drops += 1
                    self.net.drop(pkt, port)
                    return
            if pkt.ect and port.ecn_on and not port.mark_deq and port.qbytes[prio] > port.kmin[prio]:
                self.mark(port, pkt, port.qbytes[prio])
        buf.used += size
        # port.enqueue(pkt), inlined
        if not port.known[prio]:
            port.add_prio(prio)
        port.queues[prio].append(pkt)
        port.qbytes[prio] += size
        port.qtotal += size
        if not port.touched:
            port.touched = True
            if port.ring is None:
                self.net.touched_ports.append(port)
        if not port.wake_pending:
            now = pkt.ts_arr     # the packet arrived now (every caller: a pipe head at its ts_arr)
            if now < port.busy_until:
                port.schedule_wake()
            elif not port.paused[prio]:
                port.wake(None, now)

    def _admit_lossless(self, pkt, port, in_port, prio: int, size: int, buf) -> bool:
        """PFC ingress admission of a lossless packet; False if it overflowed the headroom (dropped).

        The packet is counted against its ingress priority group (``in_port.ing``).
        It goes into the shared pool while the group's share stays within
        XOFF (static, or dynamic: ``pfc_dynamic_alpha`` x the pool left free)
        and the pool has room; otherwise the group sends PAUSE upstream
        (if it has not) and the packet lands in the group's reserved headroom
        (``in_port.hdr``), which absorbs what was already on its way. A packet
        that does not fit there either is what a real switch drops: it is
        counted in ``pfc_headroom_overflows`` and dropped.
        """
        c = in_port.ing[prio] + size
        h = in_port.hdr[prio]
        alpha = in_port.dyn_alpha
        if alpha:   # dynamic XOFF: alpha x the shared pool left free after this packet (thresholds.py)
            free = buf.shared - (buf.used - buf.hdr_used) - size
            over = free < 0 or c - h > alpha * free
        else:
            over = c - h > in_port.xoff[prio] or buf.used - buf.hdr_used + size > buf.shared
        if over:
            if not in_port.pause_sent[prio]:
                self.net.pfc_signal(in_port, prio, True)
            if h + size > in_port.headroom[prio]:
                self.net.headroom_overflows += 1
                port.drops += 1
                self.net.drop(pkt, port)
                return False
            in_port.hdr[prio] = h + size
            buf.hdr_used += size
        in_port.ing[prio] = c
        pkt.pfc_port = in_port
        return True

    def mark(self, port, pkt, q: int) -> None:
        """RED/step marking of ``pkt`` given the egress queue ``q`` (bytes) of its priority."""
        prio = pkt.prio
        kmin = port.kmin[prio]
        if q <= kmin or pkt.ce:
            return
        kmax = port.kmax[prio]
        if q > kmax or port.rng.random() < port.pmax[prio] * (q - kmin) / (kmax - kmin):
            pkt.ce = True
            port.ecn_marks += 1


class Endpoint(Node):
    """A GPU or host: the end of every route, where flows start and finish."""

    def receive(self, pkt) -> None:
        in_port = pkt.in_port
        if in_port.err and in_port.rng.random() < in_port.err:
            self.net.drop(pkt, in_port)
            return
        kind = pkt.kind
        now = pkt.ts_arr     # a pipe head arrives at its ts_arr
        if kind == DATA:
            pkt.flow.on_data(pkt, now)
        elif kind == CNP:
            pkt.flow.on_cnp(pkt, now)
        else:
            pkt.flow.on_ack(pkt, now)


class RelayEndpoint(Forwarder):
    """A GPU (``gpu_forwarding``) or host (``host_forwarding``) that also forwards: endpoint of its own
    packets, relay of others (:func:`netsim.topology.routing.relay_kinds`).

    A packet has arrived at its destination when its route is used up (``hop == len(route)``), or, sprayed
    (no route), when its ``dst`` is this GPU; anything else is forwarded like at an NVSwitch.  Ports into a
    relay GPU use the generic arrival (the network sets it), so every packet passes :meth:`receive`.
    Arbitration: the GPU's egress port takes turns between its transit queue and its own flows
    (``Port.relay_fair``, :meth:`~.egress.EgressMixin._relay_pick`): a relayed connection lands in the
    GPU's memory and is sent on by the same engine as the GPU's own connections, one FIFO slot at a time,
    so the link is shared between connections (NCCL's per-channel proxy) rather than transit first. Serving
    transit first gave a relayed flow the whole link and starved the GPU's own (5-GPU ring, 1 MiB
    gpu0->gpu2 through gpu1 beside gpu1->gpu2: 2.63 / 4.96 us against the flow backend's fair 5.07 / 4.96 us;
    now 4.96 / 4.86 us). Relayed connections share one turn of the round robin (the flow backend's
    port-fair hop shares by ingress link the same way).
    """

    def __init__(self, net, name, kind, params):
        super().__init__(net, name, kind, params, None)

    @staticmethod
    def never_pause(port) -> None:
        """The link ``port`` feeds into this relay is never paused: per-connection flow control.

        What a GPU relays lands in its memory (unbounded here, as the flow
        backend's :mod:`netsim.backends.flow.relayhol`); each connection is
        held back by its own window, not by a PAUSE of the whole link, which
        would stall the sender's other connections on it (head-of-line
        blocking a GPU's per-channel FIFOs do not have).
        """
        port.xoff[:N_DATA_PRIORITIES] = [float("inf")] * N_DATA_PRIORITIES
        port.xon[:N_DATA_PRIORITIES] = [float("inf")] * N_DATA_PRIORITIES

    def receive(self, pkt) -> None:
        route = pkt.route
        if (pkt.hop >= len(route)) if route is not None else (pkt.dst == self.name):
            Endpoint.receive(self, pkt)
        else:
            Forwarder.receive(self, pkt)
