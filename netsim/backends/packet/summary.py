"""The counters of a packet-backend run: what :meth:`.backend.PacketBackend.stats` reports.

Flows started, completed and failed, bytes delivered, drops (by priority),
ECN marks, CNPs, PFC pauses and pause time per port, PFC headroom
overflows, retransmissions and timeouts, packet hops, Jain's fairness index,
simulated time and SimPy events, the PFC watchdog's and fast-forward's
reports: read from the network's ports and the backend's running sums
(:class:`.accounting.FlowAccounting`), nothing kept per flow.

Left out: per-flow detail (``fct.csv``), time series (``queues.csv``, ``pfc.csv``, ``cc.csv``).
"""
from __future__ import annotations

from ...transport.packet import N_DATA_PRIORITIES, N_PRIORITIES
from ...units import PS_PER_NS


def packet_stats(be) -> dict:
    """The counters of packet backend ``be``'s run so far (``summary.json``, docs/packet.md)."""
    net = be.net
    ports = sorted(net.ports.values(), key=lambda q: (str(q.name), str(q.peer_name)))
    pause_time = {}
    now = be.env.now
    for q in ports:
        t = q.pause_time_ps + sum(now - q.pause_since[i] for i in range(N_PRIORITIES) if q.paused[i])
        if t or q.pauses:
            pause_time[f"{q.name}->{q.peer_name}"] = (t + 500) // PS_PER_NS
    t, after_row = be.accounting.counters(net.flows.values())
    hops_ = sum(q.tx_packets for q in ports)
    return {
        "backend": "packet",
        "flows": be.flows_started,
        "completed": be.completed,
        "failed": be.failed,
        "bytes_delivered": be.bytes_delivered,
        "drops": net.drops,
        "dropped_bytes": net.dropped_bytes,
        "dropped_payload_bytes": net.dropped_payload_bytes,
        "drops_by_priority": {str(i): n for i, n in enumerate(net.drops_by_prio[:N_DATA_PRIORITIES]) if n},
        "ecn_marks": sum(q.ecn_marks for q in ports),
        "ecn_marked_packets_received": t["ecn_marked_packets_received"],
        "cnps": t["cnps"],
        "pfc_pauses": sum(q.pauses for q in ports),
        "pfc_pause_time_ns": pause_time,
        "pfc_headroom_overflows": net.headroom_overflows,
        "retransmitted_bytes": t["retransmitted_bytes"],
        "retransmits": t["retransmits"],
        "timeouts": t["timeouts"],
        "transport_counters_after_fct_row": after_row,
        "packet_hops": hops_,
        "jain_fairness": be.jain_fairness(),
        "sim_time_ns": ((be.last_end_ps if not net.flows else now) + 500) // PS_PER_NS,
        "events": be.net.sched.events_scheduled() - be._eid0,
        **(net.pfc_watch.stats() if net.pfc_watch is not None else {}),
        **({"fast_forward": be.ff.stats()} if be.ff is not None else {}),
        **({"memo": be.memo.stats()} if be.memo is not None else {}),
    }
