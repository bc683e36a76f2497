"""TIMELY (Mittal et al., SIGCOMM 2015) as a pure state machine on the ``roce`` transport.

Modelled (the paper's Algorithm 1), with RTTs from the packet backend's own
clock (send time stamped in the packet, echoed by the ACK — NIC hardware
timestamps): a *completion event* is every ``segment_bytes`` of newly
acknowledged data (0: once per RTT, as HPCC's ns-3 TIMELY), and uses the
latest RTT sample ``new_rtt``:

* ``rtt_diff ← (1 − α)·rtt_diff + α·(new_rtt − prev_rtt)``;
  ``gradient = rtt_diff / min_rtt``;
* ``new_rtt < T_low``: ``R += δ``; ``new_rtt > T_high``:
  ``R ← R·(1 − β·(1 − T_high/new_rtt))``;
* otherwise ``gradient ≤ 0``: ``R += N·δ`` with ``N = hai_n`` once the
  gradient has been ≤ 0 for ``hai_after`` consecutive events (hyperactive
  increase), else ``N = 1``; ``gradient > 0``: ``R ← R·(1 − β·gradient)``.
* the rate stays in ``[min_rate_bps, line rate]``; the flow starts at line
  rate; there is no window (``cwnd_bytes`` = ∞ unless ``window_bytes``).

``min_rtt_ns`` = 0 uses the path's base RTT. The RTT has no unique fixed
point inside ``[T_low, T_high]`` (any RTT with zero gradient is one), so
where it settles depends on the start.

Left out: per-segment NIC completion batching (every ACKed byte counts),
the rate-update pacing engine's granularity.

>>> cc = Timely(Timely.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=5000)
>>> cc.rate_bps = 50e9; cc.on_ack(0, 16_000, 600_000, False, 0); round(cc.rate_bps / 1e9, 3)
43.333
"""
from __future__ import annotations

import math

from ...params import Param, ParamTable
from .base import CongestionControl, register

_SRC = "Mittal et al., TIMELY, SIGCOMM 2015"


@register
class Timely(CongestionControl):
    """TIMELY rate control from the RTT gradient."""

    name = "timely"
    transport = "roce"
    ecn_capable = False
    PARAMS = ParamTable("timely", [
        Param("t_low_ns", 50_000, "time", "below this RTT: additive increase", f"{_SRC} §5 (T_low 50 us)"),
        Param("t_high_ns", 500_000, "time", "above this RTT: multiplicative decrease",
              f"{_SRC} §5 (T_high 500 us)", minimum=1),
        Param("alpha", 0.875, "float", "EWMA weight of the newest RTT difference",
              f"{_SRC} §5; HPCC ns-3 RdmaHw TimelyAlpha 0.875", minimum=0.0, maximum=1.0),
        Param("beta", 0.8, "float", "multiplicative-decrease factor", f"{_SRC} §5 (β = 0.8)",
              minimum=0.0, maximum=1.0),
        Param("delta_bps", 10e6, "rate", "additive increment δ", f"{_SRC} §5 (δ = 10 Mb/s)"),
        Param("hai_n", 5, "int", "HAI multiplier N", f"{_SRC} §4.3 (N = 5)", minimum=1),
        Param("hai_after", 5, "int", "consecutive non-positive gradients before HAI",
              f"{_SRC} §4.3 (five completion events)", minimum=1),
        Param("min_rtt_ns", 0, "time", "gradient normaliser (0 = the path's base RTT)",
              f"{_SRC} §4.3 (minRTT; 20 us in the paper's setting)"),
        Param("segment_bytes", 16_000, "size", "acknowledged bytes per completion event (0 = one event "
              "per RTT: the first ACK beyond the data sent at the last event, as HPCC's ns-3 TIMELY)",
              f"{_SRC} §5 (16-64 KB segments)"),
        Param("min_rate_bps", 100e6, "rate", "rate floor", "HPCC ns-3 RdmaHw MinRate default 100 Mb/s"),
        Param("window_bytes", 0, "size", "optional in-flight cap (0 = rate-based only)",
              "HPCC run.py timely_vwin variant uses a window; timely has none (HAS_WIN 0)"),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        p = self.params
        self.t_low, self.t_high = float(p["t_low_ns"]), float(p["t_high_ns"])
        self.a, self.beta = float(p["alpha"]), float(p["beta"])
        self.delta = float(p["delta_bps"])
        self.hai_n, self.hai_after = int(p["hai_n"]), int(p["hai_after"])
        self.min_rtt = float(p["min_rtt_ns"]) or float(max(self.base_rtt_ns, 1))
        self.segment = int(p["segment_bytes"])
        self.min_rate = float(p["min_rate_bps"])
        w = int(p["window_bytes"])
        self.cwnd_bytes = w if w > 0 else math.inf
        self.rate_bps = self.line_rate_bps
        self.prev_rtt: float | None = None
        self.rtt_diff = 0.0
        self.neg_count = 0
        self._bytes = 0
        self._acked = 0
        self._next_event = 0             # segment_bytes = 0: acked bytes that end the current RTT
        self._last_rtt: float | None = None
        self.events = 0

    def on_ack(self, now_ns, acked_bytes, rtt_ns, ece, in_flight_bytes):
        if rtt_ns is not None:
            self._last_rtt = float(rtt_ns)
        self._bytes += acked_bytes
        self._acked += acked_bytes
        if self._last_rtt is None:
            return
        if self.segment > 0:
            if self._bytes < self.segment:
                return
            self._bytes = 0
        else:
            if self._acked < self._next_event:
                return
            self._next_event = self._acked + in_flight_bytes + 1   # snd_nxt now: one event per RTT
        self.completion(self._last_rtt)

    def completion(self, new_rtt: float) -> None:
        """One completion event with RTT sample ``new_rtt`` (ns): Algorithm 1."""
        self.events += 1
        if self.prev_rtt is None:
            self.prev_rtt = new_rtt
        self.rtt_diff = (1.0 - self.a) * self.rtt_diff + self.a * (new_rtt - self.prev_rtt)
        self.prev_rtt = new_rtt
        gradient = self.rtt_diff / self.min_rtt
        r = self.rate_bps
        if new_rtt < self.t_low:
            r += self.delta
            self.neg_count = 0
        elif new_rtt > self.t_high:
            r *= 1.0 - self.beta * (1.0 - self.t_high / new_rtt)
            self.neg_count = 0
        elif gradient <= 0.0:
            self.neg_count += 1
            r += (self.hai_n if self.neg_count >= self.hai_after else 1) * self.delta
        else:
            self.neg_count = 0
            r *= 1.0 - min(1.0, self.beta * gradient)
        self.rate_bps = min(self.line_rate_bps, max(self.min_rate, r))

    def sample(self):
        cw = None if math.isinf(self.cwnd_bytes) else self.cwnd_bytes
        return cw, self.rate_bps, None
