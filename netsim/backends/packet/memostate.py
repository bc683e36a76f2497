"""The state side of exact memoisation (``--memo on``; :mod:`.memo`): what a segment reads and leaves.

A memoised segment (:class:`Entry`) keeps, for every port its flows'
routes cross (data and ACK directions): the port's state when the segment
first used it (every slot of :class:`~.port.Port` but its references,
counters and absolute times), its random stream's state then and at the
segment's end, its state at the end and its counters' increments
(:data:`PORT_COUNTERS`); for every node on those routes its shared buffer;
the network's counters' increments (:data:`NET_COUNTERS`, drops per
priority); the segment's sends in order and the log of what the backend did
(a row written, a sender retired) with times relative to the segment's
start, in picoseconds. :func:`start_ok` says whether a live network is in
the same state as a stored segment's start; :func:`apply_end` puts the end
state into it, shifted by whole picoseconds.

Left out: absolute times other than ``busy_until`` (a port's
``pause_since`` is read only while it is paused, and a segment with a PFC
frame is never stored); per-flow state (every flow of a segment has ended
when it is stored).
"""
from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field

from ...errors import InputError
from ...units import PS_PER_NS
from .port import Port

#: port counters a segment advances (attributes of the port)
PORT_COUNTERS = ("tx_packets", "tx_bytes", "ecn_marks", "drops", "pauses", "pause_time_ps")
#: network counters a segment advances (attributes of the network; ``drops_by_prio`` apart)
NET_COUNTERS = ("pfc_events", "drops", "dropped_bytes", "dropped_payload_bytes", "headroom_overflows")
#: port slots that are references, the random stream or absolute times: not compared as state
_PORT_REFS = frozenset({"callbacks", "env", "net", "node", "peer", "name", "peer_name", "hq", "eid", "buf",
                        "recv", "pipe_cbs", "_pipe_ev", "wake_cbs", "wake", "cq", "rng", "busy_until",
                        "pause_since"})
#: the slots compared at a segment's start and restored at its end (the rest of a port's state)
PORT_STATE = tuple(s for s in Port.__slots__ if s not in _PORT_REFS and s not in PORT_COUNTERS)
#: slots that must be empty containers at a segment's start and end (kept as live objects: ``cq`` aliases one)
_EMPTY = frozenset({"queues", "pipe", "ring"})
#: shared-buffer fields of a node compared at start and end
BUF_FIELDS = ("used", "total", "alpha", "static", "shared", "reserved", "hdr_used")


def _freeze(v):
    """A comparable copy of a slot value (lists, tuples and deques as tuples, recursively)."""
    if isinstance(v, (list, tuple, deque)):
        return tuple(_freeze(x) for x in v)
    return v


def port_state(port) -> tuple:
    """The compared state of ``port`` (see :data:`PORT_STATE`)."""
    return tuple(_freeze(getattr(port, s, None)) for s in PORT_STATE)


def stream_digest(rng) -> bytes:
    """A 128-bit BLAKE2b digest of a random stream's state (``random.Random.getstate``)."""
    return hashlib.blake2b(repr(rng.getstate()).encode(), digest_size=16).digest()


def buf_state(node) -> tuple:
    """A node's shared-buffer accounting (:data:`BUF_FIELDS`)."""
    b = node.buf
    return tuple(getattr(b, f) for f in BUF_FIELDS)


def port_idle(port, now_ps: int) -> bool:
    """Nothing queued, on the wire or pending at ``port``, and its last transmission over."""
    return not port.qtotal and not port.pipe and not port.wake_pending and port.busy_until <= now_ps \
        and not any(port.queues)


@dataclass
class PortRecord:
    """One port of a segment: start state and stream, end state, stream and counter increments."""

    start: tuple
    rng0: bytes                  #: digest of the stream's state at the start (stream_digest)
    c0: tuple
    end: dict = None
    rng1: tuple = None           #: the stream's state at the end, or None if it did not draw
    adds: tuple = None
    busy_rel: int = 0            #: its last transmission's end, relative to the segment's start (ps)


@dataclass
class Entry:
    """A segment recorded from a simulation (see module docstring); times relative to its start (ps)."""

    t0_ps: int
    fid0: int
    ports: dict = field(default_factory=dict)       # Port -> PortRecord
    nodes: dict = field(default_factory=dict)       # node name -> buffer state at start
    int_on: bool = False
    sends: list = field(default_factory=list)       # one tuple per send (see memoreplay.send_call)
    log: list = field(default_factory=list)         # (t_rel, "row"/"retire", send index, data)
    sinklog: list = field(default_factory=list)     # send indices in the order their records were written
    fids: dict = field(default_factory=dict)        # flow id -> send index (while recording)
    conns: dict = field(default_factory=dict)       # connection -> index (while recording)
    touched0: int = 0                               # len(net.touched_ports) at the start
    events0: int = 0                                # the scheduler's event count at the start
    flow_nodes: list = field(default_factory=list)  # per send: the nodes of its path (() for a local copy)
    retire_rel: dict = field(default_factory=dict)  # send index -> its sender's retirement (ps, relative)
    net0: tuple = ()
    net_adds: tuple = ()
    prio_adds: tuple = ()
    touched: list = field(default_factory=list)     # ports the segment appended to net.touched_ports
    gen_end_rel: int = -1                           # the collective's end (ps, relative)
    end_rel: int = -1                               # the network empty again (ps, relative)
    result: tuple = ()                              # the collective's result fields that depend on time
    packets: int = 0                                # packet hops the segment took (sum of tx_packets)
    events: int = 0                                 # SimPy events it scheduled

    def see_port(self, port) -> None:
        """Remember ``port``'s start (the first time one of the segment's routes crosses it)."""
        if port not in self.ports:
            self.ports[port] = PortRecord(port_state(port), stream_digest(port.rng),
                                          tuple(getattr(port, a) for a in PORT_COUNTERS))
            for node in (port.node, port.peer):
                if node.name not in self.nodes:
                    self.nodes[node.name] = buf_state(node)


def close_ports(entry: Entry, net) -> str | None:
    """Store every port's end; ``None`` or why the segment cannot be stored."""
    for port, pr in entry.ports.items():
        if any(port.queues) or port.pipe or port.ring:
            return "port not empty at the end"
        pr.end = {s: _copy(getattr(port, s, None)) for s in PORT_STATE if s not in _EMPTY}
        pr.rng1 = None if stream_digest(port.rng) == pr.rng0 else port.rng.getstate()
        pr.adds = tuple(getattr(port, a) - c for a, c in zip(PORT_COUNTERS, pr.c0))
        pr.busy_rel = port.busy_until - entry.t0_ps
        entry.packets += pr.adds[0]
        if True in port.paused or port.storm is not None:
            return "port paused at the end"
    for name, st in entry.nodes.items():
        if buf_state(net.nodes[name]) != st:
            return "switch buffer not empty at the end"
    return None


def _copy(v):
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def start_ok(entry: Entry, net) -> bool:
    """The live network is in ``entry``'s start state on every port and node the segment used."""
    if net.int_on != entry.int_on:
        return False
    for port, pr in entry.ports.items():
        if port_state(port) != pr.start or stream_digest(port.rng) != pr.rng0:
            return False
    return all(buf_state(net.nodes[n]) == st for n, st in entry.nodes.items())


def apply_end(entry: Entry, net, delta_ps: int) -> None:
    """Put ``entry``'s end state into the live network, ``delta_ps`` after the stored segment."""
    for port, pr in entry.ports.items():
        for s, v in pr.end.items():
            cur = getattr(port, s, None)
            if isinstance(cur, list):
                cur[:] = _copy(v)
            else:
                setattr(port, s, v)
        port.busy_until = max(port.busy_until, pr.busy_rel + entry.t0_ps + delta_ps)
        if pr.rng1 is not None:
            port.rng.setstate(pr.rng1)
        for a, x in zip(PORT_COUNTERS, pr.adds):
            if x:
                setattr(port, a, getattr(port, a) + x)
    for a, x in zip(NET_COUNTERS, entry.net_adds):
        setattr(net, a, getattr(net, a) + x)
    for i, x in enumerate(entry.prio_adds):
        net.drops_by_prio[i] += x
    net.touched_ports.extend(entry.touched)


def tail_ok(entry: Entry, net, t_rel: int, path: tuple) -> bool:
    """A flow on ``path`` may start ``t_rel`` after a replayed segment's start, before its recorded end:
    every port at, into or out of a node of the path has sent its last packet of the segment (and the
    packet has arrived), and every flow of the segment through one of those nodes has retired."""
    nodes = set(path)
    for port, pr in entry.ports.items():
        if port.name in nodes or port.peer_name in nodes:
            if pr.adds[0] and pr.busy_rel + port.delay_ps > t_rel:
                return False
    for i, fnodes in enumerate(entry.flow_nodes):
        if fnodes and nodes.intersection(fnodes) and entry.retire_rel.get(i, t_rel + 1) > t_rel:
            return False
    return True


def tail_send(be, rp, src, dst, size_bytes, tag, cc, priority) -> None:
    """Someone sends while replay ``rp`` (a live :class:`~.memoreplay.MemoPort`) has not reached its
    segment's end: honoured if :func:`tail_ok` (the end state goes in now), else a one-line InputError."""
    spec = be.contract.check(src, dst, size_bytes, tag, cc, priority)
    if spec.local:
        return
    path = be.router.path(src, dst, be.flowkeys.key(src, dst, tag))
    now = be.env.now
    if not rp.gen_done or not tail_ok(rp.entry, be.net, now - rp.t0, path):
        raise InputError("a flow starts where a memoised collective's last packets are still in flight, "
                         "so the replay cannot continue exactly", where="--memo on",
                         value=f"{src}->{dst} at {(now + 500) // PS_PER_NS} ns", accepted="--memo off for this run")
    if not rp.applied:
        apply_end(rp.entry, be.net, rp.delta)
        rp.applied = True
