"""TCP CUBIC (RFC 9438) with classic HyStart or HyStart++ (RFC 9406), as a pure state machine.

Modelled: slow start (one MSS per MSS acknowledged, at most 2 MSS per ACK, RFC 3465), the cubic window
``W_cubic(t) = C·(t − K)³ + W_max`` with ``K = ∛((W_max − cwnd_epoch)/C)``, the
per-ACK target ``W_cubic(t + RTT)`` clamped to ``[cwnd, 1.5·cwnd]``, the
Reno-friendly estimate ``W_est`` (α_cubic = 3(1−β)/(1+β), switching to 1 once
``W_est ≥ cwnd_prior``), fast convergence, multiplicative decrease β = 0.7 with
``ssthresh = max(flight·β, 2 MSS)``, and the timeout rule (cwnd = 1 MSS, and
the first avoidance epoch afterwards starts with K = 0, W_max = cwnd).

Slow-start exit, parameter ``hystart``:

* ``classic`` (**default**) — HyStart of Ha & Rhee (2011) as in Linux
  ``tcp_cubic.c`` and ns-3.37 ``TcpCubic`` (both on by default there): exit
  when a round's ACK train lasts longer than minRTT/2, or when the round's RTT
  rises by ``clamp(minRTT/8, 4 ms, 16 ms)``; only above 16 segments (see
  :mod:`netsim.transport.cc.hystart`). It is the default so that netsim's
  Cubic is the Cubic that Linux hosts and ns-3 run, which netsim is compared
  with; its ACK-train signal works at datacenter RTTs.
* ``plus`` — HyStart++ (RFC 9406): conservative slow start after an RTT rise
  of ``clamp(lastRoundMinRTT/8, 4 ms, 16 ms)``. Its thresholds target WAN RTTs:
  at a datacenter RTT (tens of µs) with switch buffers of a few MB the RTT can
  never grow by 4 ms before a loss, so there it is a no-op (slow start ends
  with a loss). The thresholds are parameters, to study a scaled variant.
  ``on``/``true`` (the old boolean values of this key) mean ``plus``.
* ``off`` — slow start until the first loss.

Deliberately left out: ECN response (CUBIC here is not ECN-capable; use
``dctcp``), spurious-congestion-event undo (RFC 9438 §4.9), pacing, and
application-limited detection. Reliability (dupacks, NewReno, RTO with
``min_rto_ns``) is the transport's job.

Windows are kept in bytes; the RFC's segment formulas are applied with
``C`` scaled by the MSS (``C_bytes = C·MSS`` per s³).

>>> cc = Cubic(Cubic.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=10e9, base_rtt_ns=100_000)
>>> cc.cwnd_bytes, cc.ssthresh_bytes
(10000, inf)
"""
from __future__ import annotations

import math

from ...params import Param, ParamTable
from .base import CongestionControl, register
from .hystart import DETECT_MODES, HYSTART_MODES, ClassicHystart, HystartChoice

# RFC 9406 constants that are not worth a parameter.
_CSS_GROWTH_DIVISOR = 4
# RFC 3465 §2.2: slow start grows by at most L·SMSS per ACK (L = 2).
_ABC_L = 2


@register
class Cubic(CongestionControl):
    """TCP CUBIC (RFC 9438), classic HyStart by default, HyStart++ (RFC 9406) optional; bytes."""

    name = "cubic"
    transport = "tcp"
    ecn_capable = False
    PARAMS = ParamTable("cubic", [
        Param("c", 0.4, "float", "cubic scaling constant C, segments/s^3",
              "RFC 9438 §5.1 (C = 0.4)", minimum=1e-9),
        Param("beta", 0.7, "float", "multiplicative decrease factor β_cubic (cwnd <- β·cwnd)",
              "RFC 9438 §4.6 (β_cubic = 0.7)", minimum=0.01, maximum=0.99),
        Param("fast_convergence", True, "bool", "release bandwidth faster when W_max shrinks",
              "RFC 9438 §4.7 (SHOULD be on; Linux/ns-3 default on)"),
        Param("reno_friendly", True, "bool", "use the Reno-friendly estimate W_est when it exceeds W_cubic",
              "RFC 9438 §4.3"),
        HystartChoice("hystart", "classic", "choice",
                      "slow-start exit: classic HyStart (ACK train + delay), plus = HyStart++ "
                      "(its >=4 ms RttThresh never fires at datacenter RTTs), off; on/true = plus",
                      "classic: Ha & Rhee, Computer Networks 2011; Linux tcp_cubic.c hystart=1 and "
                      "ns-3.37 TcpCubic HyStart=true (defaults); plus: RFC 9406",
                      choices=HYSTART_MODES),
        Param("hystart_detect", "both", "choice", "classic HyStart signals: both | train | delay",
              "Linux hystart_detect = HYSTART_ACK_TRAIN|HYSTART_DELAY; ns-3.37 HyStartDetect=BOTH",
              choices=DETECT_MODES),
        Param("hystart_low_window_segments", 16, "int", "classic HyStart runs only while cwnd >= this",
              "Linux hystart_low_window = 16; ns-3.37 HyStartLowWindow = 16", minimum=0),
        Param("hystart_ack_delta_ns", 2_000_000, "time", "classic HyStart: max spacing of ACKs in one train",
              "Linux hystart_ack_delta_us = 2000; ns-3.37 HyStartAckDelta = 2 ms", minimum=0),
        Param("hystart_train_fraction", 0.5, "float",
              "classic HyStart: exit when the ACK train lasts > this x minRTT",
              "Linux >= 5.6 (delay_min/2 without pacing; Ha & Rhee: forward delay); ns-3.37 uses 1",
              minimum=0.0),
        Param("hystart_delay_divisor", 8.0, "float",
              "classic HyStart delay threshold before clamping = minRTT / this",
              "Linux >= 5.6 HYSTART_DELAY_THRESH(delay_min >> 3); ns-3.37 uses 1", minimum=1e-9),
        Param("hystart_delay_min_ns", 4_000_000, "time", "classic HyStart delay threshold lower clamp",
              "Linux HYSTART_DELAY_MIN = 4 ms; ns-3.37 HyStartDelayMin = 4 ms", minimum=0),
        Param("hystart_delay_max_ns", 16_000_000, "time", "classic HyStart delay threshold upper clamp",
              "Linux HYSTART_DELAY_MAX = 16 ms (ns-3.37 HyStartDelayMax = 1 s)", minimum=0),
        Param("hystart_min_samples", 8, "int",
              "classic HyStart: RTT samples per round whose minimum is tested",
              "Linux HYSTART_MIN_SAMPLES = 8; ns-3.37 HyStartMinSamples = 8", minimum=1),
        Param("hystart_min_rtt_thresh_ns", 4_000_000, "time", "HyStart++ MIN_RTT_THRESH",
              "RFC 9406 §4.3 (4 ms)"),
        Param("hystart_max_rtt_thresh_ns", 16_000_000, "time", "HyStart++ MAX_RTT_THRESH",
              "RFC 9406 §4.3 (16 ms)"),
        Param("hystart_n_rtt_sample", 8, "int", "HyStart++ N_RTT_SAMPLE (RTT samples per round before deciding)",
              "RFC 9406 §4.3 (8)", minimum=1),
        Param("hystart_css_rounds", 5, "int", "HyStart++ CSS_ROUNDS (rounds of conservative slow start)",
              "RFC 9406 §4.3 (5)", minimum=1),
        Param("init_cwnd_segments", 10, "int", "initial congestion window, segments",
              "RFC 6928 (IW10)", minimum=1),
        Param("init_ssthresh_bytes", 0, "size", "initial slow-start threshold (0 = arbitrarily high)",
              "RFC 5681 §3.1 (SHOULD be arbitrarily high; ns-3 InitialSlowStartThreshold, Linux route "
              "metric ssthresh can set it)"),
        Param("min_rto_ns", 1_000_000, "time",
              "minimum retransmission timeout (read by the tcp transport)",
              "Vasudevan et al., SIGCOMM 2009: RTO_min <= 1 ms avoids incast collapse in datacenters "
              "(Linux TCP_RTO_MIN is 200 ms; RFC 6298 says 1 s)", minimum=1),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        p = self.params
        self.c = float(p["c"])
        self.beta = float(p["beta"])
        self.fast_convergence = bool(p["fast_convergence"])
        self.reno_friendly = bool(p["reno_friendly"])
        self.min_rto_ns = int(p["min_rto_ns"])
        self.alpha_cubic = 3.0 * (1.0 - self.beta) / (1.0 + self.beta)
        mss = self.mss_bytes
        self._c_bytes = self.c * mss  # bytes per s^3
        self.cwnd_bytes = int(p["init_cwnd_segments"]) * mss
        ss0 = int(p.get("init_ssthresh_bytes") or 0)
        self.ssthresh_bytes: float = ss0 if ss0 > 0 else math.inf
        # cubic epoch state (bytes, ns, s)
        self.w_max_bytes: float | None = None
        self.cwnd_prior_bytes: float = 0.0
        self.epoch_start_ns: int | None = None
        self.k_s: float = 0.0
        self.w_est_bytes: float = 0.0
        self._after_timeout = False
        self.in_recovery = False
        # RTT tracking (RFC 6298 smoothing, for W_cubic(t + RTT))
        self.srtt_ns: float | None = None
        self.min_rtt_ns: float = math.inf
        # cumulative-ACK bookkeeping (HyStart rounds): bytes acked since the flow started = snd_una
        self._acked_total = 0
        self.hystart: str = p["hystart"]
        # classic HyStart state machine (None unless hystart == "classic")
        self.hs_classic: ClassicHystart | None = None
        if self.hystart == "classic":
            self.hs_classic = ClassicHystart(
                mss_bytes=mss, low_window_segments=int(p["hystart_low_window_segments"]),
                ack_delta_ns=int(p["hystart_ack_delta_ns"]), train_fraction=float(p["hystart_train_fraction"]),
                delay_min_ns=int(p["hystart_delay_min_ns"]), delay_max_ns=int(p["hystart_delay_max_ns"]),
                delay_divisor=float(p["hystart_delay_divisor"]), min_samples=int(p["hystart_min_samples"]),
                detect=p["hystart_detect"])
        # HyStart++ state
        self._plus = self.hystart == "plus"
        self._hs_window_end = 0
        self._hs_last_round_min = math.inf
        self._hs_cur_round_min = math.inf
        self._hs_samples = 0
        self._hs_css_baseline = math.inf
        self._hs_css_rounds = 0
        self.in_css = False

    # -- the closed forms of RFC 9438 --------------------------------------------
    @staticmethod
    def k_seconds(w_max: float, cwnd_epoch: float, c: float = 0.4) -> float:
        """``K = ∛((W_max − cwnd_epoch)/C)`` in seconds (windows in segments).

        >>> round(Cubic.k_seconds(100, 70), 4)
        4.2172
        """
        return math.copysign(abs((w_max - cwnd_epoch) / c) ** (1.0 / 3.0), w_max - cwnd_epoch)

    @staticmethod
    def w_cubic(t_s: float, w_max: float, k_s: float, c: float = 0.4) -> float:
        """``W_cubic(t) = C·(t − K)³ + W_max`` (segments, seconds).

        >>> k = Cubic.k_seconds(100, 70)
        >>> [round(Cubic.w_cubic(t, 100, k), 6) for t in (0, k, 2 * k)]
        [70.0, 100.0, 130.0]
        """
        return c * (t_s - k_s) ** 3 + w_max

    def _w_cubic_bytes(self, t_s: float) -> float:
        return self._c_bytes * (t_s - self.k_s) ** 3 + self.w_max_bytes

    # -- hooks --------------------------------------------------------------------
    def on_ack(self, now_ns, acked_bytes, rtt_ns, ece, in_flight_bytes):
        if rtt_ns is not None and rtt_ns > 0:
            self._rtt_sample(rtt_ns)
        self._acked_total += acked_bytes
        if self.in_recovery or acked_bytes <= 0:
            return
        if self.cwnd_bytes < self.ssthresh_bytes:
            hs = self.hs_classic
            if hs is not None and not hs.found:
                if hs.on_ack(now_ns, self._acked_total, self._acked_total + in_flight_bytes, rtt_ns,
                             self.cwnd_bytes):
                    # Linux/ns-3: ssthresh = cwnd before this ACK's growth; the ACK then counts for avoidance
                    self.ssthresh_bytes = self.cwnd_bytes
                    self._avoidance(now_ns, acked_bytes)
                    return
            rest = self._slow_start(acked_bytes, rtt_ns, in_flight_bytes)
            if rest <= 0:
                return
            acked_bytes = rest
        self._avoidance(now_ns, acked_bytes)

    def _slow_start(self, acked, rtt_ns, in_flight) -> int:
        """Grow in slow start; return the acked bytes left over for avoidance."""
        if self._plus:
            acked = self._hystart_ack(acked, rtt_ns, in_flight)
            if self.cwnd_bytes >= self.ssthresh_bytes:
                return 0
        room = self.ssthresh_bytes - self.cwnd_bytes
        growth = min(acked, _ABC_L * self.mss_bytes)  # RFC 3465 appropriate byte counting, L = 2
        if self.in_css:
            growth /= _CSS_GROWTH_DIVISOR
        if growth <= room:
            self.cwnd_bytes += growth
            return 0
        self.cwnd_bytes = self.ssthresh_bytes
        return int(acked - room)

    def _avoidance(self, now_ns, acked):
        mss = self.mss_bytes
        cwnd = self.cwnd_bytes
        if self.epoch_start_ns is None:
            self.epoch_start_ns = now_ns
            if self._after_timeout or self.w_max_bytes is None or self.w_max_bytes <= cwnd:
                # RFC 9438 §4.8 / §4.10: K = 0 and W_max = cwnd at the epoch start
                self.w_max_bytes = cwnd
                self.k_s = 0.0
            else:
                self.k_s = ((self.w_max_bytes - cwnd) / self._c_bytes) ** (1.0 / 3.0)
            self._after_timeout = False
            self.w_est_bytes = cwnd
        t_s = (now_ns - self.epoch_start_ns) * 1e-9
        rtt_s = (self.srtt_ns if self.srtt_ns is not None else self.base_rtt_ns) * 1e-9
        # Reno-friendly estimate (RFC 9438 §4.3), per acked byte
        a = self.alpha_cubic if self.w_est_bytes < self.cwnd_prior_bytes else 1.0
        self.w_est_bytes += a * mss * acked / cwnd
        w_now = self._w_cubic_bytes(t_s)
        if self.reno_friendly and w_now < self.w_est_bytes:
            self.cwnd_bytes = max(cwnd, self.w_est_bytes)
            return
        target = self._w_cubic_bytes(t_s + rtt_s)
        if target < cwnd:
            target = cwnd
        elif target > 1.5 * cwnd:
            target = 1.5 * cwnd
        self.cwnd_bytes = cwnd + (target - cwnd) * acked / cwnd

    def _reduce(self, in_flight_bytes):
        cwnd = self.cwnd_bytes
        if self.fast_convergence and self.w_max_bytes is not None and cwnd < self.w_max_bytes:
            self.w_max_bytes = cwnd * (1.0 + self.beta) / 2.0
        else:
            self.w_max_bytes = cwnd
        self.cwnd_prior_bytes = cwnd
        # FlightSize, but never above cwnd (NewReno's inflated sends are not "the window")
        flight = min(in_flight_bytes, cwnd) if in_flight_bytes and in_flight_bytes > 0 else cwnd
        self.ssthresh_bytes = max(flight * self.beta, 2 * self.mss_bytes)
        self.epoch_start_ns = None
        self.in_css = False

    def on_loss(self, now_ns, in_flight_bytes):
        self._reduce(in_flight_bytes)
        self.cwnd_bytes = self.ssthresh_bytes
        self.in_recovery = True

    def on_recovery_end(self, now_ns):
        self.in_recovery = False

    def on_timeout(self, now_ns, in_flight_bytes):
        if not self.in_recovery:  # a timeout during fast recovery does not reduce twice (as Linux)
            self._reduce(in_flight_bytes)
        self.cwnd_bytes = self.mss_bytes
        self._after_timeout = True
        self.in_recovery = False
        if self.hs_classic is not None:  # Linux/ns-3 reset HyStart on TCP_CA_Loss
            self.hs_classic.reset()

    def sample(self):
        return self.cwnd_bytes, None, None

    # -- RTT and HyStart++ (classic HyStart: netsim.transport.cc.hystart) -----------
    def _rtt_sample(self, rtt_ns):
        if self.srtt_ns is None:
            self.srtt_ns = float(rtt_ns)
        else:
            self.srtt_ns += (rtt_ns - self.srtt_ns) / 8.0
        if rtt_ns < self.min_rtt_ns:
            self.min_rtt_ns = rtt_ns
        if self._plus and rtt_ns < self._hs_cur_round_min:
            self._hs_cur_round_min = rtt_ns
        self._hs_samples += 1

    def _hystart_ack(self, acked, rtt_ns, in_flight):
        """RFC 9406 §4.2 in slow start; may end slow start (ssthresh = cwnd)."""
        p = self.params
        if self._acked_total >= self._hs_window_end:  # a new round starts
            if self.in_css:
                self._hs_css_rounds += 1
                if self._hs_css_rounds >= p["hystart_css_rounds"]:
                    self.ssthresh_bytes = self.cwnd_bytes
                    self.in_css = False
                    return acked
            self._hs_last_round_min = self._hs_cur_round_min
            self._hs_cur_round_min = math.inf
            self._hs_samples = 0
            self._hs_window_end = self._acked_total + in_flight
        if self._hs_samples >= p["hystart_n_rtt_sample"] and math.isfinite(self._hs_cur_round_min):
            if not self.in_css and math.isfinite(self._hs_last_round_min):
                thresh = max(p["hystart_min_rtt_thresh_ns"],
                             min(self._hs_last_round_min / 8.0, p["hystart_max_rtt_thresh_ns"]))
                if self._hs_cur_round_min >= self._hs_last_round_min + thresh:
                    self._hs_css_baseline = self._hs_cur_round_min
                    self.in_css = True
                    self._hs_css_rounds = 0
            elif self.in_css and self._hs_cur_round_min < self._hs_css_baseline:
                self.in_css = False  # spurious: back to standard slow start
                self._hs_css_baseline = math.inf
        return acked
