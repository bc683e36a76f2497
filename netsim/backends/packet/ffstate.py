"""The state side of the packet fast-forward: snapshots and the jump itself.

:mod:`.fastforward` decides when and :mod:`.ffcycles` whether; this module
reads and moves the network's state. A :class:`Snapshot` holds what the
steadiness tests compare (each active flow's in-order delivered bytes and
counters, each port's queue and counters, as values and as vectors);
:func:`jump` applies a :class:`JumpPlan`: the pending events and absolute
times of the network (or of one component, :mod:`.ffcomponents`) + ``dt``,
each flow's sequence space + its bytes, counters + their increments, the
congestion-control state as :mod:`.ffcc` says. A negative plan takes part
of a jump back (a thaw).

Left out: per-packet INT lists (HPCC is never jumped), PFC pause state (a
jump needs every port unpaused).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from ...transport.packet import CNP
from ...units import PS_PER_NS
from . import ffcc


#: flow counters a snapshot keeps, in order (attributes of the flow); a jump advances all but timeouts
FLOW_COUNTERS = ("ecn_marked_packets", "cnps_received", "cnps_sent", "retransmits", "retransmitted_bytes",
                 "timeouts")
#: port counters a snapshot keeps and a jump advances, in order (attributes of the port)
PORT_COUNTERS = ("tx_packets", "tx_bytes", "ecn_marks", "drops", "pauses", "pause_time_ps")
#: network counters a snapshot keeps and a jump advances, in order (attributes of the network)
NET_COUNTERS = ("pfc_events", "drops", "dropped_bytes", "dropped_payload_bytes")
_FLOW_GET, _PORT_GET, _NET_GET = attrgetter(*FLOW_COUNTERS), attrgetter(*PORT_COUNTERS), attrgetter(*NET_COUNTERS)


@dataclass(frozen=True)
class Snapshot:
    """The network at one detector tick (ps; bytes; counters as running totals)."""

    t_ps: int
    fids: tuple
    jumpable: bool           # every flow and port could be moved right now (see :func:`snapshot`)
    delivered: dict          # fid -> rcv_nxt (in-order bytes at the receiver)
    flow_counters: dict      # fid -> FLOW_COUNTERS values + the algorithm's own (ffcc.counters)
    queues: tuple            # per port (network order): bytes queued
    port_counters: tuple     # per port: PORT_COUNTERS values
    net_counters: tuple      # NET_COUNTERS values
    cc_rates: dict = None    # fid -> the algorithm's pacing rate (bps): a fixed point keeps it
    vectors: tuple = None    # (delivered per fid, queues, port bytes sent) as float arrays, for the tests


@dataclass(frozen=True)
class JumpPlan:
    """One jump: ``dt_ps`` of simulated time, bytes per flow, counter increments."""

    dt_ps: int
    flow_bytes: dict         # fid -> payload bytes advanced (whole segments)
    flow_counters: dict      # fid -> increments of FLOW_COUNTERS[:-1] + the algorithm's own counters
    port_counters: tuple     # per port: increments of PORT_COUNTERS
    net_counters: tuple      # increments of NET_COUNTERS
    period_windows: int = 1  # detector windows per cycle of the steady state (1: a fixed point)
    cycles: int = 0          # whole cycles jumped (0 for a fixed point)
    marks_err: float = 0.0   # the ECN marks' error bound this jump adds (ffcycles.counter_cycles)


def network_is_deterministic(net, params) -> bool:
    """No random loss or spraying anywhere and no Jain window (its bytes are not advanced).

    (RED/ECN marking draws are allowed: each port has its own stream, :mod:`.streams`.)
    """
    if params["routing"] == "spray" or params["jain_window_ns"] > 0:
        return False
    return not any(p.err for p in net.ports.values())


def _flow_ok(flow) -> bool:
    """A flow the jump can move now: known algorithm, sending, nothing to retransmit or reorder."""
    if not ffcc.can_jump(flow.cc_name) or flow.end_ps >= 0 or flow.sender_done or flow.rtxq:
        return False
    if getattr(flow, "in_recovery", False) or getattr(flow, "ooo", None) or getattr(flow, "nack_sent", False):
        return False
    return getattr(flow, "dupacks", 0) == 0


def snapshot(net, now_ps: int, flows: dict | None = None, ports: list | None = None) -> Snapshot | None:
    """The state the steadiness test compares; ``None`` if a flow's algorithm is unknown to the jump.

    ``flows`` / ``ports``: one component's (:mod:`.ffcomponents`; default: the whole network). A
    component's network counters are its ports' pauses and drops (its jump needs none of either).
    """
    whole = flows is None
    flows = net.flows if whole else flows
    if not whole and not all(f.route for f in flows.values()):
        return None
    if not all(ffcc.can_jump(f.cc_name) for f in flows.values()):
        return None
    ports = list(net.ports.values()) if ports is None else ports
    jumpable = all(_flow_ok(f) for f in flows.values()) and not any(
        True in p.paused or p.storm is not None for p in ports)   # PFC pause state is not shifted
    fids = tuple(sorted(flows))
    fl = [flows[i] for i in fids]
    fc = {i: _FLOW_GET(f) + ffcc.counters(f) for i, f in zip(fids, fl)}
    delivered = {i: f.rcv_nxt for i, f in zip(fids, fl)}
    queues = tuple(p.qtotal for p in ports)
    pc = tuple(map(_PORT_GET, ports))
    vec = (np.array([f.rcv_nxt for f in fl], dtype=float), np.array(queues, dtype=float),
           np.array([p.tx_bytes for p in ports], dtype=float))
    return Snapshot(now_ps, fids, jumpable, delivered, fc, queues, pc,
                    _NET_GET(net) if whole else (sum(p.pauses for p in ports), sum(p.drops for p in ports), 0, 0),
                    {i: f.cc.rate_bps for i, f in zip(fids, fl)}, vec)


def _shift_packet(pkt, dt: int, flow_bytes: dict) -> None:
    pkt.ts += dt
    pkt.ts_arr = getattr(pkt, "ts_arr", 0) + dt
    if pkt.kind != CNP:
        pkt.seq += flow_bytes.get(pkt.flow.fid, 0)


def jump(net, plan: JumpPlan, ports: list | None = None, owned=None, shift_all_ports: bool = False) -> int:
    """Apply ``plan`` to ``net`` (see module docstring); returns the data packets skipped.

    ``ports`` / ``owned``: one component's ports and the predicate saying which pending events are
    its own (:mod:`.ffcomponents`); default the whole network. ``shift_all_ports``: every port's times
    move (the whole network jumps) but only ``ports`` count. A negative ``plan`` undoes part of one.
    """
    dt, fb = plan.dt_ps, plan.flow_bytes
    net.sched.shift_network(dt, owned)
    counted = list(net.ports.values()) if ports is None else ports
    for port in (net.ports.values() if shift_all_ports or ports is None else ports):
        port.busy_until += dt
        for q in port.queues:
            for pkt in q:
                _shift_packet(pkt, dt, fb)
        for pkt in port.pipe:
            _shift_packet(pkt, dt, fb)
    for port, add in zip(counted, plan.port_counters):
        for a, x in zip(PORT_COUNTERS, add):
            setattr(port, a, getattr(port, a) + x)
    for a, x in zip(NET_COUNTERS, plan.net_counters):
        setattr(net, a, getattr(net, a) + x)
    skipped = 0
    n_own = len(FLOW_COUNTERS) - 1                     # timeouts are never advanced (none in a steady state)
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
        adds = plan.flow_counters[fid]
        for a, x in zip(FLOW_COUNTERS[:n_own], adds[:n_own]):
            setattr(f, a, getattr(f, a) + x)
        ffcc.shift(f, dt // PS_PER_NS, adds[n_own:])
        skipped += math.ceil(b / f.mss) + adds[3]
    return skipped
