"""The machinery every collective algorithm shares: connections, chunks, tags, completion.

A collective is a dataflow of point-to-point transfers. Algorithms describe
*which* rank sends *what* to *whom* after *which* receipt; this module turns
that into :meth:`netsim.backends.base.Backend.send` calls, with:

* **connections** — one per ``(channel, src, dst)``, a FIFO of chunks with at
  most ``window`` chunks in flight (NCCL keeps ``NCCL_STEPS`` slots per
  connection; we default to 2 because on a backend that shares a link fairly
  between concurrent flows a deep window would blur the chunk pipeline);
* **chunks** — a step's data is cut into ``chunk_bytes`` pieces (the last one
  shorter) that move through the algorithm independently, so a ring or tree
  pipelines as NCCL does; ``chunk_bytes=None`` sends each step's data whole;
* **tags** — every flow carries the caller's :class:`~netsim.records.FlowTag`
  with ``collective``, ``step`` and ``channel`` filled in (the channel names the
  connection, whose ECMP key every chunk of it shares: :mod:`netsim.network.flowkey`);
* **callbacks, not processes** — completion of a transfer calls the next
  action directly (no process per chunk);
* **batches** — the transfers a step posts at one instant (a ring's first
  wave; the next hops posted when one delivery of arrivals is handled) go to
  the backend as one :meth:`~netsim.backends.base.Backend.send_batch` call,
  in the order single sends would have had (the same flow ids), and come back
  as lists of arrivals (the flow backend: one SimPy event per delivery time,
  not per flow). :attr:`Run.batch_sends` ``False`` sends one by one (same
  results; the check of that is tests/collectives/test_batch_sends.py).

Zero-byte transfers are not sent: their dependants run at once.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import fields, replace
from typing import Any, Callable, Protocol

import simpy

from ..backends.base import IN_ORDER, Transfer
from ..params import Param, ParamTable
from ..records import FlowTag
from .steps import _noop, pieces

COLLECTIVE_PARAMS = ParamTable("collective", [
    Param("connection_window_chunks", 2, "int",
          "chunks a connection (channel, src, dst) may have in flight at once; the next chunk is posted "
          "when one completes", "NCCL keeps NCCL_STEPS=8 slots per connection (src/device/common.h); "
          "2 keeps fair-share backends' chunk pipeline sharp while hiding one chunk's latency", minimum=1),
    Param("nccl_chunk_bytes", 512 * 1024, "size",
          "a typical NCCL ring chunk (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8), for callers that want NCCL-like "
          "pipelining; run_collective's own default is no chunking",
          "NCCL environment variable docs: NCCL_BUFFSIZE default 4194304; src/include/device.h NCCL_STEPS=8",
          minimum=1),
])
_DEF = COLLECTIVE_PARAMS.defaults()
#: FlowTag's fields in constructor order, and the positions of ``step`` and ``channel`` (tags per step
#: and channel are built often: one per step of every collective, 384 k in a 256-GPU GPT-3B step)
_TAG_FIELDS = tuple(f.name for f in fields(FlowTag))
_TAG_STEP = _TAG_FIELDS.index("step")
_TAG_CHANNEL = _TAG_FIELDS.index("channel")
_new_tuple = tuple.__new__


class Port(Protocol):
    """What a :class:`Run` reads of its backend: a :class:`~netsim.backends.base.Backend`, a cluster
    job's view of one, or an NVLS :class:`~.nvls.InNetworkPort`. ``send_batch`` ``None``: no batch
    path; ``send_in_order`` only with :data:`~netsim.backends.base.IN_ORDER` in ``capabilities``."""

    env: simpy.Environment
    graph: Any
    name: str
    capabilities: frozenset[str]
    send: Callable[..., simpy.Event]
    send_batch: Callable[..., None] | None


class _Conn:
    __slots__ = ("src", "dst", "queue", "inflight", "delay_ps", "channel", "tags")

    def __init__(self, src: str, dst: str, channel: int, tags: dict):
        self.src, self.dst, self.channel = src, dst, channel
        self.tags = tags        # step -> tag of this channel (shared by the channel's connections)
        self.queue: deque = deque()
        self.inflight = 0
        self.delay_ps = 0       # software latency of each message on this connection (set by Run.send)


class Run:
    """State of one collective in progress (used by the algorithm modules).

    Parameters
    ----------
    backend : Port
        Where flows go (a backend or a view of one).
    kind : str
        Collective name written into every tag's ``collective`` field.
    tag : FlowTag
        The caller's tag (iteration, op, group ...).
    chunk_bytes : int or None
        Chunk size, bytes; ``None`` = no chunking.
    window : int
        Chunks in flight per connection.
    latency : SwLatency, optional
        Software latency (:mod:`.protocol`): ``step_ns`` (``step_inter_ns`` between
        scale-up domains) delays each message's dependants after its arrival.
    wire_factor : float
        Wire bytes per data byte of the protocol (1 for Simple); each message
        sends ``ceil(nbytes * wire_factor)`` bytes.
    domain_of : dict, optional
        Node -> scale-up domain key, to tell inter-domain messages (default: all intra).
    """

    #: hand transfers posted together to ``backend.send_batch`` (``False``: one ``send`` per transfer,
    #: the same flows in the same order; for tests comparing the two)
    batch_sends = True

    def __init__(self, backend: Port, kind: str, tag: FlowTag, chunk_bytes: int | None,
                 window: int = _DEF["connection_window_chunks"], latency=None, wire_factor: float = 1.0,
                 domain_of: dict | None = None):
        self.backend = backend
        self.env: simpy.Environment = backend.env
        self.kind = kind
        self.base_tag = replace(tag, collective=kind)
        self.chunk_bytes = chunk_bytes
        self.window = window
        self.flows = 0
        self.bytes_sent = 0
        self._tags: dict[int, dict[int, FlowTag]] = {}     # channel -> step -> tag
        self._conns: dict[tuple, _Conn] = {}
        self.wire_factor = wire_factor
        self._step_ps = 0 if latency is None else round(latency.step_ns * 1000)
        self._inter_ps = 0 if latency is None else round(latency.step_inter_ns * 1000)
        self._domain_of = domain_of
        #: a backend declaring IN_ORDER keeps a connection's chunks in post order
        #: (:mod:`netsim.backends.flow.inorder`): its chunks go through ``send_in_order``
        self._in_order = backend.send_in_order if IN_ORDER in backend.capabilities else None
        self._batch = self.batch_sends and backend.send_batch is not None
        self._pending: tuple[list, list] | None = None   # (transfers, keys) held by an open batch
        self._on_arrivals = self._arrivals               # one object: the backend groups arrivals by it

    def tag_for(self, step: int, channel: int = -1) -> FlowTag:
        """The tag of this run's flows of ``step`` on ``channel`` (one object per pair)."""
        tags = self._tags.get(channel)
        if tags is None:
            tags = self._tags[channel] = {}
        t = tags.get(step)
        if t is None:
            vals = [getattr(self.base_tag, n) for n in _TAG_FIELDS]      # = replace(base_tag, step=step,
            vals[_TAG_STEP] = step                                       # channel=channel), without
            vals[_TAG_CHANNEL] = channel                                 # dataclasses.replace's
            t = tags[step] = FlowTag(*vals)                              # per-call introspection
        return t

    def pieces(self, nbytes: int) -> list[int]:
        return pieces(nbytes, self.chunk_bytes)

    def send(self, channel: int, src: str, dst: str, nbytes: int, step: int,
             on_done: Callable[[object], None] | None) -> None:
        """Queue one chunk on connection ``(channel, src, dst)``; call ``on_done(record)`` on arrival.

        A zero-byte chunk is not sent: ``on_done(None)`` runs immediately.
        """
        if nbytes <= 0:
            if on_done is not None:
                on_done(None)
            return
        key = (channel, src, dst)
        conn = self._conns.get(key)
        if conn is None:
            tags = self._tags.get(channel)
            if tags is None:
                tags = self._tags[channel] = {}
            conn = self._conns[key] = _Conn(src, dst, channel, tags)
            conn.delay_ps = self._delay_ps(conn)
        if conn.inflight < self.window and not conn.queue:
            self._post(conn, nbytes, step, on_done)
        else:
            conn.queue.append((nbytes, step, on_done))

    def _post(self, conn: _Conn, nbytes: int, step: int, on_done) -> None:
        conn.inflight += 1
        self.flows += 1
        if self.wire_factor != 1.0:
            nbytes = math.ceil(nbytes * self.wire_factor)
        self.bytes_sent += nbytes
        tag = conn.tags.get(step)
        if tag is None:
            tag = self.tag_for(step, conn.channel)
        if self._batch:
            t = _new_tuple(Transfer, (conn.src, conn.dst, nbytes, tag))   # a Transfer, without its Python __new__
            pending = self._pending
            if pending is None:
                self.backend.send_batch((t,), self._on_arrivals, ((conn, on_done),), self._conns_of((conn,)))
            else:
                pending[0].append(t)
                pending[1].append((conn, on_done))
            return
        fifo = self._in_order
        if fifo is not None:
            ev = fifo(conn, conn.src, conn.dst, nbytes, tag)
        else:
            ev = self.backend.send(conn.src, conn.dst, nbytes, tag)
        delay_ps = conn.delay_ps

        def arrived(ev):
            conn.inflight -= 1
            if on_done is not None:
                if delay_ps:
                    rec = ev.value
                    self.env.timeout(delay_ps).callbacks.append(lambda _e: on_done(rec))
                else:
                    on_done(ev.value)
            queue = conn.queue
            while queue and conn.inflight < self.window:
                self._post(conn, *queue.popleft())
        if ev.callbacks is None:  # already processed (a backend that completes instantly)
            arrived(ev)
        else:
            ev.callbacks.append(arrived)

    # -- batches ------------------------------------------------------------------------------------
    def _conns_of(self, conns):
        """The queue pairs to keep in order for a batch: ``conns`` when the backend orders connections."""
        return conns if self._in_order is not None else None

    def open_batch(self) -> bool:
        """Hold the transfers posted from now on until :meth:`close_batch` (True if this call opened
        the batch, so the caller must close it; False when one is open or batches are off)."""
        if not self._batch or self._pending is not None:
            return False
        self._pending = ([], [])
        return True

    def close_batch(self) -> None:
        """Hand the held transfers to the backend as one ``send_batch`` call, in posting order."""
        transfers, keys = self._pending
        self._pending = None
        if transfers:
            self.backend.send_batch(transfers, self._on_arrivals, keys, self._conns_of([k[0] for k in keys]))

    def _arrivals(self, keys: list, records: list) -> None:
        """Arrivals of this run's transfers (keys ``(connection, on_done)``), in delivery order:
        what ``arrived`` does for one, with the transfers they post sent as one batch."""
        opened = self.open_batch()
        env = self.env
        window = self.window
        for (conn, on_done), rec in zip(keys, records):
            conn.inflight -= 1
            if on_done is not None:
                delay_ps = conn.delay_ps
                if delay_ps:
                    env.timeout(delay_ps).callbacks.append(lambda _e, f=on_done, r=rec: f(r))
                else:
                    on_done(rec)
            queue = conn.queue
            while queue and conn.inflight < window:
                self._post(conn, *queue.popleft())
        if opened:
            self.close_batch()

    def _delay_ps(self, conn: _Conn) -> int:
        """Software latency of one message on ``conn``, ps (inter-domain when its ends differ in domain)."""
        dom = self._domain_of
        if dom is not None and dom.get(conn.src, conn.src) != dom.get(conn.dst, conn.dst):
            return self._inter_ps
        return self._step_ps

    # -- completion --------------------------------------------------------------------------------
    def counter(self, count: int) -> tuple[simpy.Event, Callable[[object], None]]:
        """An event that fires after ``count`` calls of the returned function (now if ``count == 0``)."""
        done = self.env.event()
        if count <= 0:
            done.succeed()
            return done, _noop
        left = [count]

        def tick(_=None):
            left[0] -= 1
            if left[0] == 0:
                done.succeed()
        return done, tick
