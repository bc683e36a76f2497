"""What the packet backend counts about finished flows, in memory that does not grow with them.

:class:`FlowAccounting` keeps the run's transport counters and Jain's
fairness index as running sums, so a finished flow leaves nothing behind
(issue 15: memory must follow the flows that are active, not the flows that
have run).

Transport counters (retransmitted bytes, retransmits, timeouts, ECN-marked
packets, CNPs) are kept two ways:

* ``recorded`` — the values written into each flow's ``fct.csv`` row, added
  when the row is made (the instant the receiver holds the last byte). The
  summary's ``retransmitted_bytes`` etc. are these sums, so they equal the
  column sums of ``fct.csv`` by construction;
* ``all_flows`` — every flow's final values (added when it ends: completed
  both ways, or failed), plus the flows still running when asked. What a
  sender does after its row was written (a retransmission or a timeout
  before the last ACK reaches it: spurious, the receiver had every byte) and
  what flows without a row did (failed, or still running) is the difference,
  reported as ``transport_counters_outside_fct``.

Jain's index over whole flows (``jain_window_ns = 0``) needs only
``n``, ``sum x`` and ``sum x**2`` of x = size / FCT; summed in completion
order, as a list summed at the end would be. The windowed index needs the
end of the run, so it keeps ``(start_ps, window_bytes)`` per finished flow
(16 bytes of floats a flow, only with ``jain_window_ns > 0``).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from ...units import PS_PER_NS


@dataclass
class TransportCounters:
    """Per-flow transport counters summed over flows (names as in summary.json)."""

    retransmitted_bytes: int = 0
    retransmits: int = 0
    timeouts: int = 0
    ecn_marked_packets_received: int = 0
    cnps: int = 0

    def add_flow(self, flow) -> None:
        """Add a transport flow's counters as they are now."""
        self.retransmitted_bytes += flow.retransmitted_bytes
        self.retransmits += flow.retransmits
        self.timeouts += flow.timeouts
        self.ecn_marked_packets_received += flow.ecn_marked_packets
        self.cnps += flow.cnps_received

    def add_record(self, rec) -> None:
        """Add the counters written in a flow's record (its ``fct.csv`` row)."""
        self.retransmitted_bytes += rec.retransmitted_bytes
        self.retransmits += rec.retransmits
        self.timeouts += rec.timeouts
        self.ecn_marked_packets_received += rec.ecn_marked_packets
        self.cnps += rec.cnps_received

    def minus(self, other: "TransportCounters") -> dict:
        """``self - other`` field by field, as a dict."""
        return {f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)}

    def copy(self) -> "TransportCounters":
        return TransportCounters(**{f.name: getattr(self, f.name) for f in fields(self)})


class FlowAccounting:
    """Running totals of finished flows (see module docstring)."""

    def __init__(self, jain_start_ns: int, jain_window_ns: int):
        self.recorded = TransportCounters()
        self.ended = TransportCounters()
        self.jain_lo_ps = int(jain_start_ns) * PS_PER_NS
        self.jain_w_ps = int(jain_window_ns) * PS_PER_NS
        self._n = 0
        self._sum_x = 0
        self._sum_x2 = 0
        #: (start_ps, window bytes) of finished flows (windowed index only)
        self.windowed: list | None = [] if self.jain_w_ps > 0 else None

    def recorded_row(self, rec) -> None:
        """A flow's record (``fct.csv`` row) was written."""
        self.recorded.add_record(rec)

    def flow_ended(self, flow, completed: bool) -> None:
        """A flow ended: completed both ways (``completed``) or failed; add its final counters."""
        self.ended.add_flow(flow)
        if not completed:
            return
        if self.windowed is not None:
            self.windowed.append((flow.start_ps, flow.win_bytes))
            return
        fct = flow.end_ps - flow.start_ps
        if fct > 0:
            x = flow.size / fct
            self._n += 1
            self._sum_x += x
            self._sum_x2 += x * x

    def counters(self, running) -> tuple[dict, dict]:
        """(counters of the ``fct.csv`` rows, counters outside them) with ``running`` flows included."""
        every = self.ended.copy()
        for f in running:
            every.add_flow(f)
        rec = self.recorded.minus(TransportCounters())
        return rec, every.minus(self.recorded)

    def jain(self, end_ps: int, running) -> float | None:
        """Jain's index (sum x)^2 / (n sum x^2), or None without data (see PacketBackend.jain_fairness)."""
        if self.windowed is None:
            if not self._n or not self._sum_x:
                return None
            return self._sum_x ** 2 / (self._n * self._sum_x2)
        lo = self.jain_lo_ps
        hi = min(lo + self.jain_w_ps, end_ps)
        if hi <= lo:
            return None
        xs = [win / (hi - lo) for s, win in self.windowed if s < hi]
        xs += [f.win_bytes / (hi - lo) for f in running if f.start_ps < hi]
        if not xs or not any(xs):
            return None
        return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))
