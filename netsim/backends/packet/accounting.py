"""What the packet backend counts about finished flows, in memory that does not grow with them.

:class:`FlowAccounting` keeps the run's transport counters and Jain's
fairness index as running sums, so a finished flow leaves nothing behind
(issue 15: memory must follow the flows that are active, not the flows that
have run).

Transport counters (retransmitted bytes, retransmits, timeouts, ECN-marked
packets, CNPs) are split three ways, so that the summary's equal the sums of
the ``fct.csv`` columns by construction:

* ``recorded`` — the values written into each flow's ``fct.csv`` row, added
  when the row is made (the instant the receiver holds the last byte);
* ``unfinished`` — flows without a row: failed, or still running when asked;
* ``after_row`` — what a sender did after its flow's row was written: a
  retransmission or timeout before the last ACK reached it (spurious: the
  receiver had every byte). It used to be added to the summary but could
  not be in the row, which is why the two disagreed.

The summary's ``retransmitted_bytes`` etc. are ``recorded + unfinished`` (for
a run whose flows all completed: exactly the column sums); ``after_row`` is
reported as ``transport_counters_after_fct_row``; the three add up to what
the senders did in all.

Jain's index over whole flows (``jain_window_ns = 0``) needs only
``n``, ``sum x`` and ``sum x**2`` of x = size / FCT, summed in completion
order as a list summed at the end would be. The windowed index needs the
end of the run, so it keeps ``(start_ps, window_bytes)`` per finished flow
(only with ``jain_window_ns > 0``).
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

    def add(self, other: "TransportCounters", sign: int = 1) -> None:
        """Add (``sign`` = 1) or subtract (-1) ``other`` field by field."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + sign * getattr(other, f.name))

    @classmethod
    def of_flow(cls, flow) -> "TransportCounters":
        c = cls()
        c.add_flow(flow)
        return c

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def copy(self) -> "TransportCounters":
        return TransportCounters(**self.as_dict())


class FlowAccounting:
    """Running totals of finished flows (see module docstring)."""

    def __init__(self, jain_start_ns: int, jain_window_ns: int):
        self.recorded = TransportCounters()
        self.unfinished = TransportCounters()
        self.after_row = TransportCounters()
        self.jain_lo_ps = int(jain_start_ns) * PS_PER_NS
        self.jain_w_ps = int(jain_window_ns) * PS_PER_NS
        self._n = 0
        self._sum_x = 0
        self._sum_x2 = 0
        #: (start_ps, window bytes) of finished flows (windowed index only)
        self.windowed: list | None = [] if self.jain_w_ps > 0 else None

    def recorded_row(self, flow, rec) -> None:
        """``flow``'s record (``fct.csv`` row) ``rec`` was written; what it counts later is after its row."""
        self.recorded.add_record(rec)
        flow.row_counters = TransportCounters.of_flow(flow)

    def _split(self, flow, unfinished: TransportCounters, after_row: TransportCounters) -> None:
        snap = getattr(flow, "row_counters", None)
        if snap is None:
            unfinished.add_flow(flow)
        else:
            after_row.add_flow(flow)
            after_row.add(snap, -1)

    def flow_ended(self, flow, completed: bool) -> None:
        """A flow ended: completed both ways (``completed``) or failed; add its final counters."""
        self._split(flow, self.unfinished, self.after_row)
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
        """(summary counters: rows + flows without a row, counters after rows), ``running`` flows included."""
        unfinished, after = self.unfinished.copy(), self.after_row.copy()
        for f in running:
            self._split(f, unfinished, after)
        top = self.recorded.copy()
        top.add(unfinished)
        return top.as_dict(), after.as_dict()

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
