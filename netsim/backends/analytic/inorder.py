"""Connections whose messages leave the sender in order on the analytic backend (one queue pair).

A collective's connection (:class:`netsim.collectives.engine.Run`, one per
``(channel, src, dst)``) is one queue pair: its messages run in post order
(the InfiniBand Architecture Specification's ordering rules for the send
queue of a reliable connection), so chunk ``k + 1`` starts draining through
its pacing link when chunk ``k`` has drained, while ``k`` still owes its
latency tail (as :mod:`netsim.backends.flow.inorder` and
:mod:`netsim.backends.packet.inorder`).

Modelled here (:class:`InOrderSends`, built on the first ``send_in_order``):
a flow sent on a connection whose previous flow is still draining is built at
its post (flow id, start time) but joins its pacing link's share only when
that flow has drained; its route and costs are taken again then (a link may
have changed while it waited). Its FCT counts the wait.
"""
from __future__ import annotations

from ...network.connections import ConnectionQueues


class InOrderSends:
    """Per-connection send queues of one analytic backend (``backend.in_order``)."""

    def __init__(self, backend):
        self.backend = backend
        self.queues = ConnectionQueues()
        self._conn_of: dict[int, object] = {}  # flow id of a connection's draining flow -> connection

    @property
    def held(self) -> int:
        """Flows that waited behind an earlier flow of their connection."""
        return self.queues.held

    def send(self, connection, src: str, dst: str, size_bytes: int, tag, in_network: bool, priority=None):
        """Send on ``connection`` (any hashable key, one per queue pair), after its earlier flows."""
        b = self.backend
        busy = self.queues.busy(connection)
        b.hold, b.last_flow = busy, None
        try:
            ev = b.send_in_network(src, dst, size_bytes, tag) if in_network else \
                    b.send(src, dst, size_bytes, tag, priority=priority)
        finally:
            b.hold = False
        flow, b.last_flow = b.last_flow, None
        if flow is not None:
            if busy:
                self.queues.hold(connection, flow)
            else:
                self.queues.open(connection)
                self._conn_of[flow.meta[0]] = connection
        return ev

    def drained(self, flow) -> None:
        """``flow`` has drained through its pacing link (now): its connection's next flow joins its share."""
        key = self._conn_of.pop(flow.meta[0], None)
        if key is None:
            return
        g = self.queues.release(key)
        if g is None:
            return
        b = self.backend
        fid, src, dst = g.meta[0], g.meta[1], g.meta[2]
        g = b._flow_on(b._route(src, dst, g.meta[8]), g.meta, g.event)     # on its ECMP key (meta[8])
        self._conn_of[fid] = key
        b._join(g, b.env.now)
