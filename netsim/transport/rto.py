"""Retransmission timeout estimator (RFC 6298).

First sample R: SRTT = R, RTTVAR = R/2. Later samples:
RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R.
RTO = SRTT + max(G, 4 RTTVAR), clamped to [min_rto, max_rto]; each timeout
doubles it (exponential backoff, RFC 6298 5.5) until a new sample arrives.
Clock granularity G is 1 ns here. Times in ns.

>>> e = RtoEstimator(min_rto_ns=1000, max_rto_ns=10**9, initial_rto_ns=5000)
>>> e.rto_ns
5000
>>> e.sample(100); e.srtt_ns, e.rttvar_ns, e.rto_ns
(100.0, 50.0, 1000)
>>> e.sample(300); e.srtt_ns, e.rttvar_ns
(125.0, 87.5)
>>> e.backoff(); e.rto_ns
2000
"""
from __future__ import annotations


class RtoEstimator:
    __slots__ = ("srtt_ns", "rttvar_ns", "rto_ns", "min_rto_ns", "max_rto_ns", "_base")

    def __init__(self, min_rto_ns: int, max_rto_ns: int, initial_rto_ns: int):
        self.srtt_ns: float | None = None
        self.rttvar_ns = 0.0
        self.min_rto_ns = int(min_rto_ns)
        self.max_rto_ns = int(max_rto_ns)
        self._base = max(int(initial_rto_ns), self.min_rto_ns)
        self.rto_ns = min(self._base, self.max_rto_ns)

    def sample(self, rtt_ns: float) -> None:
        """Feed one RTT measurement (ns) from a segment that was not retransmitted (Karn).

        Written with locals and comparisons instead of ``max``/``min`` calls (one
        call per ACK on the packet backend's hot path); the same values."""
        s = self.srtt_ns
        if s is None:
            s = self.srtt_ns = float(rtt_ns)
            v = self.rttvar_ns = rtt_ns / 2.0
        else:
            v = self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * abs(s - rtt_ns)
            s = self.srtt_ns = 0.875 * s + 0.125 * rtt_ns
        v *= 4.0
        rto = s + (v if v > 1.0 else 1.0)          # SRTT + max(G, 4 RTTVAR), G = 1 ns
        if rto < self.min_rto_ns:
            rto = self.min_rto_ns
        if rto > self.max_rto_ns:
            rto = self.max_rto_ns
        self._base = self.rto_ns = int(rto)

    def backoff(self) -> None:
        """Double the RTO after a timeout (bounded by ``max_rto_ns``)."""
        self.rto_ns = min(self.rto_ns * 2, self.max_rto_ns)

    def reset_backoff(self) -> None:
        """Undo the backoff (RTO back to the last estimate) without a new sample.

        >>> e = RtoEstimator(min_rto_ns=1000, max_rto_ns=10**9, initial_rto_ns=5000)
        >>> e.backoff(); e.backoff(); e.reset_backoff(); e.rto_ns
        5000
        """
        self.rto_ns = min(self._base, self.max_rto_ns)
