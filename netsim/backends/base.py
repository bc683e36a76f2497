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


class TraceSinks:
    """Where a backend writes its traces; any of them may be ``None``.

    ``fct`` gets :class:`~netsim.records.FlowRecord`; ``queues`` rows
    ``(time_ns, node, port, priority, queue_bytes)``; ``pfc`` rows
    ``(time_ns, node, port, priority, event)``; ``cc`` rows
    ``(time_ns, flow_id, cc, cwnd_bytes, rate_bps, alpha, srtt_ns)``.
    """

    __slots__ = ("fct", "queues", "pfc", "cc")

    def __init__(self, fct=None, queues=None, pfc=None, cc=None):
        self.fct, self.queues, self.pfc, self.cc = fct, queues, pfc, cc


#: name -> factory(graph, *, env, params, seed, cc, cc_params, sinks) -> Backend
BACKENDS: dict[str, Any] = {}


def register_backend(name: str):
    """Decorator registering a backend factory under ``--backend NAME``."""
    def deco(factory):
        BACKENDS[name] = factory
        return factory
    return deco


def create_backend(name: str, graph, *, env: simpy.Environment | None = None, params: dict | None = None,
                   seed: int = 0, cc: str = "none", cc_params: dict | None = None,
                   sinks: TraceSinks | None = None) -> Backend:
    """Build the backend called ``name`` over ``graph``.

    ``params`` are network parameters (``--set``), ``cc_params`` maps an
    algorithm name to its overrides (``--cc-param``).
    """
    import importlib

    from ..errors import InputError
    for mod in ("packet", "flow", "analytic"):
        try:
            importlib.import_module(f"{__package__}.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{mod}":
                raise
    if name not in BACKENDS:
        raise InputError("unknown backend", where="--backend", value=name,
                         accepted="one of " + ", ".join(sorted(BACKENDS)))
    return BACKENDS[name](graph, env=env or simpy.Environment(), params=params or {}, seed=seed,
                          cc=cc, cc_params=cc_params or {}, sinks=sinks or TraceSinks())
