"""Replaying a memoised segment (``--memo on``; :mod:`.memo`): a stand-in backend and its shadow check.

:class:`MemoPort` is what a collective's code is given instead of the packet
backend while a stored :class:`~.memostate.Entry` replays: its ``send``
returns an event that succeeds at the stored completion time, with the
record the packet network would have written (the live tag, ECMP key and
flow id, the stored times shifted by whole picoseconds); a driver process
walks the entry's log (rows written, senders retired) at the stored times
and, at the segment's end, puts the stored end state into the network
(:func:`.memostate.apply_end`).

Before a replay counts, :func:`shadow_matches` runs the same collective code
against a :class:`MemoPort` on a private SimPy environment starting at the
same picosecond: it must make exactly the stored sends (time, ends, size,
algorithm, priority, route, connection, in the same order), write the
records in the stored order and end at the stored time with the stored
result. Since the network gives the same completions to the same sends from
the same state (``test_a_step_repeated_from_an_empty_network_repeats_to_the_picosecond``),
the live replay is then what the simulation would have done.

Left out: nothing is approximated; what cannot be checked is simulated.
"""
from __future__ import annotations

import simpy

from ...network.send import local_copy_record
from ...records import EMPTY_TAG, make_record
from ...units import PS_PER_NS
from ..base import Backend
from . import memostate

#: a flow's transport counters, in the order a record and :class:`StandIn` keep them
COUNTERS = ("retransmitted_bytes", "retransmits", "timeouts", "ecn_marked_packets", "cnps_received")


class Diverged(Exception):
    """The collective's code asked for something the stored segment does not hold."""


class StandIn:
    """What :class:`~.accounting.FlowAccounting` reads of a finished flow, for a replayed one."""

    __slots__ = COUNTERS + ("start_ps", "end_ps", "size", "win_bytes", "row_counters")

    def __init__(self, counters, start_ps: int, end_ps: int, size: int):
        self.set(counters)
        self.start_ps, self.end_ps, self.size, self.win_bytes = start_ps, end_ps, size, 0

    def set(self, counters) -> None:
        for a, v in zip(COUNTERS, counters):
            setattr(self, a, v)


def counters_of(flow) -> tuple:
    """A transport flow's :data:`COUNTERS` now."""
    return tuple(getattr(flow, a) for a in COUNTERS)


def send_call(t_rel: int, spec, path, conn, in_network: bool) -> tuple:
    """The comparable form of one send: time after the segment's start (ps), ends, size, algorithm,
    priority, route (node path; ``None`` for a local copy), connection index, in-network flag."""
    if spec.local:
        return (t_rel, spec.src, spec.dst, spec.size_bytes, None, None, None, conn, in_network)
    return (t_rel, spec.src, spec.dst, spec.size_bytes, spec.cc, spec.priority, tuple(path), conn, in_network)


class MemoPort(Backend):
    """A backend that answers from ``entry`` on ``env`` (see module docstring); ``live``: the real run."""

    name = "packet"

    def __init__(self, be, entry, env, live: bool):
        self.be, self.entry, self.env, self.live = be, entry, env, live
        self.graph, self.contract, self.capabilities = be.graph, be.contract, be.capabilities
        self.t0 = env.now
        self.delta = self.t0 - entry.t0_ps
        self.fid0 = be.next_fid
        self.calls: list = []
        self.sinklog: list = []
        self.events: dict = {}
        self.meta: dict = {}
        self.standins: dict = {}
        self.conns: dict = {}
        self.applied = False    # the end state is in the network (at the end, or early: memo.tail_send)
        self.done = False
        self.gen_done = False   # the collective's code has returned (memo._replay)

    def send(self, src, dst, size_bytes: int, tag=EMPTY_TAG, *, cc=None, priority=None):
        return self._send(src, dst, size_bytes, tag, cc, priority, None, False)

    def send_in_order(self, connection, src, dst, size_bytes: int, tag=EMPTY_TAG, *, in_network: bool = False,
                      priority=None):
        idx = self.conns.setdefault(connection, len(self.conns))
        return self._send(src, dst, size_bytes, tag, None, priority, idx, in_network)

    def send_in_network(self, src, dst, size_bytes: int, tag=EMPTY_TAG):
        with self.contract.in_network(src, dst):
            return self._send(src, dst, size_bytes, tag, None, None, None, True)

    def stats(self) -> dict:
        return {}

    def _send(self, src, dst, size_bytes, tag, cc, priority, conn, in_network):
        be, env = self.be, self.env
        i = len(self.calls)
        spec = self.contract.check(src, dst, size_bytes, tag, cc, priority)
        key = path = None
        if not spec.local:
            key = be.flowkeys.key(src, dst, tag)
            path = be.router.path(src, dst, key)
        call = send_call(env.now - self.t0, spec, path, conn, in_network)
        if i >= len(self.entry.sends) or self.entry.sends[i] != call:
            raise Diverged(f"send {i}")
        self.calls.append(call)
        fid = self.fid0 + i
        if spec.local:
            self.sinklog.append(i)
            if self.live:
                return type(be).send(be, src, dst, size_bytes, tag, cc=cc, priority=priority)
            ev = env.event()
            ev.succeed(local_copy_record(fid, spec, env.now))
            return ev
        if self.live:
            be.next_fid += 1
            be.flows_started += 1
        self.meta[i] = (spec, key)
        ev = self.events[i] = env.event()
        return ev

    def driver(self):
        """The stored log at its times, then the end state (a SimPy process)."""
        env, t0 = self.env, self.t0
        for t_rel, kind, i, data in self.entry.log:
            at = t0 + t_rel
            if at > env.now:
                yield env.timeout(at - env.now)
            if kind == "row":
                self._row(i, data)
            elif self.live:
                self._retire(i, data)
        at = t0 + self.entry.end_rel
        if at > env.now:
            yield env.timeout(at - env.now)
        if self.live and not self.applied:
            memostate.apply_end(self.entry, self.be.net, self.delta)
            self.applied = True
        self.done = True

    def _row(self, i: int, data) -> None:
        start_rel, end_rel, ideal, row = data
        ev = self.events.get(i)
        if ev is None:
            raise Diverged(f"row of send {i} before its send")
        spec, key = self.meta[i]
        start_ps, end_ps = self.t0 + start_rel, self.t0 + end_rel
        rec = make_record(self.fid0 + i, str(spec.src), str(spec.dst), spec.size_bytes,
                          (start_ps + 500) // PS_PER_NS, (end_ps + 500) // PS_PER_NS, ideal, spec.tag, cc=spec.cc,
                          priority=spec.priority, retransmitted_bytes=row[0], ecn_marked_packets=row[3],
                          retransmits=row[1], timeouts=row[2], cnps_received=row[4], path_key=key)
        self.sinklog.append(i)
        if self.live:
            be = self.be
            be.completed += 1
            be.bytes_delivered += spec.size_bytes
            st = self.standins[i] = StandIn(row, start_ps, end_ps, spec.size_bytes)
            be.accounting.recorded_row(st, rec)
            if be.sink is not None:
                be.sink.add(rec)
        ev.succeed(rec)

    def _retire(self, i: int, final) -> None:
        be = self.be
        st = self.standins[i]
        st.set(final)
        now = self.env.now
        if now > be.last_ps:
            be.last_ps = now
        if st.end_ps > be.last_end_ps:
            be.last_end_ps = st.end_ps
        be.accounting.flow_ended(st, completed=True)


def shadow_matches(be, entry, make_gen, t0_ps: int) -> bool:
    """Run the collective (``make_gen(backend)``) against ``entry`` on a private environment from
    ``t0_ps``: True if it makes the stored sends, writes the stored rows in order and ends as stored."""
    env = simpy.Environment(initial_time=t0_ps)
    port = MemoPort(be, entry, env, live=False)
    out = {}

    def body(env):
        out["result"] = yield from make_gen(port)
        out["t"] = env.now

    env.process(body(env))
    env.process(port.driver())
    try:
        env.run()
    except Exception:           # noqa: BLE001 - whatever the replay cannot answer is simulated instead
        return False
    if "t" not in out or port.calls != entry.sends or port.sinklog != entry.sinklog:
        return False
    return out["t"] - t0_ps == entry.gen_end_rel and result_key(out["result"], t0_ps) == entry.result


def result_key(res, t0_ps: int) -> tuple:
    """A collective result's fields, its times relative to ``t0_ps``."""
    return (res.kind, res.algorithm, res.n, res.size_bytes, res.start_ps - t0_ps, res.end_ps - t0_ps,
            res.flows, res.bytes_sent, res.protocol)
