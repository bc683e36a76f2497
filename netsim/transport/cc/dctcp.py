"""DCTCP (RFC 8257) as a pure state machine on the ``tcp`` transport.

Modelled: the sender's estimate α of the fraction of CE-marked bytes, updated
once per observation window (one window of data, ``SND.NXT`` at the window's
start) with ``α ← (1 − g)·α + g·F``; on an ECE-carrying ACK, at most once per
window, ``cwnd ← cwnd·(1 − α/2)`` (and ``ssthresh`` = the new cwnd, which also
ends slow start); otherwise standard Reno: slow start, ``cwnd += MSS·acked/cwnd``
in avoidance, halving on a fast-retransmit loss, 1 MSS after a timeout.

The switch side is a step marker at ``K`` on the instantaneous queue
(Kmin = Kmax = K, Pmax = 1), marking arriving packets (at enqueue, as the
DCTCP paper and RFC 8257 §3.1 describe); :meth:`DCTCP.ecn_settings` returns
those network settings. The receiver is assumed to echo CE exactly per packet (the
transport's ECE echo), i.e. no delayed-ACK state machine (RFC 8257 §3.2).

The observation window uses the transport's ``in_flight_bytes`` passed to
:meth:`on_ack`: ``SND.NXT = acked so far + in flight after this ACK``.

>>> cc = DCTCP(DCTCP.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=10e9, base_rtt_ns=100_000)
>>> cc.alpha, cc.cwnd_bytes
(1.0, 10000)
"""
from __future__ import annotations

import math

from ...params import Param, ParamTable
from .base import CongestionControl, register

#: DCTCP paper recommendation: K = 65 packets at 10 Gbps (scaled here with the link rate).
K_PACKETS_AT_10G = 65


@register
class DCTCP(CongestionControl):
    """DCTCP (RFC 8257): ECN-fraction α per window, cwnd·(1 − α/2)."""

    name = "dctcp"
    transport = "tcp"
    ecn_capable = True
    PARAMS = ParamTable("dctcp", [
        Param("g", 1 / 16, "float", "EWMA gain of the marked fraction α",
              "RFC 8257 §3.3 (α update; g = 1/16 as in the DCTCP paper)", minimum=0.0, maximum=1.0),
        Param("initial_alpha", 1.0, "float", "α before the first window ends",
              "Linux tcp_dctcp dctcp_alpha_on_init (1 = max); RFC 8257 §3.3 leaves it to the implementation", minimum=0.0, maximum=1.0),
        Param("init_cwnd_segments", 10, "int", "initial congestion window, segments",
              "RFC 6928 (IW10)", minimum=1),
        Param("min_rto_ns", 1_000_000, "time",
              "minimum retransmission timeout (read by the tcp transport)",
              "Vasudevan et al., SIGCOMM 2009 (RTO_min <= 1 ms in datacenters); the DCTCP paper "
              "(Alizadeh et al., SIGCOMM 2010) used 10 ms", minimum=1),
        Param("k_bytes", 0, "size",
              "switch step-marking threshold K (Kmin = Kmax = K, Pmax = 1); 0 = 65 MTU-packets "
              "per 10 Gbps of the port's rate",
              "Alizadeh et al., DCTCP, SIGCOMM 2010 §3.4 (K = 65 packets at 10 Gbps; K > C·RTT/7); "
              "RFC 8257 §4.1"),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        p = self.params
        self.g = float(p["g"])
        self.min_rto_ns = int(p["min_rto_ns"])
        self.alpha = float(p["initial_alpha"])
        self.cwnd_bytes = int(p["init_cwnd_segments"]) * self.mss_bytes
        self.ssthresh_bytes: float = math.inf
        self.in_recovery = False
        self._acked_total = 0
        self._window_end = self.cwnd_bytes  # SND.NXT at start: the initial window
        self._bytes_acked = 0         # in the current observation window
        self._bytes_marked = 0
        self._cwr_end = -1            # no second cut before acked_total passes this

    # -- switch side ---------------------------------------------------------------
    @classmethod
    def ecn_settings(cls, params: dict, link_rate_bps: float, *, mtu_bytes: int = 1500,
                     base_rtt_ns: int | None = None) -> dict:
        """Network ECN settings DCTCP wants on a port of ``link_rate_bps``: a step at K.

        >>> DCTCP.ecn_settings(DCTCP.PARAMS.resolve(), 10e9)
        {'ecn_kmin_bytes': 97500, 'ecn_kmax_bytes': 97500, 'ecn_pmax': 1.0, 'ecn_mark_at': 'enqueue'}
        """
        k = int(params.get("k_bytes") or 0)
        if k <= 0:
            k = int(round(K_PACKETS_AT_10G * mtu_bytes * link_rate_bps / 10e9))
        return {"ecn_kmin_bytes": k, "ecn_kmax_bytes": k, "ecn_pmax": 1.0, "ecn_mark_at": "enqueue"}

    # -- hooks ---------------------------------------------------------------------
    def on_ack(self, now_ns, acked_bytes, rtt_ns, ece, in_flight_bytes):
        self._acked_total += acked_bytes
        self._bytes_acked += acked_bytes
        if ece:
            self._bytes_marked += acked_bytes
        if self._acked_total >= self._window_end:  # observation window over (RFC 8257 §3.3)
            if self._bytes_acked > 0:
                frac = self._bytes_marked / self._bytes_acked
                self.alpha = (1.0 - self.g) * self.alpha + self.g * frac
            self._bytes_acked = self._bytes_marked = 0
            self._window_end = self._acked_total + in_flight_bytes
        if ece:  # react at most once per window; an ECE-carrying ACK never grows cwnd
            if self._acked_total > self._cwr_end:
                self._ecn_cut(in_flight_bytes)
            return
        if self.in_recovery or acked_bytes <= 0:
            return
        mss = self.mss_bytes
        if self.cwnd_bytes < self.ssthresh_bytes:
            grow = min(acked_bytes, 2 * mss)  # RFC 3465 ABC, L = 2
            self.cwnd_bytes = min(self.cwnd_bytes + grow, max(self.ssthresh_bytes, self.cwnd_bytes))
        else:
            self.cwnd_bytes += mss * acked_bytes / self.cwnd_bytes

    def _ecn_cut(self, in_flight_bytes):
        self.cwnd_bytes = max(self.cwnd_bytes * (1.0 - self.alpha / 2.0), 2 * self.mss_bytes)
        self.ssthresh_bytes = self.cwnd_bytes
        self._cwr_end = self._acked_total + in_flight_bytes

    def on_loss(self, now_ns, in_flight_bytes):
        flight = min(in_flight_bytes, self.cwnd_bytes) if in_flight_bytes > 0 else self.cwnd_bytes
        self.ssthresh_bytes = max(flight / 2.0, 2 * self.mss_bytes)
        self.cwnd_bytes = self.ssthresh_bytes
        self.in_recovery = True
        self._cwr_end = self._acked_total + in_flight_bytes

    def on_recovery_end(self, now_ns):
        self.in_recovery = False

    def on_timeout(self, now_ns, in_flight_bytes):
        if not self.in_recovery:  # no second reduction for a timeout inside fast recovery
            flight = min(in_flight_bytes, self.cwnd_bytes) if in_flight_bytes > 0 else self.cwnd_bytes
            self.ssthresh_bytes = max(flight / 2.0, 2 * self.mss_bytes)
        self.cwnd_bytes = self.mss_bytes
        self.in_recovery = False

    def sample(self):
        return self.cwnd_bytes, None, self.alpha
