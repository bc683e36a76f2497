"""One fluid FIFO queue of a switch egress: segments of bytes per flow, in arrival order.

A step's arrivals at an egress join its tail as one segment (bytes per flow);
the egress serves its head at its capacity, a partly served segment giving each
of its flows the same share of what left. So a flow that joins a long queue
leaves it only once the bytes ahead of it have (:mod:`.fifo` moves the fluid
between these queues and keeps the PFC state; :mod:`.dcqcnfluid` marks at
dequeue).

Left out: order inside one step's segment (its flows leave in proportion to
their bytes), drops (the queues are lossless), priorities (one queue per egress).
"""
from __future__ import annotations

from collections import deque


class FifoQueue:
    """One switch egress: FIFO segments ``[bytes, {fid: bytes}]`` and their total (bytes)."""

    __slots__ = ("segs", "q", "arrivals")

    def __init__(self):
        self.segs: deque = deque()
        self.q = 0.0
        self.arrivals: dict[int, float] = {}

    def push(self) -> None:
        """Append this step's arrivals as one segment."""
        arr = self.arrivals
        if arr:
            tot = sum(arr.values())
            if tot > 0.0:
                self.segs.append([tot, arr])
                self.q += tot
            self.arrivals = {}

    def serve(self, budget: float) -> dict[int, float]:
        """Dequeue up to ``budget`` bytes from the head; return bytes departed per flow."""
        out: dict[int, float] = {}
        segs = self.segs
        while budget > 0.0 and segs:
            seg = segs[0]
            tot, comp = seg
            if tot <= budget:
                segs.popleft()
                budget -= tot
                self.q -= tot
                for fid, b in comp.items():
                    out[fid] = out.get(fid, 0.0) + b
            else:
                x = budget / tot
                for fid, b in comp.items():
                    d = b * x
                    out[fid] = out.get(fid, 0.0) + d
                    comp[fid] = b - d
                seg[0] = tot - budget
                self.q -= budget
                budget = 0.0
        if not segs:
            self.q = 0.0
        return out

    def drop_flow(self, fid: int) -> float:
        """Remove flow ``fid``'s bytes (it completed); return how many there were."""
        gone = 0.0
        for seg in self.segs:
            b = seg[1].pop(fid, None)
            if b:
                seg[0] -= b
                gone += b
        gone += self.arrivals.pop(fid, 0.0)
        self.q = max(0.0, self.q - gone)
        return gone
