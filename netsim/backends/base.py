"""The narrow seam between collectives/runtime and a network backend.

Collectives and the training runtime only ever call :meth:`Backend.send` and
read :attr:`Backend.env` (a SimPy environment whose clock counts integer
**picoseconds**). A backend decides how long a flow takes:

* ``packet`` — the reference: packets, queues, ECN, PFC, congestion control;
* ``flow`` — max-min fair fluid model, for scale;
* ``analytic`` — closed-form alpha-beta cost per flow, no contention.

A collective step whose transfers start together (a ring's first wave, the
next hops posted at one arrival instant) may go as one :meth:`Backend.send_batch`
call instead: the base class unrolls it into ``send`` calls in order (packet and
analytic need nothing more); the flow backend starts the batch in one call and
delivers its arrivals with one event per delivery time (:mod:`.flow.batch`).

Because all three share this seam, the same ring all-reduce runs unchanged on
each, and their answers can be compared on the same work. Every backend checks
``send`` with the one :class:`netsim.network.send.SendContract` and derives its
per-path constants from :class:`netsim.network.path.PathModel`.

Optional abilities are **declared**, not probed: a backend class lists what it
honours in :attr:`Backend.capabilities` (names in :data:`CAPABILITIES`) and is
registered with them, so a command-line flag that needs an ability the chosen
backend lacks is rejected before anything runs (:func:`check_flags`, driven by
:data:`FLAG_NEEDS`): exit 2, one line naming the flag, the backend and the
backends that accept it.  The capability names and the registry of backends
are :mod:`.registry` (re-exported here); :func:`create_backend` builds one.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, NamedTuple, Sequence

import simpy

from ..records import EMPTY_TAG, FlowTag
from ..sinks import Sink
from . import BUILTIN_BACKENDS  # noqa: F401  (the shipped backends, named in the package module)
from ..units import PS_PER_NS
from .registry import (BACKEND_CAPABILITIES, BACKEND_PARAMS, BACKENDS, CAPABILITIES, CC_TRACE,  # noqa: F401
                       FAST_FORWARD, FLAG_NEEDS, HOST_STACK, MEMO, HPCC_FCT, IN_NETWORK, IN_ORDER, LINK_CHANGES,
                       NO_FABRIC_CONTENTION, PFC_TRACE, QUEUE_TRACE, ROUTER, _load_backends, backend_capabilities,
                       check_flags, register_backend, resolve_backend_params)


class Transfer(NamedTuple):
    """One flow of a :meth:`Backend.send_batch` call: ``size_bytes`` from ``src`` to ``dst``
    with tag ``tag`` (default congestion control and priority, as ``send`` without them)."""

    src: str
    dst: str
    size_bytes: int
    tag: FlowTag = EMPTY_TAG


#: ``on_done(indices, records)`` of :meth:`Backend.send_batch`: arrivals of one delivery, in order
BatchCallback = Callable[[list, list], None]


class Backend(ABC):
    """A network that carries flows between named nodes of a topology graph.

    Every attribute the rest of netsim reads of a backend is declared here;
    nothing is probed. Subclasses must set ``self.env`` (a
    :class:`simpy.Environment` counting ps), ``self.graph``, ``self.sink`` (a
    :class:`netsim.sinks.Sink` of :class:`~netsim.records.FlowRecord`, or
    ``None``) and ``self.contract`` (their
    :class:`~netsim.network.send.SendContract`). What only some backends have
    is behind a capability: ``router`` (:data:`ROUTER`), ``host_stack``
    (:data:`HOST_STACK`), ``set_link_rate``/``fail_link``
    (:data:`LINK_CHANGES`), ``send_in_order`` (:data:`IN_ORDER`),
    ``hpcc_ack_fct_ns`` (:data:`HPCC_FCT`, read through :func:`hpcc_ack_times`).
    """

    name: str = "abstract"
    env: simpy.Environment
    #: the topology graph (networkx) the flows run on
    graph: Any
    #: where finished flows' records go (``None``: nowhere)
    sink: Sink | None = None
    #: the one check of ``send`` (:class:`netsim.network.send.SendContract`)
    contract: Any
    #: what this backend honours beyond ``send`` (names in :data:`CAPABILITIES`)
    capabilities: frozenset[str] = frozenset()
    #: print, at :meth:`close`, the backend's one-line warning about what it left out (the analytic
    #: backend: links its flows overran); a caller that reports it itself sets it ``False``
    warn_overrun: bool = True
    #: the exact memo of repeated collectives (:data:`MEMO`, ``--memo on``) or ``None``; a collective
    #: runs through ``memo.segment`` when it is set (:func:`netsim.collectives.collective`)
    memo: Any = None

    def check_cc(self, name: str) -> None:
        """Raise :class:`~netsim.errors.InputError` (naming ``--cc``) if this backend cannot run
        congestion control ``name``. The default accepts every algorithm (``send``'s contract
        checks the name); a backend modelling only some (the flow backend) overrides it."""

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

    def send_batch(self, transfers: Sequence[Transfer], on_done: BatchCallback,
                   keys: Sequence | None = None, connections: Sequence | None = None) -> None:
        """Start ``transfers`` now, in order, exactly as ``send`` would one after the other.

        Flows are numbered in list order. When transfers arrive, ``on_done(keys, records)`` is
        called with their ``keys`` (the caller's, one per transfer; default: their positions
        in ``transfers``) and their :class:`~netsim.records.FlowRecord`; arrivals are
        reported in the order ``send``'s events would have been processed, consecutive ones
        of one delivery possibly in one call. This default unrolls the batch into ``send``
        calls, one call of ``on_done`` per arrival.
        """
        if keys is None:
            keys = range(len(transfers))
        in_order = self.send_in_order if connections is not None and IN_ORDER in self.capabilities else None
        for i, (t, key) in enumerate(zip(transfers, keys)):
            if in_order is not None:       # ``connections[i]``: the transfer's queue pair (post order kept)
                ev = in_order(connections[i], t.src, t.dst, t.size_bytes, t.tag)
            else:
                ev = self.send(t.src, t.dst, t.size_bytes, t.tag)
            cb = ArrivalCallback(on_done, key)
            if ev.callbacks is None:       # already processed
                cb(ev)
            else:
                ev.callbacks.append(cb)

    def send_in_network(self, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG) -> simpy.Event:
        """Like :meth:`send`, but one end is a switch with ``nvls``/``sharp`` true (in-network reduction).

        Only backends declaring :data:`IN_NETWORK` honour it (the flow ends at
        or starts from the switch: it terminates and originates the bytes; all
        three shipped backends);
        others raise a one-line :class:`~netsim.errors.InputError`.
        """
        if IN_NETWORK not in self.capabilities:
            from ..errors import InputError
            raise InputError(f"the {self.name} backend cannot terminate flows at a switch (in-network reduction)",
                             where="collective algorithm", value="nvls",
                             accepted="--backend analytic, flow or packet, or algorithm ring/tree")
        with self.contract.in_network(src, dst):
            return self.send(src, dst, size_bytes, tag)

    @abstractmethod
    def stats(self) -> dict[str, Any]:
        """Counters for ``summary.json`` (flows, completed, bytes, drops, ...)."""

    def close(self) -> None:
        """Flush samplers and sinks at the end of a run."""

    def flows_completed(self) -> int:
        """Flows completed so far (progress display); cheap in every backend."""
        return int(self.stats().get("completed", 0))

    def local_copy(self, flow_id: int, spec) -> simpy.Event:
        """Complete a self-send (``spec.local``) now: the same record on every backend.

        The record (:func:`netsim.network.send.local_copy_record`: FCT 0, ideal
        FCT 0) goes to ``self.sink`` at once; the returned event succeeds at the
        current time with it. The caller counts the flow in its statistics.
        """
        from ..network.send import local_copy_record
        rec = local_copy_record(flow_id, spec, self.env.now)
        if self.sink is not None:
            self.sink.add(rec)
        ev = self.env.event()
        ev.succeed(rec)
        return ev


def hpcc_ack_times(backend: Backend) -> dict | None:
    """``{flow id: FCT until the sender's last ACK, ns}`` of a backend declaring :data:`HPCC_FCT`
    (its ``hpcc_ack_fct_ns``, filled when built with ``hpcc_fct=True``); ``None`` for the others
    (:mod:`netsim.hpccfct` then writes FCT + one ACK)."""
    return backend.hpcc_ack_fct_ns if HPCC_FCT in backend.capabilities else None   # type: ignore[attr-defined]


class ArrivalCallback:
    """The event callback of one :meth:`Backend.send_batch` transfer sent by ``send``:
    ``on_done([key], [record])``."""

    __slots__ = ("on_done", "key")

    def __init__(self, on_done: BatchCallback, key):
        self.on_done, self.key = on_done, key

    def __call__(self, ev) -> None:
        self.on_done([self.key], [ev.value])


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


def create_backend(name: str, graph, *, env: simpy.Environment | None = None, params: dict | None = None,
                   seed: int = 0, cc: str = "none", cc_params: dict | None = None,
                   sinks: TraceSinks | None = None, hpcc_fct: bool = False) -> Backend:
    """Build the backend called ``name`` over ``graph``.

    ``params`` are network parameters (``--set``), ``cc_params`` maps an
    algorithm name to its overrides (``--cc-param``). ``hpcc_fct`` asks a
    backend declaring :data:`HPCC_FCT` to measure last-ACK times for
    ``fct.txt``; the others ignore it (their ``fct.txt`` comes from FCT + one ACK).
    """
    options = {}
    if hpcc_fct and HPCC_FCT in backend_capabilities(name):
        options["hpcc_fct"] = True
    backend_capabilities(name)
    return BACKENDS[name](graph, env=env or simpy.Environment(), params=params or {}, seed=seed,
                          cc=cc, cc_params=cc_params or {}, sinks=sinks or TraceSinks(), **options)
