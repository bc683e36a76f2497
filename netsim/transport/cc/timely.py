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
  increase; ``hai_raw_diff``: once the raw RTT difference has been < 0 for
  ``hai_after`` consecutive events, as the reference code counts), else
  ``N = 1``; ``gradient > 0``: ``R ← R·(1 − β·gradient)``;
* one event takes at most ``max_cut`` of the rate off (the reference code:
  half; Algorithm 1 and HPCC's ns-3: no cap, down to the floor);
* a flow's first event applies the law with a zero difference (Algorithm 1,
  the code) or only records the RTT (``first_event_records_only``, HPCC's
  ns-3);
* every step is scaled by ``f = min(1, time since the flow's last update /
  min_rtt)`` (``scale_by_interval``; the authors' reference code, and the
  update interval ``max(segment/R, minRTT)`` of Zhu et al.'s TIMELY model;
  the code leaves the gradient cut unscaled: ``scale_gradient_cut`` off);
* the rate stays in ``[min_rate_bps, line rate]``; the flow starts at line
  rate (TIMELY starts a host's first flow at ``C/(N+1)`` = C, Zhu et al. §4)
  unless ``init_rate_bps``;
  there is no window (``cwnd_bytes`` = ∞ unless ``window_bytes``);
* ``pacing``: ``packet`` paces every packet at R; ``segment`` sends each
  ``segment_bytes`` back to back at line rate and then waits so that the
  segment averages R — the paper's implementation, which adjusts the gaps
  between 16–64 KB chunks sent at near line rate (Zhu et al. §4, after
  Mittal et al. §5). R itself is :attr:`target_bps` (``cc.csv``'s rate);
  ``rate_bps`` is the NIC's current pacing rate.

The RTT sample is the latest ACK's (for a segment: its last packet's, i.e.
completion time − send time without the segment's own serialization, the
paper's §3.1 definition). ``min_rtt_ns`` = 0 uses the path's base RTT.

Four presets (:mod:`.timelypresets`, each value sourced): ``paper``,
``hpcc`` (HPCC's ns-3 TIMELY), ``code`` (the authors' reference code,
per-packet pacing: T_low 0) and ``patched`` — Zhu et al.'s Patched TIMELY
(CoNEXT 2016 §4.3): inside the band ``R ← (1 − w(g))·δ + R·(1 − β'·w(g)·
(RTT − RTT_ref)/RTT_ref)`` with ``w(g) = clip(2g + 1/2, 0, 1)``
(:func:`patched_weight`), a unique fixed point ``RTT_ref·(1 + δ/(β'R))``,
and completion events at least minRTT apart (``min_rtt_between_events``,
the model's update interval ``max(Seg/R, minRTT)``).

Why the RTT does not stay in ``[T_low, T_high]`` with T_low = 50 µs (presets
``paper`` and ``hpcc``; with ``code`` it does): the law has no fixed
point (Zhu, Ghobadi, Misra, Padhye, CoNEXT 2016, Theorem 1: at ``g = 0`` the
rate still grows by δ; with ``≤`` moved it has infinitely many, any RTT in
the band, with arbitrary unfairness), so it cycles. Inside the band it is a
proportional controller of the RTT with gain ``β·α·f·T_e/min_rtt`` per round
of completions (``T_e``: time between a flow's completions) acting on an RTT
one round trip old; above about 0.6 it overshoots below ``T_low``, where
only ``δ`` is added, and the queue empties (docs/congestion-control.md,
"Why the band check fails").

Checked against Algorithm 1 (as Zhu et al. restate it), the authors'
reference code and the parameters Zhu et al. give as the paper's
(C = 10 Gb/s, β 0.8, α 0.875, T_low 50 µs, T_high 500 µs, minRTT 20 µs):
the three regions, the EWMA weight α on the newest RTT difference, the
fixed minRTT normaliser, HAI after five non-positive-gradient completions,
the rate floor and line-rate cap, each flow's own completions (a flow
counts only its own acknowledged bytes). The reference code counts HAI on
raw RTT differences below zero, caps a cut at half the rate and does not
scale the gradient cut by ``f``: preset ``code`` does the same; ``paper``
counts smoothed gradients, as the paper states it, without a cap.

Left out: the NIC's completion batching beyond ``segment_bytes``, sending
segments "at less than line rate" (the paper's exact burst rate is not
given), a start rate per flow (``init_rate_bps`` is one start rate for every flow).

>>> cc = Timely(Timely.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=5000)
>>> cc.target_bps = 50e9; cc.on_ack(0, 16_000, 600_000, False, 0); round(cc.target_bps / 1e9, 3)
43.333
"""
from __future__ import annotations

import math

from ...errors import InputError
from .base import CongestionControl, register
from .timelypresets import _FROM_PRESET, DEFAULT_PRESET, PARAMS, PRESETS


@register
class Timely(CongestionControl):
    """TIMELY rate control from the RTT gradient."""

    name = "timely"
    transport = "roce"
    ecn_capable = False
    PARAMS = PARAMS

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        preset = PRESETS[params.get("preset") or DEFAULT_PRESET]
        p = self.params = {**params, **{k: preset[k] if params.get(k) is None else params[k] for k in _FROM_PRESET}}
        self.t_low, self.t_high = float(p["t_low_ns"]), float(p["t_high_ns"])
        self.a, self.beta = float(p["alpha"]), float(p["beta"])
        self.delta = float(p["delta_bps"]) or float(p["delta_per_line_rate"]) * self.line_rate_bps
        self.hai_any = bool(p["hai_any_increase"])
        self.hai_raw = bool(p["hai_raw_diff"])
        self.first_records = bool(p["first_event_records_only"])
        self.scale_cut = bool(p["scale_gradient_cut"])
        self.hai_n, self.hai_after = int(p["hai_n"]), int(p["hai_after"])
        self.min_rtt = float(p["min_rtt_ns"]) or float(max(self.base_rtt_ns, 1))
        self.gap_ns = self.min_rtt if p["min_rtt_between_events"] else 0.0
        self.patched = bool(p["patched"])
        self.patched_beta = float(p["patched_beta"])
        self.rtt_ref = float(p["rtt_ref_ns"]) or self.t_low
        if self.patched and self.rtt_ref <= 0:
            raise InputError("Patched TIMELY needs a reference RTT above 0", where="timely.rtt_ref_ns",
                             value=p["rtt_ref_ns"], accepted="> 0, or a t_low_ns above 0")
        self.segment = int(p["segment_bytes"])
        self.min_rate = float(p["min_rate_bps"])
        self.keep = 1.0 - float(p["max_cut"])   # the rate after a completion is at least keep x the rate before
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
        self.scale_interval = bool(p["scale_by_interval"])
        self._last_update_ns: int | None = None
        self.pace_segment = p["pacing"] == "segment"
        if self.pace_segment and self.segment <= 0:
            raise InputError("pacing = segment needs a segment", where="timely.segment_bytes",
                             value=self.segment, accepted="> 0, or timely.pacing=packet")
        init = float(p.get("init_rate_bps") or 0.0)
        self.target_bps = min(init, self.line_rate_bps) if init > 0 else self.line_rate_bps  # TIMELY's R
        if not self.pace_segment:
            self.rate_bps = self.target_bps      # rate_bps: the NIC's pacing rate
        self._burst_bytes = 0                    # pacing = segment: payload sent in the current segment
        self._burst_start_ns = 0

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
            if self.gap_ns and self._last_update_ns is not None and now_ns - self._last_update_ns < self.gap_ns:
                return                # Zhu et al.'s update interval max(Seg/R, minRTT): not yet minRTT
            self._bytes = 0
        else:
            if self._acked < self._next_event:
                return
            self._next_event = self._acked + in_flight_bytes + 1   # snd_nxt now: one event per RTT
        self.completion(self._last_rtt, now_ns)

    def on_send(self, now_ns, size_bytes):
        if not self.pace_segment:
            return
        if self._burst_bytes == 0:
            self._burst_start_ns = now_ns
        self._burst_bytes += size_bytes
        if self._burst_bytes < self.segment:
            self.rate_bps = math.inf             # inside a segment: back to back at line rate
            return
        # the segment's last packet: the gap after it brings the segment to segment_bytes at R
        end_ns = self._burst_start_ns + self._burst_bytes * 8e9 / self.target_bps
        gap_ns = max(end_ns - now_ns, 1e-3)
        self.rate_bps = size_bytes * 8e9 / gap_ns
        self._burst_bytes = 0

    def _factor(self, now_ns) -> float:
        """``min(1, time since the last update / min_rtt)`` (``scale_by_interval``), else 1."""
        last, self._last_update_ns = self._last_update_ns, now_ns
        if not self.scale_interval or last is None:
            return 1.0
        return min(1.0, (now_ns - last) / self.min_rtt)

    def completion(self, new_rtt: float, now_ns: int | None = None) -> None:
        """One completion event with RTT sample ``new_rtt`` (ns) at ``now_ns``: Algorithm 1."""
        self.events += 1
        f = self._factor(now_ns) if now_ns is not None else 1.0
        if self.prev_rtt is None:
            self.prev_rtt = new_rtt
            if self.first_records:    # HPCC ns-3: the first RTT's event only records the RTT
                return
        raw = new_rtt - self.prev_rtt
        self.rtt_diff = (1.0 - self.a) * self.rtt_diff + self.a * raw
        self.prev_rtt = new_rtt
        if self.hai_raw:              # reference code: the count follows the raw differences alone
            self.neg_count = self.neg_count + 1 if raw < 0 else 0
        gradient = self.rtt_diff / self.min_rtt
        r = self.target_bps
        if new_rtt < self.t_low:
            if self.hai_any:          # HPCC ns-3: an increase like any other (HAI after hai_after of them)
                r += (self.hai_n if self.neg_count >= self.hai_after else 1) * self.delta * f
                self.neg_count += 1
            else:                     # Algorithm 1: δ only
                r += self.delta * f
                if not self.hai_raw:
                    self.neg_count = 0
        elif new_rtt > self.t_high:
            r *= 1.0 - f * self.beta * (1.0 - self.t_high / new_rtt)
            if not self.hai_raw:
                self.neg_count = 0
        elif self.patched:            # Zhu et al. §4.3: weighted gradient, pulled to the reference RTT
            w = patched_weight(gradient)
            r += f * ((1.0 - w) * self.delta - self.patched_beta * w * r * (new_rtt - self.rtt_ref) / self.rtt_ref)
            if not self.hai_raw:
                self.neg_count = 0
        elif gradient <= 0.0:
            if self.hai_any:          # HPCC ns-3: HAI once hai_after increases came before this one
                r += (self.hai_n if self.neg_count >= self.hai_after else 1) * self.delta * f
                self.neg_count += 1
            else:                     # Algorithm 1: the hai_after-th non-positive gradient already uses HAI
                if not self.hai_raw:
                    self.neg_count += 1
                r += (self.hai_n if self.neg_count >= self.hai_after else 1) * self.delta * f
        else:
            if not self.hai_raw:
                self.neg_count = 0
            r *= 1.0 - min(1.0, (f if self.scale_cut else 1.0) * self.beta * gradient)
        if r < self.keep * self.target_bps:
            r = self.keep * self.target_bps
        self.target_bps = min(self.line_rate_bps, max(self.min_rate, r))
        if not self.pace_segment:
            self.rate_bps = self.target_bps

    def sample(self):
        cw = None if math.isinf(self.cwnd_bytes) else self.cwnd_bytes
        return cw, self.target_bps, None


def patched_weight(gradient: float) -> float:
    """Patched TIMELY's weight ``w(g)`` (Zhu et al. §4.3): 0 for ``g ≤ −1/4``, ``2g + 1/2`` between,
    1 for ``g ≥ 1/4`` — a rising RTT weighs the reference-RTT term, a falling one the increase δ."""
    return min(1.0, max(0.0, 2.0 * gradient + 0.5))


from .base import PathRefusal  # noqa: E402  (kept apart from the class: see check_path)


def _timely_check_path(cls, base_rtt_ns: float, hops: int, params) -> PathRefusal | None:
    """Refuse a path whose base RTT is at or above ``t_high_ns`` (the preset's when unset): every
    completion would then be a multiplicative decrease, down to ``min_rate_bps`` on an idle path."""
    preset = PRESETS[params.get("preset") or DEFAULT_PRESET]
    t_high = float(preset["t_high_ns"] if params.get("t_high_ns") is None else params["t_high_ns"])
    if base_rtt_ns < t_high:
        return None
    return PathRefusal(
        "base RTT at or above TIMELY's T_high: every completion would cut the rate",
        f"base RTT {base_rtt_ns / 1e3:.1f} us, t_high_ns {t_high / 1e3:g} us",
        f"a base RTT below T_high: raise it with --cc-param timely.t_high_ns (above "
        f"{math.ceil(base_rtt_ns / 1e3)}us)")


Timely.check_path = classmethod(_timely_check_path)
