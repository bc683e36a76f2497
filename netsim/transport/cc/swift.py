"""Swift (Kumar et al., SIGCOMM 2020) as a pure state machine on the ``tcp`` transport.

Modelled (the paper's Algorithm 1), with the RTT measured by the packet
backend's own clock — the send time stamped in the data packet and echoed
by its ACK, i.e. NIC hardware timestamps, no host noise:

* target delay ``t = base_target + hops · hop_scale + fs``, where the flow
  scaling term ``fs = clamp(α/√cwnd + β', 0, fs_range)`` with
  ``α = fs_range / (1/√fs_min_cwnd − 1/√fs_max_cwnd)``,
  ``β' = −α/√fs_max_cwnd`` (cwnd in packets) shrinks the target as more
  flows share a link (``flow_scaling`` off: ``fs = 0``); ``hops`` is the
  number of links of the flow's forward path;
* on an ACK with ``delay < t``: ``cwnd += ai·acked/cwnd`` (cwnd ≥ 1 packet)
  or ``cwnd += ai·acked`` (below one packet); otherwise, at most once per
  RTT since the last decrease, ``cwnd ← max(1 − β·(delay − t)/delay,
  1 − max_mdf)·cwnd``;
* fast retransmit: ``cwnd ← (1 − max_mdf)·cwnd`` (once per RTT) and the
  timeout count restarts; retransmit timeout: the same decrease (also at
  most once per RTT), or ``min_cwnd`` after ``retx_reset_threshold``
  consecutive timeouts (every ACK restarts the count);
* cwnd clamped to ``[min_cwnd, max_cwnd]`` packets; below one packet the
  flow is paced at ``cwnd·MSS / RTT`` (``rate_bps``), which is what lets a
  large incast converge without loss.

Fabric and host: netsim has no per-packet host (NIC-to-stack) delay, so
the endpoint delay Swift's host window reacts to is always zero and only the
fabric window acts; ``host_target_ns`` is kept as a parameter for that
reason and documented as inert.

Under per-packet spraying (``routing=spray``) the route is not fixed and
``hops`` is 0 (no topology scaling).

Checked against the paper's Algorithm 1, §3.4 and §3.5 line by line. The
paper names ħ, fs_range, fs_min_cwnd, fs_max_cwnd, ai, β, max_mdf and
RETX_RESET_THRESHOLD (Table 2, Algorithm 1) but gives no values for them;
the values here are a public implementation's (each Param says which). It
gives 25 µs as the target of its testbed experiments (§5.1, §5.2), the
0.001-packet window floor (§3.4) and a 100 µs endpoint target (§5.4).
Algorithm 1 restarts the once-per-RTT clock whenever ``cwnd ≤ cwnd_prev``
(also when nothing changed); here only on a decrease, as its comment
("MD once every RTT") states.

Left out: the host (endpoint-congestion) window, delayed-ACK and
ACK-coalescing corrections, the "QP" (connection) multiplexing.

>>> cc = Swift(Swift.PARAMS.resolve({"flow_scaling": False}), mss_bytes=1000, line_rate_bps=100e9,
...            base_rtt_ns=5000)
>>> cc.set_path(hops=4); cc.target_ns()
29000.0
>>> cc.on_ack(0, 1000, 40_000, False, 0); round(cc.cwnd_pkts, 4)   # 62.5 x max(1 - 0.8 x 11/40, 0.5)
48.75
"""
from __future__ import annotations

import math

from ...params import Param, ParamTable
from .base import CongestionControl, register

_SRC = "Kumar et al., Swift, SIGCOMM 2020"
#: the paper names these parameters (Table 2, Algorithm 1) without giving values
_NO_VALUE = "the paper gives no value"
#: a public implementation whose defaults agree (ai 1.0, beta 0.8, max_mdf 0.5, fs_min/max_cwnd 0.1/100)
_HTSIM = "same default in htsim's UEC Swift (UecSrc::_swift_*)"


@register
class Swift(CongestionControl):
    """Swift delay-based window (fabric part) with pacing below one packet."""

    name = "swift"
    transport = "tcp"
    #: host-stack cost (netsim.hoststack): none — Swift runs in Google's kernel-bypass Snap/Pony Express
    #: stack (Kumar et al., SIGCOMM 2020, §2), not kernel TCP, so no per-connection 42 Gb/s kernel cap
    host_transport = "roce"
    ecn_capable = False
    PARAMS = ParamTable("swift", [
        Param("base_target_ns", 25_000, "time", "base target fabric RTT (includes propagation)",
              f"{_SRC} §5.1-5.2 (the testbed target: throughput saturates above ~25 us; 'we set the "
              "target delay to 25us')", minimum=1),
        Param("hop_scale_ns", 1_000, "time", "target added per hop of the forward path",
              f"{_SRC} §3.5 (topology-based scaling, ħ in Table 2; {_NO_VALUE}); netsim choice 1 us"),
        Param("flow_scaling", True, "bool", "shrink the target as cwnd grows (flow-count scaling)",
              f"{_SRC} §3.5 (flow-based scaling)"),
        Param("fs_range_ns", 125_000, "time", "largest flow-scaling addition to the target",
              f"{_SRC} §3.5 Table 2 ({_NO_VALUE}); netsim choice 5 x base target (one public ns-3 "
              "RDMA Swift uses 4 x)"),
        Param("fs_min_cwnd", 0.1, "float", "cwnd (packets) at which the flow scaling is fs_range",
              f"{_SRC} §3.5 Table 2 ({_NO_VALUE}); {_HTSIM}", minimum=1e-6),
        Param("fs_max_cwnd", 100.0, "float", "cwnd (packets) at which the flow scaling is 0",
              f"{_SRC} §3.5 Table 2 ({_NO_VALUE}); {_HTSIM}", minimum=1e-6),
        Param("ai", 1.0, "float", "additive increase, packets per RTT",
              f"{_SRC} Algorithm 1 ({_NO_VALUE}); {_HTSIM}",
              minimum=0.0),
        Param("beta", 0.8, "float", "multiplicative-decrease gain on (delay - target)/delay",
              f"{_SRC} Algorithm 1 ({_NO_VALUE}); {_HTSIM}", minimum=0.0, maximum=1.0),
        Param("max_mdf", 0.5, "float", "largest multiplicative decrease per RTT",
              f"{_SRC} Algorithm 1 ({_NO_VALUE}); {_HTSIM}", minimum=0.0, maximum=1.0),
        Param("min_cwnd", 0.001, "float", "smallest window, packets (pacing below 1)",
              f"{_SRC} §3.4 (cwnd down to 0.001 packets under large incasts)", minimum=1e-9),
        Param("max_cwnd", 0.0, "float", "largest window, packets (0 = line rate x the largest "
              "target delay: one flow can fill the path and its target queue)",
              "netsim choice (the paper bounds cwnd but gives no value)", minimum=0.0),
        Param("init_cwnd_pkts", 0.0, "float", "initial window, packets (0 = one BDP of the path)",
              "netsim choice: line rate from the start, as a NIC transport does", minimum=0.0),
        Param("retx_reset_threshold", 5, "int", "consecutive timeouts after which cwnd = min_cwnd",
              f"{_SRC} Algorithm 1 (RETX_RESET_THRESHOLD; {_NO_VALUE}); netsim choice 5", minimum=1),
        Param("host_target_ns", 100_000, "time",
              "host (endpoint) target; inert: netsim has no per-packet endpoint delay",
              f"{_SRC} §3.3 (endpoint target); §5.4 uses 100 us"),
        Param("min_rto_ns", 1_000_000, "time", "minimum retransmission timeout (tcp transport)",
              "Vasudevan et al., SIGCOMM 2009 (RTO_min <= 1 ms in datacenters)", minimum=1),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        p = self.params
        self.min_rto_ns = int(p["min_rto_ns"])
        self.ai, self.beta, self.max_mdf = float(p["ai"]), float(p["beta"]), float(p["max_mdf"])
        self.min_cwnd = float(p["min_cwnd"])
        bdp_pkts = max(1.0, self.bdp_bytes / self.mss_bytes)
        self.base_target_ns = float(p["base_target_ns"])
        self.hop_scale_ns = float(p["hop_scale_ns"])
        self.flow_scaling = bool(p["flow_scaling"])
        fs_range = float(p["fs_range_ns"])
        top_ns = self.base_target_ns + 16 * self.hop_scale_ns + (fs_range if self.flow_scaling else 0.0)
        self.max_cwnd = float(p["max_cwnd"]) or max(bdp_pkts, self.line_rate_bps * top_ns / 8e9 / self.mss_bytes)
        self.cwnd_pkts = min(float(p["init_cwnd_pkts"]) or bdp_pkts, self.max_cwnd)
        lo, hi = 1 / math.sqrt(float(p["fs_min_cwnd"])), 1 / math.sqrt(float(p["fs_max_cwnd"]))
        self.fs_range_ns = fs_range
        self.fs_alpha = fs_range / (lo - hi) if lo > hi else 0.0
        self.fs_beta = -self.fs_alpha * hi
        self.reset_after = int(p["retx_reset_threshold"])
        self.hops = 0
        self.rtt_ns = float(self.base_rtt_ns)
        self.last_decrease_ns = -math.inf
        self.consec_rto = 0
        self._apply()

    def set_path(self, *, hops: int) -> None:
        """The transport tells the number of links of the forward path (topology scaling)."""
        self.hops = int(hops)

    def target_ns(self) -> float:
        """Current target delay, ns (base + hop scaling + flow scaling)."""
        t = self.base_target_ns + self.hops * self.hop_scale_ns
        if self.flow_scaling:
            fs = self.fs_alpha / math.sqrt(self.cwnd_pkts) + self.fs_beta
            t += min(max(fs, 0.0), self.fs_range_ns)
        return t

    def _apply(self) -> None:
        c = min(max(self.cwnd_pkts, self.min_cwnd), self.max_cwnd)
        self.cwnd_pkts = c
        self.cwnd_bytes = c * self.mss_bytes
        # below one packet: pace one packet every rtt / cwnd (Swift §3.4); else window-limited, unpaced
        self.rate_bps = math.inf if c >= 1.0 else c * self.mss_bytes * 8e9 / max(self.rtt_ns, 1.0)

    def _can_decrease(self, now_ns: int) -> bool:
        return now_ns - self.last_decrease_ns >= self.rtt_ns

    def _decrease(self, now_ns: int, factor: float) -> None:
        self.cwnd_pkts *= factor
        self.last_decrease_ns = now_ns

    def on_ack(self, now_ns, acked_bytes, rtt_ns, ece, in_flight_bytes):
        self.consec_rto = 0
        if rtt_ns is None or acked_bytes <= 0:
            return
        delay = float(max(rtt_ns, 1))
        self.rtt_ns = delay
        acked = acked_bytes / self.mss_bytes
        target = self.target_ns()
        if delay < target:
            c = self.cwnd_pkts
            self.cwnd_pkts = c + (self.ai * acked / c if c >= 1.0 else self.ai * acked)
        elif self._can_decrease(now_ns):
            f = max(1.0 - self.beta * (delay - target) / delay, 1.0 - self.max_mdf)
            self._decrease(now_ns, f)
        self._apply()

    def on_loss(self, now_ns, in_flight_bytes):
        self.consec_rto = 0                  # Algorithm 1, On Fast Recovery: retransmit_cnt <- 0
        if self._can_decrease(now_ns):
            self._decrease(now_ns, 1.0 - self.max_mdf)
            self._apply()

    def on_timeout(self, now_ns, in_flight_bytes):
        self.consec_rto += 1
        if self.consec_rto >= self.reset_after:
            self.cwnd_pkts = self.min_cwnd
        elif self._can_decrease(now_ns):     # Algorithm 1 line 20: once per RTT, as every decrease
            self._decrease(now_ns, 1.0 - self.max_mdf)
        self._apply()

    def sample(self):
        rate = None if math.isinf(self.rate_bps) else self.rate_bps
        return self.cwnd_bytes, rate, None


from .base import PathRefusal  # noqa: E402  (kept apart from the class: see check_path)


def _swift_check_path(cls, base_rtt_ns: float, hops: int, params) -> PathRefusal | None:
    """Refuse a path whose base RTT is at or above the fabric target without flow scaling
    (``base_target_ns + hops · hop_scale_ns``): every ACK would then see delay ≥ target and
    shrink the window, down to ``min_cwnd`` on an idle path, a setting no deployment runs."""
    target = float(params["base_target_ns"]) + hops * float(params["hop_scale_ns"])
    if base_rtt_ns < target:
        return None
    return PathRefusal(
        "base RTT at or above Swift's fabric target: every ACK would shrink the window",
        f"base RTT {base_rtt_ns / 1e3:.1f} us, target {target / 1e3:.1f} us (base_target_ns "
        f"{float(params['base_target_ns']) / 1e3:g} us + {hops} hops x hop_scale_ns "
        f"{float(params['hop_scale_ns']) / 1e3:g} us)",
        f"a base RTT below the target: raise it with --cc-param swift.base_target_ns (above "
        f"{math.ceil(base_rtt_ns / 1e3)}us)")


Swift.check_path = classmethod(_swift_check_path)
