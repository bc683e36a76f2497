"""Connections whose messages leave the sender in order: the send queue of one queue pair on the packet backend.

A collective's connection (:class:`netsim.collectives.engine.Run`: one per
``(channel, src, dst)``, up to ``window`` chunks in flight) is one RDMA queue
pair or NVLink channel: its work requests run in post order, so the NIC sends
every packet of chunk ``k`` before the first packet of chunk ``k + 1`` (the
InfiniBand Architecture Specification's ordering rules for the send queue of a
reliable connection). The NIC round-robins packets between *connections*, not
between the messages of one.

Modelled here (:class:`InOrderSends`, built by the packet backend on its first
``send_in_order``): a flow sent on a connection whose previous flow has not
yet sent its last new packet is built at its post (flow id, start time,
record) but kept off its NIC's round robin; when the flow ahead sends its last
new packet, it joins the round robin behind it. Its FCT counts the wait.

Left out: a retransmission of the flow ahead after that moment does not hold
the next flow back (a real queue pair's go-back-N would resend in order).
"""
from __future__ import annotations

from ...network.connections import ConnectionQueues


class InOrderSends:
    """Per-connection send queues of one packet backend (``backend.in_order``)."""

    def __init__(self, backend):
        self.backend = backend
        self.queues = ConnectionQueues()       # busy connections, flows waiting behind them

    @property
    def held(self) -> int:
        """Flows that waited behind an earlier flow of their connection."""
        return self.queues.held

    def send(self, connection, src: str, dst: str, size_bytes: int, tag, in_network: bool, priority=None):
        """Send on ``connection`` (any hashable key, one per queue pair), after its earlier flows."""
        b = self.backend
        b.hold = self._hold if self.queues.busy(connection) else None
        b.last_flow = None
        try:
            ev = b.send_in_network(src, dst, size_bytes, tag) if in_network else \
                    b.send(src, dst, size_bytes, tag, priority=priority)
        finally:
            b.hold = None
        flow = b.last_flow
        if flow is not None:
            b.last_flow = None
            if not self.queues.busy(connection):
                if flow.snd_nxt < flow.size:      # not all sent at once by an idle NIC inside send
                    self.queues.open(connection)
                    self._watch(connection, flow)
            else:
                self.queues.hold(connection, flow)
        return ev

    @staticmethod
    def _hold(flow, now: int) -> None:
        """The backend's start step for a held flow: it stays off the round robin (``in_ring`` set)."""
        flow.in_ring = True

    def _watch(self, connection, flow) -> None:
        """Release the connection's next flow when ``flow`` has sent its last new packet."""
        plain = flow.next_packet

        def next_packet(now):
            pkt = plain(now)
            if flow.snd_nxt >= flow.size:
                del flow.next_packet              # back to the class's method
                self._release(connection, flow, now)
            return pkt
        flow.next_packet = next_packet

    def _release(self, connection, flow, now: int) -> None:
        g = self.queues.release(connection)
        if g is None:
            return
        self._watch(connection, g)
        g.in_ring = False
        if g.port is flow.port:
            g.in_ring = True
            flow.port.ring.append(g)              # behind the flow ahead; its NIC is transmitting now
        else:
            g.wake_sender(now)
