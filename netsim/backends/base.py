"""The narrow seam between collectives/runtime and a network backend.

Collectives and the training runtime only ever call :meth:`Backend.send` and
read :attr:`Backend.env` (a SimPy environment whose clock counts integer
**picoseconds**). A backend decides how long a flow takes:

* ``packet`` — the reference: packets, queues, ECN, PFC, congestion control;
* ``flow`` — max-min fair fluid model, for scale;
* ``analytic`` — closed-form alpha-beta cost per flow, no contention.

Because all three share this seam, the same ring all-reduce runs unchanged on
each, and their answers can be compared on the same work.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import simpy

from ..records import EMPTY_TAG, FlowTag
from ..units import PS_PER_NS


class Backend(ABC):
    """A network that carries flows between named nodes of a topology graph.

    Subclasses must set ``self.env`` (a :class:`simpy.Environment` counting ps),
    ``self.graph`` and ``self.sink`` (an object with ``add(FlowRecord)``).
    """

    name: str = "abstract"
    env: simpy.Environment

    def now_ns(self) -> float:
        """Current simulated time in ns (float: the engine counts ps)."""
        return self.env.now / PS_PER_NS

    @abstractmethod
    def send(self, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
             cc: str | None = None, priority: int | None = None) -> simpy.Event:
        """Start a flow of ``size_bytes`` from ``src`` to ``dst`` now.

        Returns an event that succeeds, with the flow's
        :class:`~netsim.records.FlowRecord` as value, when the last byte has
        reached ``dst``. The record is also given to the backend's sink.
        """

    @abstractmethod
    def stats(self) -> dict[str, Any]:
        """Counters for ``summary.json`` (flows, completed, bytes, drops, ...)."""

    def close(self) -> None:
        """Flush samplers and sinks at the end of a run."""
