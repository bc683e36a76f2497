"""Connections whose messages leave the sender in order: the FIFO of one queue pair on the flow backend.

A collective's connection (:class:`netsim.collectives.engine.Run`: one per
``(channel, src, dst)``, up to ``window`` chunks in flight) is one RDMA queue
pair or one NVLink channel on real hardware. Its work requests are executed
in post order: the NIC (or the copy engine) sends every byte of chunk ``k``
before the first byte of chunk ``k + 1`` (the InfiniBand Architecture
Specification's ordering rules: the work requests of one send queue of a
reliable connection are processed in order; NCCL posts one request per chunk
slot of a connection). So
chunk ``k`` finishes one transfer time before ``k + 1``, and the next chunk
the sender posts when ``k`` completes is queued behind ``k + 1`` while it is
still on the wire: the link never idles for a hop latency between chunks.

Fair sharing the two chunks as independent flows instead starts them
together, finishes them together and leaves the link idle for the latency
term of every pair — 6 % of a 64 MiB NVLS all-reduce on an 8-GPU NVSwitch
server.

Modelled here (:class:`InOrderSends`, built by the flow backend on the first
``send_in_order``): a flow sent on a connection whose previous flow is still
on the network (its last byte has not left the sender) is built at its post
(flow id, start time, record) but held off the links; at the fluid completion
of the flow ahead of it, it joins the links and competes for bandwidth as the
connection's one flow. Its FCT counts the wait (the message was posted then).
A held flow's path constants are refreshed at its start if links changed
while it waited (:mod:`.linkchange`).

A flow the fluid DCQCN model admitted at its send is released from it while
held and admitted again at its start (its reaction point starts afresh, as
the packet backend's per-flow DCQCN state does).

Left out: a held flow's slow-start ramp is the one charged at its post (a
queue pair's window does not restart per message).
"""
from __future__ import annotations

from ...network.connections import ConnectionQueues
from ...records import EMPTY_TAG


def send_in_order(backend, connection, src: str, dst: str, size_bytes: int, tag=EMPTY_TAG, *,
                  in_network: bool = False, priority: int | None = None):
    """``FlowBackend.send_in_order``: like ``send`` (``send_in_network`` if ``in_network``) on ``connection``
    (a hashable key, one per queue pair); the flow leaves its sender after the connection's earlier flows."""
    fifo = backend.in_order or in_order_sends(backend)     # built on the first call
    return fifo.send(connection, src, dst, size_bytes, tag, in_network, priority)


def in_order_sends(backend) -> "InOrderSends":
    """Build flow backend ``backend``'s per-connection FIFOs (``backend.in_order``) and install them."""
    fifo = backend.in_order = InOrderSends(backend)
    return fifo


class InOrderSends:
    """Per-connection FIFOs of one flow backend (``backend.in_order``).

    Installs itself on the backend's flow-start step (``backend._start``: every flow the
    backend builds passes through :meth:`_route`) and on the fluid network's
    ``on_drained`` hook (:meth:`_drained`).
    """

    def __init__(self, backend):
        self.backend = backend
        self.net = backend.net
        self._start = backend._start
        backend._start = self._route
        self.net.on_drained = self._drained
        self.key = None                      # connection of the flow being built by send, else None
        self.queues = ConnectionQueues()      # busy connections, flows waiting behind them

    @property
    def held(self) -> int:
        """Flows that waited behind an earlier flow of their connection."""
        return self.queues.held

    def send(self, connection, src: str, dst: str, size_bytes: int, tag, in_network: bool, priority=None):
        """Send on ``connection`` (any hashable key; one per queue pair): ``backend.send`` (or
        ``send_in_network``), the flow leaving its sender after the connection's earlier flows."""
        b = self.backend
        self.key = connection
        try:
            return b.send_in_network(src, dst, size_bytes, tag) if in_network else \
                    b.send(src, dst, size_bytes, tag, priority=priority)
        finally:
            self.key = None

    def _route(self, f, now: int) -> None:
        """Start flow ``f`` now, or hold it behind the flow its connection has on the links."""
        key = self.key
        if key is None:
            self._start(f, now)
            return
        self.key = None
        self.enter(key, f, now)

    def enter(self, key, f, now: int) -> None:
        """Start flow ``f`` of connection ``key`` now if the connection is idle, else hold it
        behind the connection's flow on the links (``send_batch`` calls this directly)."""
        if self.queues.claim(key):
            f.conn = key
            self._start(f, now)
        else:
            if f.ctl is not None:           # a dynamic controller took it at its send: not sending yet
                f.ctl.release(f)
            self.queues.hold(key, f)

    def _drained(self, f) -> None:
        """Flow ``f`` has left its sender (fluid completion, now): start its connection's next flow."""
        key = f.conn
        if key is None:
            return
        f.conn = None
        g = self.queues.release(key)
        if g is None:
            return
        g.conn = key
        now = self.net.env.now
        g.t_upd = now
        if g.ctl is not None:
            if not g.ctl.admit(g, self._refresh(g), g.cap, now):
                g.ctl = None
        elif self.backend.links.changes:   # a link changed since the run started: maybe since g was built
            self._refresh(g)
        self._start(g, now)

    def _refresh(self, g):
        """Give held flow ``g`` its path's current links and constants (a link may have changed); its path's
        :class:`~.settings.PathInfo`."""
        b = self.backend
        info = b._pair.get((g.src, g.dst))
        if info is None:
            info = b._lookup(g.src, g.dst, g.key)          # routed on its ECMP key
        if info.links != g.links or info.bott != g.bott:
            g.links = info.links
            b.links._repath(g, info)
        return info
