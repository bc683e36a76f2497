"""Exact memoisation of repeated collectives on the packet network (``--memo on``; issue #21).

What is modelled. A *segment* is one collective (:func:`netsim.collectives.run_collective`)
started into an empty packet network — no active flow, nothing queued or on
a wire, no pending network event but a finished flow's stale retransmit
tick or a sampler — until the network is empty again. The first time a
collective with given arguments (everything but its tag) runs, it is
simulated and recorded (:class:`.memostate.Entry`: its sends, the rows
written and senders retired, and the start and end of every port and
random stream its routes cross). When the same collective starts again,
it is replayed (:class:`.memoreplay.MemoPort`) only if every one of these
holds, else it is simulated (and recorded) as before:

* the network is empty and no other event is pending before the stored
  segment would end (nothing else can run and send meanwhile);
* every port and node the segment used is in its stored start state (slots,
  buffers, random streams: a stream that drew since — RED marking with a
  queue — fails this);
* the collective's own code, run against the stored completions on a private
  environment from the same picosecond (:func:`.memoreplay.shadow_matches`),
  makes exactly the stored sends with the same routes and ends as stored.

On a hit every record, completion event, counter and stream is the stored
one shifted by the start difference in whole picoseconds, and the clock runs
on to the segment's end. A send by someone else after the collective ended
but before its replayed network would be empty is honoured when nothing of
the segment is still moving at the nodes of its path
(:func:`.memostate.tail_ok`: the stored end state is put in at once); else
the run stops with a one-line error (exact continuation is impossible).

Left out (never memoised; simulated as before, the reason counted in
``summary.json`` ``memo``): queue and cc traces sampled, HPCC
``fct.txt``, spraying, a Jain window, the PFC watchdog, in-network
reductions, segments with a PFC frame, a drop-out flow or a send in their
tail; an iteration as a unit (its compute overlaps its collectives).
"""
from __future__ import annotations

from ...errors import InputError
from ...records import EMPTY_TAG
from ...transport.timers import _stale_tick
from ...units import PS_PER_NS
from . import memostate
from .memoreplay import MemoPort, counters_of, send_call, shadow_matches
from .network import _Every

#: stored segments kept per collective (netsim choice: a few start states, e.g. with and without a drawn stream)
MAX_ENTRIES = 4
#: collectives (argument sets) with stored segments kept, the oldest dropped first (netsim choice: memory)
MAX_KEYS = 256
#: first misses listed in summary.json (what failed, at which operation)
FIRST_MISSES = 5


class Memo:
    """The memo of one packet backend; installs its send and completion hooks (see module docstring)."""

    def __init__(self, be):
        if be.ff is not None:
            raise InputError("memoisation and fast-forward cannot be combined", where="--memo", value="on",
                             accepted="--memo on with --fast-forward off")
        self.be, self.net, self.env = be, be.net, be.env
        self.entries: dict = {}
        self.rec = None          # the Entry being recorded
        self.replay = None       # the live MemoPort of the last hit
        self.hits = self.misses = self.stored = 0
        self.reasons: dict = {}
        self.not_stored: dict = {}
        self.first: list = []
        self.skipped_ps = self.skipped_packets = self.skipped_events = 0
        self.own: set = set()
        self._conn = None
        self._in_net = False
        cls = type(be)
        self._plain = {name: getattr(cls, name).__get__(be) for name in ("send", "send_in_order", "send_in_network")}
        be.send, be.send_in_order, be.send_in_network = self._send, self._send_in_order, self._send_in_network
        net = self.net
        net.flow_received, net.flow_acked, net.flow_failed = self._received, self._acked, self._failed

    # -- the declared unit ------------------------------------------------------------------------
    def segment(self, key, make_gen, tag=EMPTY_TAG):
        """Run the collective ``make_gen(backend)`` (a generator) as a segment: replay or simulate."""
        why = self._unsupported()
        if why is None and self.rec is not None:
            self._drop("another collective started", rec=self.rec)
            why = "network not empty"
        if why is None and not self._empty():
            why = "network not empty"
        if why is not None:
            self._miss(why, tag)
            return (yield from make_gen(self.be))
        now = self.env.now
        why = "first of its kind"
        for e in reversed(self.entries.get(key, ())):
            if not memostate.start_ok(e, self.net):
                why = "start state differs (ports or random streams)"
                continue
            if self._pending_before(now + e.end_rel):
                why = "another event pending before it would end"
                break
            if not shadow_matches(self.be, e, make_gen, now):
                why = "its sends differ from the stored ones"
                continue
            return (yield from self._replay(e, make_gen))
        self._miss(why, tag)
        return (yield from self._record(key, make_gen))

    def _replay(self, e, make_gen):
        port = self.replay = MemoPort(self.be, e, self.env, live=True)
        self.env.process(port.driver())
        result = yield from make_gen(port)
        port.gen_done = True
        self.hits += 1
        self.skipped_ps += e.end_rel
        self.skipped_packets += e.packets
        self.skipped_events += e.events
        return result

    def _record(self, key, make_gen):
        net, be = self.net, self.be
        rec = self.rec = memostate.Entry(self.env.now, be.next_fid, int_on=net.int_on)
        rec.net0 = tuple(getattr(net, a) for a in memostate.NET_COUNTERS) + tuple(net.drops_by_prio)
        rec.touched0 = len(net.touched_ports)
        rec.events0 = net.sched.events_scheduled()
        rec.key = key
        result = yield from make_gen(be)
        if self.rec is rec:
            from .memoreplay import result_key
            rec.gen_end_rel = self.env.now - rec.t0_ps
            rec.result = result_key(result, rec.t0_ps)
            self._try_close()
        return result

    # -- conditions -------------------------------------------------------------------------------
    def _unsupported(self) -> str | None:
        be, p, net = self.be, self.be.params, self.net
        if (be.sinks.queues is not None and p["queue_sample_ns"] > 0) or \
                (be.sinks.cc is not None and p["cc_sample_ns"] > 0):
            return "queue or cc trace sampled"
        if be.hpcc_fct:
            return "HPCC fct.txt measured"
        if p["routing"] == "spray" or p["jain_window_ns"] > 0:
            return "spraying or a Jain window"
        if net.pfc_watch is not None and net.pfc_watch.watchdog:
            return "PFC watchdog on"
        return None

    def _empty(self) -> bool:
        """No active flow, no replay still running and no pending network event but inert ones."""
        if self.net.active or (self.replay is not None and not self.replay.done):
            return False
        return not any(_live_source(item[3]) for item in self.net.sched.heap)

    def _pending_before(self, t_ps: int) -> bool:
        """A SimPy event (not the network's, not the memo's own) is due before ``t_ps``."""
        from simpy.events import Event
        return any(item[0] < t_ps and isinstance(item[3], Event) and item[3] not in self.own
                   for item in self.net.sched.heap)

    def _miss(self, why: str, tag) -> None:
        self.misses += 1
        self.reasons[why] = self.reasons.get(why, 0) + 1
        if len(self.first) < FIRST_MISSES:
            self.first.append({"time_ns": (self.env.now + 500) // PS_PER_NS, "op": tag.op, "reason": why})

    def _drop(self, why: str, rec=None) -> None:
        """Stop recording (the segment is not stored)."""
        if self.rec is not None:
            self.not_stored[why] = self.not_stored.get(why, 0) + 1
        self.rec = None

    # -- hooks (installed only with --memo on) ----------------------------------------------------
    def _send_in_order(self, connection, src, dst, size_bytes, tag=EMPTY_TAG, *, in_network=False, priority=None):
        self._conn = connection
        return self._plain["send_in_order"](connection, src, dst, size_bytes, tag, in_network=in_network,
                                            priority=priority)

    def _send_in_network(self, src, dst, size_bytes, tag=EMPTY_TAG):
        self._in_net = True
        return self._plain["send_in_network"](src, dst, size_bytes, tag)

    def _send(self, src, dst, size_bytes, tag=EMPTY_TAG, *, cc=None, priority=None):
        conn, in_net = self._conn, self._in_net
        self._conn, self._in_net = None, False
        be, rp = self.be, self.replay
        if rp is not None and not rp.done:
            memostate.tail_send(be, rp, src, dst, size_bytes, tag, cc, priority)
        rec = self.rec
        if rec is not None and rec.gen_end_rel >= 0:
            self._drop("a send in its tail")
            rec = None
        if rec is None:
            return self._plain["send"](src, dst, size_bytes, tag, cc=cc, priority=priority)
        spec = be.contract.check(src, dst, size_bytes, tag, cc, priority)
        path = None
        if not spec.local:
            path = be.router.path(src, dst, be.flowkeys.key(src, dst, tag))
            for port in self.net.route_ports(path) + self.net.route_ports(tuple(reversed(path))):
                rec.see_port(port)
        if in_net:
            self._drop("an in-network reduction")
        i = len(rec.sends)
        idx = None if conn is None else rec.conns.setdefault(conn, len(rec.conns))
        rec.sends.append(send_call(self.env.now - rec.t0_ps, spec, path, idx, in_net))
        rec.flow_nodes.append(() if path is None else tuple(path))
        if spec.local:
            rec.sinklog.append(i)
        else:
            rec.fids[be.next_fid] = i
        return self._plain["send"](src, dst, size_bytes, tag, cc=cc, priority=priority)

    def _received(self, flow) -> None:
        rec = self.rec
        i = None if rec is None else rec.fids.get(flow.fid)
        had = flow.fid in self.net.flows
        self.be._received(flow)
        if i is not None and self.rec is rec:
            t0 = rec.t0_ps
            rec.log.append((self.env.now - t0, "row", i, (flow.start_ps - t0, flow.end_ps - t0,
                                                           flow.record.ideal_fct_ns, counters_of(flow))))
            rec.sinklog.append(i)
            self._retired(rec, i, flow, had)

    def _acked(self, flow) -> None:
        rec = self.rec
        i = None if rec is None else rec.fids.get(flow.fid)
        had = flow.fid in self.net.flows
        self.be._acked(flow)
        if i is not None and self.rec is rec:
            self._retired(rec, i, flow, had)

    def _retired(self, rec, i, flow, had) -> None:
        if had and flow.fid not in self.net.flows:
            t = self.env.now - rec.t0_ps
            rec.log.append((t, "retire", i, counters_of(flow)))
            rec.retire_rel[i] = t
            self._try_close()

    def _failed(self, flow) -> None:
        self.be._failed(flow)
        if self.rec is not None and flow.fid in self.rec.fids:
            self._drop("a flow gave up")

    # -- closing a recorded segment ---------------------------------------------------------------
    def _try_close(self) -> None:
        rec = self.rec
        if rec is None or rec.gen_end_rel < 0 or len(rec.retire_rel) < len(rec.fids):
            return
        net, now = self.net, self.env.now
        if net.active:
            return self._drop("another flow active at its end")
        live = [item[0] for item in net.sched.heap if _live_source(item[3])]
        if live or not all(memostate.port_idle(p, now) for p in rec.ports):
            at = max(live + [p.busy_until + p.delay_ps for p in rec.ports] + [now + 1])
            ev = self.env.timeout(at - now)
            self.own.add(ev)
            ev.callbacks.append(lambda e: (self.own.discard(e), self._try_close()))
            return None
        why = memostate.close_ports(rec, net)
        adds = tuple(getattr(net, a) - c for a, c in zip(memostate.NET_COUNTERS, rec.net0))
        if why is None and (adds[0] or net.int_on != rec.int_on):
            why = "a PFC frame or INT switched on"
        if why is not None:
            return self._drop(why)
        k = len(memostate.NET_COUNTERS)
        rec.net_adds = adds
        rec.prio_adds = tuple(x - c for x, c in zip(net.drops_by_prio, rec.net0[k:]))
        rec.touched = list(net.touched_ports[rec.touched0:])
        rec.end_rel = now - rec.t0_ps
        rec.events = net.sched.events_scheduled() - rec.events0
        rec.fids, rec.conns = {}, {}
        self.entries.setdefault(rec.key, []).append(rec)
        del self.entries[rec.key][:-MAX_ENTRIES]
        if len(self.entries) > MAX_KEYS:
            del self.entries[next(iter(self.entries))]
        self.stored += 1
        self.rec = None
        return None

    def stats(self) -> dict:
        """The ``memo`` block of ``summary.json``."""
        return {"hits": self.hits, "misses": self.misses, "miss_reasons": dict(sorted(self.reasons.items())),
                "stored": self.stored, "not_stored": dict(sorted(self.not_stored.items())),
                "skipped_sim_time_ns": (self.skipped_ps + 500) // PS_PER_NS,
                "skipped_packet_hops": self.skipped_packets, "skipped_events": self.skipped_events,
                "first_misses": list(self.first)}


def _live_source(ev) -> bool:
    """A pending network event that does something (not a finished flow's stale tick, not a sampler)."""
    from simpy.events import Event
    if isinstance(ev, (Event, _Every)):
        return False
    cbs = ev.callbacks
    return not (cbs and cbs[0] is _stale_tick)
