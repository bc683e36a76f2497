"""The state side of the packet fast-forward: snapshots, the steadiness test, the jump itself.

:mod:`.fastforward` decides when; this module reads and moves the network's
state. A :class:`Snapshot` holds what the steadiness test compares (each
active flow's in-order delivered bytes and counters, each port's queue and
counters); :func:`plan_jump` turns a run of snapshots into a
:class:`JumpPlan` (or ``None``: not steady, not deterministic, or too short
a jump); :func:`jump` applies it: all pending network events and absolute
times + ``dt``, each flow's sequence space + its bytes, counters + their
measured rates.

Left out: state of algorithms other than ``none`` and DCTCP (their absolute
timers are not shifted, so they are never jumped), PFC pause state (a jump
needs every port unpaused), per-packet INT lists (HPCC is not eligible).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...transport.packet import CNP, N_DATA_PRIORITIES


#: congestion controls with no random draw and no absolute-time state (the first case of issue #21)
DETERMINISTIC_CCS = ("none", "dctcp")


@dataclass(frozen=True)
class Snapshot:
    """The network at one detector tick (ps; bytes; counters as running totals)."""

    t_ps: int
    fids: tuple
    delivered: dict          # fid -> rcv_nxt (in-order bytes at the receiver)
    flow_counters: dict      # fid -> (ecn_marked_packets, cnps_received, cnps_sent, retransmits, timeouts)
    queues: tuple            # per port (network order): bytes queued
    port_counters: tuple     # per port: (tx_packets, tx_bytes, ecn_marks)
    pfc_events: int


@dataclass(frozen=True)
class JumpPlan:
    """One jump: ``dt_ps`` of simulated time, bytes per flow, counter increments."""

    dt_ps: int
    flow_bytes: dict         # fid -> payload bytes advanced (whole segments)
    flow_counters: dict      # fid -> (ecn marks, cnps received, cnps sent) to add
    port_counters: tuple     # per port: (tx packets, tx bytes, ecn marks) to add


def network_is_deterministic(net, params) -> bool:
    """No random draw anywhere (no lossy link, no spraying) and no Jain window (its bytes are not advanced)."""
    if params["routing"] == "spray" or params["jain_window_ns"] > 0:
        return False
    return not any(p.err for p in net.ports.values())


def _random_marking(port) -> bool:
    """Whether ``port`` marks by a random draw for some data priority (RED band with Pmax < 1)."""
    return port.ecn_on and any(port.kmin[p] < port.kmax[p] and port.pmax[p] < 1.0
                               for p in range(N_DATA_PRIORITIES))


def _flow_ok(flow) -> bool:
    """A flow the jump can move: deterministic algorithm, sending, nothing to retransmit or reorder."""
    if flow.cc_name not in DETERMINISTIC_CCS or flow.end_ps >= 0 or flow.sender_done or flow.rtxq:
        return False
    if getattr(flow, "in_recovery", False) or getattr(flow, "ooo", None):
        return False
    if flow.ect and flow.route is not None and any(_random_marking(p) for p in flow.route):
        return False
    return True


def snapshot(net, now_ps: int) -> Snapshot | None:
    """The state the steadiness test compares, or ``None`` if a flow or port rules a jump out now."""
    flows = net.flows
    if not all(_flow_ok(f) for f in flows.values()):
        return None
    ports = list(net.ports.values())
    if any(any(p.paused) or p.storm is not None for p in ports):   # PFC pause state is not shifted
        return None
    fids = tuple(sorted(flows))
    return Snapshot(now_ps, fids, {i: flows[i].rcv_nxt for i in fids},
                    {i: (flows[i].ecn_marked_packets, flows[i].cnps_received, flows[i].cnps_sent,
                         flows[i].retransmits, flows[i].timeouts) for i in fids},
                    tuple(p.qtotal for p in ports), tuple((p.tx_packets, p.tx_bytes, p.ecn_marks) for p in ports),
                    net.pfc_events)


def _steady(hist: list, tol: float, mtu_bytes: int) -> bool:
    """Every flow's rate (mean window delivery) known within ``tol``; queues not drifting; no loss or pause."""
    first, last = hist[0], hist[-1]
    if last.pfc_events != first.pfc_events:
        return False
    n = len(hist) - 1
    for fid in last.fids:
        d = [b.delivered[fid] - a.delivered[fid] for a, b in zip(hist[:-1], hist[1:])]
        mean = sum(d) / n
        if min(d) <= 0:
            return False
        sem = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n)   # standard error of the mean
        half = n // 2
        drift = abs(sum(d[:half]) / half - sum(d[n - half:]) / half)
        if sem > tol * mean or drift > 2 * tol * mean:
            return False
        if last.flow_counters[fid][3:] != first.flow_counters[fid][3:]:
            return False   # a retransmission or timeout: not a steady state
    for q0, q1, c0, c1 in zip(first.queues, last.queues, first.port_counters, last.port_counters):
        if abs(q1 - q0) > tol * (c1[1] - c0[1]) + mtu_bytes:
            return False
    return True


def plan_jump(net, hist: list, tol: float, margin_windows: int, min_jump_ps: int) -> JumpPlan | None:
    """The jump the snapshots ``hist`` allow (``None``: not steady, or less than ``min_jump_ps``)."""
    if not _steady(hist, tol, int(net.params["mtu_bytes"])):
        return None
    first, last = hist[0], hist[-1]
    span = last.t_ps - first.t_ps
    window = span / (len(hist) - 1)
    rates = {f: (last.delivered[f] - first.delivered[f]) / span for f in last.fids}    # bytes per ps
    dt = min((net.flows[f].size - last.delivered[f]) / rates[f] - margin_windows * window for f in last.fids)
    foreign = net.sched.next_foreign_ps()
    if foreign is not None:
        dt = min(dt, foreign - last.t_ps)
    dt = int(dt)
    if dt < min_jump_ps:
        return None
    scale = dt / span
    flow_bytes = {f: int(rates[f] * dt // net.flows[f].mss) * net.flows[f].mss for f in last.fids}
    fc = {f: tuple(int(round((b - a) * scale)) for a, b in zip(first.flow_counters[f][:3], last.flow_counters[f][:3]))
          for f in last.fids}
    pc = tuple(tuple(int(round((b - a) * scale)) for a, b in zip(c0, c1))
               for c0, c1 in zip(first.port_counters, last.port_counters))
    return JumpPlan(dt, flow_bytes, fc, pc)


def _shift_packet(pkt, dt: int, flow_bytes: dict) -> None:
    pkt.ts += dt
    pkt.ts_arr = getattr(pkt, "ts_arr", 0) + dt
    if pkt.kind != CNP:
        pkt.seq += flow_bytes.get(pkt.flow.fid, 0)


def jump(net, plan: JumpPlan) -> int:
    """Apply ``plan`` to ``net`` (see module docstring); returns the data packets skipped."""
    dt, fb = plan.dt_ps, plan.flow_bytes
    net.sched.shift_network(dt)
    for port, add in zip(net.ports.values(), plan.port_counters):
        port.busy_until += dt
        for q in port.queues:
            for pkt in q:
                _shift_packet(pkt, dt, fb)
        for pkt in port.pipe:
            _shift_packet(pkt, dt, fb)
        port.tx_packets += add[0]
        port.tx_bytes += add[1]
        port.ecn_marks += add[2]
    skipped = 0
    for fid, b in fb.items():
        f = net.flows[fid]
        f.next_tx += dt
        if f.rto_deadline is not None:
            f.rto_deadline += dt
        for name in ("last_cnp_ps", "last_ts"):           # RoCE's CNP spacing, TCP's delayed-ACK echo
            if getattr(f, name, None) is not None:
                setattr(f, name, getattr(f, name) + dt)
        f.snd_una += b
        f.snd_nxt += b
        f.snd_max += b
        f.rcv_nxt += b
        f.rx_payload_bytes += b
        marks, cnps_r, cnps_s = plan.flow_counters[fid]
        f.ecn_marked_packets += marks
        f.cnps_received += cnps_r
        f.cnps_sent += cnps_s
        skipped += math.ceil(b / f.mss)
    return skipped
