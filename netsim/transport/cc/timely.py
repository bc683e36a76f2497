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
where it settles depends on the start. Inside the band the law is a
proportional controller of the RTT with gain ``β·α·T_e/min_rtt`` per round
of completions (``T_e``: time between a flow's completions) acting on an RTT
one round trip old; above about 0.6 (two rounds of delay) it overshoots
below ``T_low``, where only ``δ`` is added, and the queue empties
(docs/congestion-control.md, "Why the band check fails").

Checked against Algorithm 1 and the authors' reference code: the three
regions, the EWMA of consecutive RTT differences normalised by a fixed
minimum RTT, HAI after five negative-gradient completions, the rate floor and
line-rate cap. The reference code also scales every step by
``min(1, time since the last update / minRTT)``; left out, as it is 1
whenever completions are at least ``min_rtt`` apart (16 KB at ≤ 6.4 Gb/s
per flow with a 20 µs minRTT).

Left out: per-segment NIC completion batching (every ACKed byte counts),
the rate-update pacing engine's granularity.

>>> cc = Timely(Timely.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=5000)
>>> cc.rate_bps = 50e9; cc.on_ack(0, 16_000, 600_000, False, 0); round(cc.rate_bps / 1e9, 3)
43.333
"""
from __future__ import annotations

from functools import partial

import math

from ...params import Param
from .base import CongestionControl, PresetTable, preset_param, register

_SRC = "Mittal et al., TIMELY, SIGCOMM 2015"
_HPCC = "HPCC ns-3 (alibaba-edu/High-Precision-Congestion-Control)"
#: the authors' published reference code of Algorithm 1 (R. Mittal, timely-code-snippet.cc)
_CODE = "the authors' reference code (Mittal, timely-code-snippet.cc)"

#: preset values and their sources; ``None`` parameters take these
PRESETS: dict[str, dict] = {
    "paper": {
        "_source": f"{_SRC}: §5 T_low 50 us, T_high 500 us, δ 10 Mb/s, 16 KB completion segments; "
                   "Algorithm 1 (only δ below T_low, HAI only for non-positive gradients in the band); "
                   "minRTT = the path's base RTT (netsim choice; the paper's setting used 20 us). "
                   f"{_CODE} pairs T_low 50 us with 64 KB-message pacing and recommends T_low 0 under "
                   "per-packet pacing (netsim's NIC paces per packet)",
        "t_low_ns": 50_000, "t_high_ns": 500_000, "delta_bps": 10e6, "delta_per_line_rate": 0.0,
        "hai_any_increase": False, "min_rtt_ns": 0, "segment_bytes": 16_000,
    },
    "hpcc": {
        "_source": f"{_HPCC}: simulation/run.py cc=timely (RATE_AI 10*bw/10 Mb/s = line rate / 1000, "
                   "RATE_HAI 5 x RATE_AI, T_low/T_high/minRTT left at RdmaHw's TimelyTLow 50000 ns, "
                   "TimelyTHigh 500000 ns, TimelyMinRtt 20000 ns); RdmaHw::UpdateRateTimely: one update "
                   "per RTT, every increase counts towards HAI (also below T_low)",
        "t_low_ns": 50_000, "t_high_ns": 500_000, "delta_bps": 0.0, "delta_per_line_rate": 1e-3,
        "hai_any_increase": True, "min_rtt_ns": 20_000, "segment_bytes": 0,
    },
}
DEFAULT_PRESET = "paper"
_FROM_PRESET = ("t_low_ns", "t_high_ns", "delta_bps", "delta_per_line_rate", "hai_any_increase", "min_rtt_ns",
                "segment_bytes")


_p = partial(preset_param, PRESETS)


@register
class Timely(CongestionControl):
    """TIMELY rate control from the RTT gradient."""

    name = "timely"
    transport = "roce"
    ecn_capable = False
    PARAMS = PresetTable("timely", [
        Param("preset", DEFAULT_PRESET, "choice", "which published parameter set fills the None values",
              f"paper: {_SRC}; hpcc: HPCC ns-3 run.py cc=timely + RdmaHw defaults", choices=tuple(PRESETS)),
        _p("t_low_ns", "time", "below this RTT: additive increase", minimum=0),
        _p("t_high_ns", "time", "above this RTT: multiplicative decrease", minimum=1),
        Param("alpha", 0.875, "float", "EWMA weight of the newest RTT difference",
              f"HPCC ns-3 RdmaHw TimelyAlpha 0.875 ({_CODE} recommends 0.02; the paper's own value is not "
              "verified here)",
              minimum=0.0, maximum=1.0),
        Param("beta", 0.8, "float", "multiplicative-decrease factor",
              f"HPCC ns-3 RdmaHw TimelyBeta 0.8; the same decreaseFactor 0.8 in {_CODE}",
              minimum=0.0, maximum=1.0),
        _p("delta_bps", "rate", "additive increment δ (0 = delta_per_line_rate x line rate)", minimum=0),
        _p("delta_per_line_rate", "float", "δ as a fraction of the line rate (used if delta_bps = 0)",
           minimum=0.0),
        Param("hai_n", 5, "int", "HAI multiplier N (HAI step = N x δ)",
              f"{_SRC} §4.3 (N = 5); HPCC run.py RATE_HAI = 5 x RATE_AI", minimum=1),
        Param("hai_after", 5, "int", "consecutive increase events before HAI",
              f"{_SRC} §4.3 (five completion events); {_CODE} HAI_Thresh 5; HPCC ns-3 m_incStage >= 5",
              minimum=1),
        _p("hai_any_increase", "bool", "every increase (also below T_low) counts towards HAI and may use it"),
        _p("min_rtt_ns", "time", "gradient normaliser (0 = the path's base RTT)"),
        _p("segment_bytes", "size", "acknowledged bytes per completion event (0 = one event per RTT: the "
           "first ACK beyond the data sent at the last event)"),
        Param("min_rate_bps", 100e6, "rate", "rate floor", "HPCC ns-3 RdmaHw MinRate default 100 Mb/s"),
        Param("window_bytes", 0, "size", "optional in-flight cap (0 = rate-based only)",
              "HPCC run.py timely_vwin variant uses a window; timely has none (HAS_WIN 0)"),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        preset = PRESETS[params.get("preset") or DEFAULT_PRESET]
        p = self.params = {**params, **{k: preset[k] if params.get(k) is None else params[k] for k in _FROM_PRESET}}
        self.t_low, self.t_high = float(p["t_low_ns"]), float(p["t_high_ns"])
        self.a, self.beta = float(p["alpha"]), float(p["beta"])
        self.delta = float(p["delta_bps"]) or float(p["delta_per_line_rate"]) * self.line_rate_bps
        self.hai_any = bool(p["hai_any_increase"])
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
            if self.hai_any:          # HPCC ns-3: an increase like any other (HAI after hai_after of them)
                r += (self.hai_n if self.neg_count >= self.hai_after else 1) * self.delta
                self.neg_count += 1
            else:                     # Algorithm 1: δ only
                r += self.delta
                self.neg_count = 0
        elif new_rtt > self.t_high:
            r *= 1.0 - self.beta * (1.0 - self.t_high / new_rtt)
            self.neg_count = 0
        elif gradient <= 0.0:
            if self.hai_any:          # HPCC ns-3: HAI once hai_after increases came before this one
                r += (self.hai_n if self.neg_count >= self.hai_after else 1) * self.delta
                self.neg_count += 1
            else:                     # Algorithm 1: the hai_after-th non-positive gradient already uses HAI
                self.neg_count += 1
                r += (self.hai_n if self.neg_count >= self.hai_after else 1) * self.delta
        else:
            self.neg_count = 0
            r *= 1.0 - min(1.0, self.beta * gradient)
        self.rate_bps = min(self.line_rate_bps, max(self.min_rate, r))

    def sample(self):
        cw = None if math.isinf(self.cwnd_bytes) else self.cwnd_bytes
        return cw, self.rate_bps, None
