"""Per-connection send order: the bookkeeping every backend's in-order sends share.

A connection (a queue pair, an NVLink channel: any hashable key) sends its
flows one after another: a flow posted while the connection's earlier flow is
still leaving its sender waits, and starts when that one has left.
:class:`ConnectionQueues` records which connections are busy and which flows
wait behind them; *when* a flow has left its sender (the fluid flow's last
byte, the packet flow's last new packet, the analytic flow's drain through
its pacing link) and how a waiting flow is started are each backend's own
(``backends/*/inorder.py``).

Left out: anything about rates or time; a connection's flows of different
priorities are still one FIFO.

>>> q = ConnectionQueues()
>>> q.busy("qp0"), q.open("qp0"), q.busy("qp0"), q.claim("qp0"), q.claim("qp1")
(False, None, True, False, True)
>>> q.hold("qp0", "f1"); q.held
1
>>> q.release("qp0"), q.release("qp0"), q.busy("qp0")
('f1', None, False)
"""
from __future__ import annotations

from collections import deque


class ConnectionQueues:
    """Busy connections and the flows waiting behind each (in post order)."""

    __slots__ = ("_waiting", "held")

    def __init__(self):
        # connection -> its waiting flows (None until one waits), present while one of its flows is sending
        self._waiting: dict = {}
        self.held = 0              # flows that waited behind an earlier flow of their connection

    def busy(self, connection) -> bool:
        """True while a flow of ``connection`` is leaving its sender."""
        return connection in self._waiting

    def open(self, connection) -> None:
        """A flow of idle ``connection`` has started sending."""
        self._waiting[connection] = None     # no queue object until a flow waits (most never do)

    def claim(self, connection) -> bool:
        """Open ``connection`` if it is idle (True: the caller starts its flow now); False while it is
        busy (the caller holds the flow): :meth:`busy` and :meth:`open` in one call."""
        waiting = self._waiting
        if connection in waiting:
            return False
        waiting[connection] = None
        return True

    def hold(self, connection, flow) -> None:
        """``flow`` waits behind busy ``connection``'s earlier flows."""
        q = self._waiting[connection]
        if q is None:
            q = self._waiting[connection] = deque()
        q.append(flow)
        self.held += 1

    def release(self, connection):
        """``connection``'s sending flow has left its sender: its next waiting flow, which the caller
        starts (the connection stays busy with it), or ``None`` (the connection is idle again)."""
        q = self._waiting[connection]
        if not q:
            del self._waiting[connection]
            return None
        return q.popleft()
