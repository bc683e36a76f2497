"""PFC deadlock detection and the PFC watchdog (SONiC's pfcwd) of the packet network.

**Pause graph.** A node is an egress port ``a -> b`` paused on a priority;
an edge ``P -> Q`` says that paused ``P`` waits for paused ``Q``: ``Q`` is an
egress of ``P``'s peer ``b`` and holds, on that priority, packets that came
in over ``P`` (their PFC ingress group is ``P``'s, so they keep ``P``
paused). A cycle in it is a circular buffer dependency: no port of it can
dequeue that priority until another does.

**Deadlock report** (``pfc_deadlock_detect_ns`` > 0). When a port is paused
and the pause graph *might* close a cycle through it (its peer has a paused
egress on that priority, transitively back to it), one check is scheduled
``pfc_deadlock_detect_ns`` later. It reports a deadlock if the exact graph
then has a cycle through the port whose every port has been paused — so has
dequeued nothing of that priority — without a break for at least that long
(a re-paused port moves the check to its new pause). A cycle that resolves
before is not reported. The report (a :class:`Deadlock`: time, priority,
ports in cycle order from the smallest name) goes into ``summary.json``
(``pfc_deadlocks``) and one ``netsim: warning:`` line on stderr. The run
then **continues**: the deadlocked flows time out as before (or the
watchdog breaks the cycle), so results stay those of a lossless fabric.

**Watchdog** (``pfc_watchdog``, switch egresses only): a queue paused for
``pfc_watchdog_detection_ns`` with packets queued (checked once, that long
after each PAUSE, or after a later re-pause) is *stormed*: from then
on it ignores PAUSE (``set_paused`` is lifted, later PAUSE/RESUME frames
only remembered) and, with action ``drop``, every packet of that priority
reaching the far end of its link is discarded (counted in ``drops`` and
``pfc_watchdog.dropped_packets``; the queue drains at line rate, as a
failed link's does, instead of being flushed at once); with ``forward`` it
is delivered (the peer may overflow its headroom). After
``pfc_watchdog_restoration_ns`` the queue is restored if its peer no longer
pauses it (else checked again every restoration time while flows are
active). Storms and restorations are ``pfc.csv`` rows (events ``storm``,
``restore``) and ``summary.json`` counters (``pfc_watchdog``); a queue
stormed again after a restoration (the dependency that paused it persists:
with ``drop`` and a cyclic dependency, go-back-N refills the cycle after
every restoration) is counted (``repeated_storms``) and the first such
storm is one ``netsim: warning:`` line. Such flows still complete: each
cycle of detection + restoration + one retry timeout delivers what is sent
before the cycle closes again (RoCE undoes its RTO backoff on that
progress, :mod:`netsim.transport.roce`).

Checks are scheduled only when needed (a PAUSE under the watchdog, or one
that may close a cycle), so a run without either schedules no extra event.

Left out: pfcwd's polling interval (detection is exact, not quantized to
200 ms polls), the scaling of its defaults with the port count
(sonic-utilities ``pfcwd/main.py`` multiplies detection, restoration and
poll times by ``(ports - 1) // 32 + 1``), ingress-side drops of the stormed
priority, PFC storms from a faulty peer (only the pauses the model itself
produces).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from ...transport.packet import N_PRIORITIES
from ...units import PS_PER_NS


@dataclass(frozen=True)
class Deadlock:
    """A reported PFC deadlock: the cycle of paused ports (``"a->b"``) on ``priority``."""

    detected_ns: int
    priority: int
    ports: tuple
    paused_since_ns: int

    def as_dict(self) -> dict:
        return {"detected_ns": self.detected_ns, "priority": self.priority, "ports": list(self.ports),
                "paused_since_ns": self.paused_since_ns}


class _Check:
    """One pending check of a (port, priority): ``kind`` is ``deadlock``, ``storm`` or ``restore``."""

    __slots__ = ("callbacks", "port", "prio", "kind")
    _ok = True

    def __init__(self, cb, port, prio: int, kind: str):
        self.callbacks = (cb,)
        self.port, self.prio, self.kind = port, prio, kind


def _label(port) -> str:
    return f"{port.name}->{port.peer_name}"


class PfcWatch:
    """Deadlock detector and watchdog of one network (see module docstring)."""

    def __init__(self, net, params: dict):
        self.net = net
        self.deadlock_ps = int(params["pfc_deadlock_detect_ns"]) * PS_PER_NS
        self.deadlocks: list[Deadlock] = []
        self._reported: set = set()
        self._pending: set = set()
        self.watchdog = False
        self.storms = self.restorations = self.dropped_packets = 0
        self.repeated_storms = 0          #: storms of a queue the watchdog had restored before
        self._restored: set = set()       # (id(port), prio) restored at least once

    def enable_watchdog(self, port, params: dict) -> None:
        """Put ``port`` (a switch egress) under the watchdog with its switch's ``params``."""
        self.watchdog = True
        port.storm = [False] * N_PRIORITIES
        port.wd_req = [False] * N_PRIORITIES
        # [detection ps, restoration ps, drop action, the pipe callbacks a stormed drop queue replaced]
        port.wd = [int(params["pfc_watchdog_detection_ns"]) * PS_PER_NS,
                   int(params["pfc_watchdog_restoration_ns"]) * PS_PER_NS,
                   params["pfc_watchdog_action"] == "drop", None]

    # -- scheduling --------------------------------------------------------------------------------
    def _schedule(self, port, prio: int, kind: str, at_ps: int) -> None:
        key = (id(port), prio, kind)
        if key in self._pending:
            return
        self._pending.add(key)
        self.net.sched.schedule(at_ps, _Check(self._fire, port, prio, kind))

    def paused(self, port, prio: int, now: int) -> None:
        """``port`` was just paused on ``prio`` at ``now`` (ps)."""
        if port.storm is not None:
            self._schedule(port, prio, "storm", now + port.wd[0])
        if self.deadlock_ps and self.cycle(port, prio, exact=False):
            self._schedule(port, prio, "deadlock", now + self.deadlock_ps)

    def _fire(self, chk) -> None:
        port, prio, kind = chk.port, chk.prio, chk.kind
        self._pending.discard((id(port), prio, kind))
        now = self.net.env.now
        if kind == "deadlock":
            self._check_deadlock(port, prio, now)
        elif kind == "storm":
            self._check_storm(port, prio, now)
        else:
            self._check_restore(port, prio, now)

    # -- pause graph -------------------------------------------------------------------------------
    def _waits_for(self, port, prio: int, exact: bool):
        """Paused egresses of ``port``'s peer that ``port`` waits for on ``prio`` (sorted by name)."""
        out = []
        for q in port.peer.ports.values():
            if not q.paused[prio]:
                continue
            if exact and not any(pkt.pfc_port is port for pkt in q.queues[prio]):
                continue
            out.append(q)
        out.sort(key=lambda q: (str(q.name), str(q.peer_name)))
        return out

    def cycle(self, start, prio: int, exact: bool = True) -> list | None:
        """A cycle of the pause graph through ``start`` on ``prio`` (ports in order), or None.

        ``exact=False`` uses the superset of edges "the peer has a paused
        egress" (cheap, to decide whether a check is worth scheduling).
        """
        if not start.paused[prio]:
            return None
        parent = {id(start): None}
        stack = [(start, iter(self._waits_for(start, prio, exact)))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                continue
            if nxt is start:
                return [p for p, _ in stack]
            if id(nxt) in parent:
                continue
            parent[id(nxt)] = node
            stack.append((nxt, iter(self._waits_for(nxt, prio, exact))))
        return None

    # -- deadlock ----------------------------------------------------------------------------------
    def _check_deadlock(self, port, prio: int, now: int) -> None:
        cyc = self.cycle(port, prio, exact=True)
        if cyc is None:
            return
        since = max(q.pause_since[prio] for q in cyc)
        if now - since < self.deadlock_ps:
            self._schedule(port, prio, "deadlock", since + self.deadlock_ps)
            return
        labels = [_label(q) for q in cyc]
        i = labels.index(min(labels))
        labels = tuple(labels[i:] + labels[:i])
        key = (prio, frozenset(labels))
        if key in self._reported:
            return
        self._reported.add(key)
        d = Deadlock((now + 500) // PS_PER_NS, prio, labels, (since + 500) // PS_PER_NS)
        self.deadlocks.append(d)
        print(f"netsim: warning: PFC deadlock on priority {prio} at {d.detected_ns} ns: ports "
              f"{', '.join(labels)} paused in a cycle since {d.paused_since_ns} ns", file=sys.stderr)

    # -- watchdog ----------------------------------------------------------------------------------
    def _check_storm(self, port, prio: int, now: int) -> None:
        if not port.paused[prio] or port.storm[prio]:
            return
        det = port.wd[0]
        if now - port.pause_since[prio] < det:
            self._schedule(port, prio, "storm", port.pause_since[prio] + det)
            return
        if not port.qbytes[prio]:
            return
        self.storms += 1
        if (id(port), prio) in self._restored:
            self._repeated_storm(port, prio, now)
        self._trace(port, prio, "storm", now)
        port.storm[prio] = True
        port.wd_req[prio] = True
        port.set_paused(prio, False)
        if port.wd[2] and not port.down and port.wd[3] is None:
            port.wd[3] = port.pipe_cbs
            port.pipe_cbs = (port._arrive_wd, self.net.drive_cb)
            if port.pipe:
                port._pipe_ev.callbacks = port.pipe_cbs
        self._schedule(port, prio, "restore", now + port.wd[1])

    def _check_restore(self, port, prio: int, now: int) -> None:
        if port.wd_req[prio]:   # the peer still pauses it: still a storm
            if self.net.active:
                self._schedule(port, prio, "restore", now + port.wd[1])
            return
        port.storm[prio] = False
        self.restorations += 1
        self._restored.add((id(port), prio))
        self._trace(port, prio, "restore", now)
        saved = port.wd[3]
        if saved is not None and not any(port.storm):
            port.wd[3] = None
            if not port.down:
                port.pipe_cbs = saved
                if port.pipe:
                    port._pipe_ev.callbacks = port.pipe_cbs

    def _repeated_storm(self, port, prio: int, now: int) -> None:
        """A restored queue is stormed again: the buffer dependency that paused it persists (one warning)."""
        self.repeated_storms += 1
        if self.repeated_storms == 1:
            print(f"netsim: warning: PFC watchdog: {_label(port)} priority {prio} stormed again at "
                  f"{(now + 500) // PS_PER_NS} ns after its restoration: the pause that held it persists (a "
                  "cyclic buffer dependency or a peer that keeps pausing); its flows progress only between "
                  "storms (pfc_watchdog.repeated_storms in summary.json)", file=sys.stderr)

    def _trace(self, port, prio: int, event: str, now: int) -> None:
        sink = self.net.sinks.pfc
        if sink is not None:
            sink.add(((now + 500) // PS_PER_NS, port.name, port.peer_name, prio, event))

    def pfc_frame(self, port, prio: int, pause: bool) -> bool:
        """A PAUSE/RESUME reached ``port``; True if the watchdog swallowed it (stormed queue)."""
        st = port.storm
        if st is None or not st[prio]:
            return False
        port.wd_req[prio] = pause
        return True

    def stats(self) -> dict:
        """``summary.json`` sections: ``pfc_deadlocks`` (if any), ``pfc_watchdog`` (if on)."""
        out = {}
        if self.deadlocks:
            out["pfc_deadlocks"] = [d.as_dict() for d in self.deadlocks]
        if self.watchdog:
            out["pfc_watchdog"] = {"storms": self.storms, "restorations": self.restorations,
                                   "repeated_storms": self.repeated_storms,
                                   "dropped_packets": self.dropped_packets}
        return out
