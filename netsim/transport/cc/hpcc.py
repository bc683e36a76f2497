"""HPCC (Li et al., SIGCOMM 2019) sender as a pure state machine, fed by INT.

Modelled — the paper's Algorithm 1, on every ACK that carries telemetry:

* MeasureInflight: for every hop ``i`` of the path (matched by egress port
  with the previous ACK's record) ``txRate = Δtx_bytes / Δts`` and
  ``u_i = min(qlen, qlen_prev) / (B_i·T) + txRate / B_i``; the hop with the
  largest ``u_i`` gives ``u`` and its ``τ = Δts`` (capped at ``T``); then
  ``U ← (1 − τ/T)·U + (τ/T)·u``.
* ComputeWind: if ``U ≥ η`` or ``incStage ≥ maxStage``:
  ``W = W^c / (U/η) + W_AI``, else ``W = W^c + W_AI``; the reference window
  ``W^c`` (and ``incStage``: reset on the first branch, incremented on the
  second) is updated only on the first ACK beyond ``lastUpdateSeq``, which
  then becomes ``snd_nxt`` — once per RTT. With ``fast_react`` off the window
  is recomputed only then as well.
* The window is both a cap on bytes in flight (``cwnd_bytes = W``) and a
  pacing rate ``R = W / T`` (capped at line rate), as HPCC's NIC uses both.
  ``T`` is the flow's base RTT, ``W_init = B_NIC · T``; a flow starts at
  ``W_init`` (line rate), ``U = 1`` (HPCC ns-3 initial value).

Two presets (``preset``), every other ``None`` parameter taken from it:

* ``paper``: η = 0.95, maxStage = 5, W_AI = 80 B (Li et al. §5.1; §3.3
  derives it as ``W_init(1 − η)/N``), recomputed on every ACK (§4.2);
* ``hpcc``: HPCC's published ``simulation/run.py`` (cc=hp): U_TARGET 0.95,
  MI_THRESH 0 (= maxStage 0: the multiplicative branch always, no additive
  stages), RATE_AI 10 Mb/s × line rate / 25 Gb/s applied as a rate, i.e.
  W_AI = RATE_AI · T, FAST_REACT 1 (per-ACK window), HAS_WIN/VAR_WIN 1.

The INT header (``int_max_hops`` hop slots, :mod:`netsim.transport.telemetry`)
costs payload bytes on every data packet and ACK.

Left out: PINT (probabilistic INT), the ``MULTI_RATE``/``SAMPLE_FEEDBACK``
variants, HPCC's global-T option (T here is the flow's own base RTT).

>>> cc = HPCC(HPCC.PARAMS.resolve(), mss_bytes=1000, line_rate_bps=100e9, base_rtt_ns=8000)
>>> cc.cwnd_bytes, cc.rate_bps / 1e9, cc.eta, cc.max_stage, cc.w_ai_bytes
(100000.0, 100.0, 0.95, 5, 80.0)
>>> from netsim.transport.telemetry import IntHop
>>> port = object()
>>> cc.on_telemetry(0, [IntHop(port, 0, 0, 0, 100e9)], 1, 2)   # no previous record: U stays 1
>>> cc.wc                               # W^c / (U/eta) + W_AI = 0.95 W_init + 80
95080.0
>>> cc.on_telemetry(1, [IntHop(port, 0, 190_000, 8_000_000, 100e9)], 3, 4)   # 190 Gb/s over T: U = 2 eta
>>> cc.wc, cc.cwnd_bytes                # W^c halved, plus W_AI
(47620.0, 47620.0)
"""
from __future__ import annotations

from functools import partial

from ...params import Param
from ..telemetry import int_header_bytes
from .base import CongestionControl, PresetTable, preset_param, register

#: preset values and their sources; ``None`` parameters take these
PRESETS: dict[str, dict] = {
    "paper": {
        "_source": "Li et al., HPCC, SIGCOMM 2019: Algorithm 1; eta 95 %, maxStage 5, W_AI 80 B (§5.1; "
                   "W_AI = W_init(1 - eta)/N, §3.3); per-ACK reaction (§4.2)",
        "eta": 0.95, "max_stage": 5, "w_ai_bytes": 80, "rate_ai_bps": 0.0, "fast_react": True,
    },
    "hpcc": {
        "_source": "HPCC ns-3 simulation/run.py cc=hp (alibaba-edu/High-Precision-Congestion-Control): "
                   "U_TARGET 0.95, MI_THRESH 0, RATE_AI 10Mb/s*bw/25G (as W_AI = RATE_AI*T), FAST_REACT 1",
        "eta": 0.95, "max_stage": 0, "w_ai_bytes": 0, "rate_ai_bps": 10e6, "fast_react": True,
    },
}
DEFAULT_PRESET = "paper"
#: floor of U in ComputeWind (an idle path measures U = 0); any W^c/(U/eta) is then above W_init
MIN_U = 1e-9
#: the line rate HPCC's run.py scales RATE_AI with (``ai = 10 * bw / 25``)
RATE_AI_REF_BPS = 25e9


_p = partial(preset_param, PRESETS)


@register
class HPCC(CongestionControl):
    """HPCC window/rate control from per-hop INT (see module docstring)."""

    name = "hpcc"
    transport = "roce"
    ecn_capable = False
    #: the transport stamps ``pkt.intl`` on data packets and calls :meth:`on_telemetry`
    wants_int = True
    PARAMS = PresetTable("hpcc", [
        Param("preset", DEFAULT_PRESET, "choice", "which published parameter set fills the None values",
              "paper: Li et al. SIGCOMM'19; hpcc: HPCC ns-3 run.py (cc=hp)", choices=tuple(PRESETS)),
        _p("eta", "float", "target utilisation η", minimum=0.01, maximum=1.0),
        _p("max_stage", "int", "maxStage: additive stages before a multiplicative update", minimum=0),
        _p("w_ai_bytes", "size", "additive increase W_AI per update (0 = rate_ai_bps x T)"),
        _p("rate_ai_bps", "rate", "additive increase as a rate per 25 Gb/s of line rate (used if "
           "w_ai_bytes = 0)", minimum=0),
        _p("fast_react", "bool", "recompute W on every ACK (off: once per RTT)"),
        Param("int_max_hops", 5, "int", "INT hop slots in the header (its size counts on the wire)",
              "HPCC ns-3 IntHeader::maxHop = 5 (8 B per hop + 2 B count)", minimum=1, maximum=16),
        Param("min_rate_bps", 100e6, "rate", "rate (and window = rate x T) floor",
              "HPCC ns-3 RdmaHw MinRate default 100 Mb/s"),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        preset = PRESETS[params.get("preset") or DEFAULT_PRESET]
        e = {k: preset[k] if params.get(k) is None else params[k]
             for k in ("eta", "max_stage", "w_ai_bytes", "rate_ai_bps", "fast_react")}
        self.params = {**params, **e}
        self.int_bytes = int_header_bytes(int(params.get("int_max_hops", 5)))
        self.mss_bytes = max(1, self.mss_bytes - self.int_bytes)   # INT header comes out of the payload
        self.eta = float(e["eta"])
        self.max_stage = int(e["max_stage"])
        self.fast_react = bool(e["fast_react"])
        self.t_ns = max(1, int(self.base_rtt_ns))
        self._t_ps = self.t_ns * 1000
        self._t_ps_float = float(self._t_ps)   # T as a float divisor (exact: T is far below 2**53 ps)
        self._t_ns_float = float(self.t_ns)
        self.w_init = self.line_rate_bps * self.t_ns / 8e9
        w_ai = float(e["w_ai_bytes"])
        if w_ai <= 0:
            w_ai = float(e["rate_ai_bps"]) * self.line_rate_bps / RATE_AI_REF_BPS * self.t_ns / 8e9
        self.w_ai_bytes = w_ai
        self.w_min = float(params.get("min_rate_bps", 100e6)) * self.t_ns / 8e9
        self.wc = self.w_init                  # reference window W^c
        self.u = 1.0                           # utilisation estimate U
        self.inc_stage = 0
        self.last_update_seq = 0
        self.hops: list = []                   # the last ACK's INT records
        w = self.w_init if self.w_init > self.w_min else self.w_min   # a flow starts at W_init: line rate
        self.cwnd_bytes = w = self.w_init if w > self.w_init else w
        r = w * 8e9 / self.t_ns
        self.rate_bps = self.line_rate_bps if self.line_rate_bps < r else r

    # -- the one hook: Algorithm 1 on every ACK that echoes INT ------------------------------------
    def on_telemetry(self, now_ns: int, hops, ack_seq: int, snd_nxt: int) -> None:
        """NewAck: an ACK echoed ``hops`` (records laid out as :class:`~netsim.transport.telemetry.IntHop`).

        MeasureInflight: hop ``i`` of this ACK against hop ``i`` of the previous
        one (same egress port, ``Δts > 0``; hops beyond the shorter list are not
        compared) gives ``u_i = min(qlen, qlen_prev)/(B·T) + txRate/B``, the
        largest ``u_i`` and its ``τ`` update ``U``. ComputeWind: ``W`` from ``W^c``;
        ``W^c`` and ``incStage`` take the new values only when ``ack_seq >
        lastUpdateSeq`` (then ``lastUpdateSeq = snd_nxt``); otherwise, without
        ``fast_react``, nothing changes. Finally ``cwnd = W`` within ``[w_min,
        W_init]`` and ``R = min(W/T, line rate)``.

        One body, no calls (the per-ACK hot path); the divisors are floats
        (``float(T)`` equals the integer ``T``: the same quotients, bit for bit,
        at a cheaper float division), a zero queue term is not computed
        (``0.0 + x == x``). tests/transport/cc/test_hpcc_swift_timely.py checks
        it against the paper's formulas on hand-computed values.
        """
        prev = self.hops
        self.hops = hops
        best = -1.0                             # the largest u_i (none yet)
        tau = 0
        t_ps = self._t_ps_float
        n_prev = len(prev)
        i = 0
        for port, q, tx, ts, rate_bps in hops:  # MeasureInflight, hop by hop
            if i == n_prev:
                break
            p_port, p_q, p_tx, p_ts, _ = prev[i]
            i += 1
            if p_port is port and ts > p_ts:
                dt = ts - p_ts
                u = (tx - p_tx) * 8e12 / dt / rate_bps           # txRate / B
                if p_q < q:
                    q = p_q
                if q:
                    u = q * 8e12 / (rate_bps * t_ps) + u         # + min(qlen) / (B T)
                if u > best:
                    best = u
                    tau = dt
        u = self.u
        if best >= 0.0:                         # U <- (1 - tau/T) U + (tau/T) u, tau capped at T
            if tau < self._t_ps:
                f = tau / t_ps
                self.u = u = (1.0 - f) * u + f * best
            else:
                self.u = u = best
        if u < MIN_U:                           # an idle path: no division by zero
            u = MIN_U
        update = ack_seq > self.last_update_seq     # ComputeWind(U, updateWc)
        if not update and not self.fast_react:
            return
        eta = self.eta
        if u >= eta or self.inc_stage >= self.max_stage:
            w = self.wc / (u / eta) + self.w_ai_bytes
            stage = 0
        else:
            w = self.wc + self.w_ai_bytes
            stage = self.inc_stage + 1
        if w < self.w_min:
            w = self.w_min
        if w > self.w_init:
            w = self.w_init
        if update:                              # W^c = W, once per RTT
            self.wc = w
            self.inc_stage = stage
            self.last_update_seq = snd_nxt
        self.cwnd_bytes = w
        r = w * 8e9 / self._t_ns_float          # R = W / T
        self.rate_bps = self.line_rate_bps if self.line_rate_bps < r else r

    def sample(self):
        return self.cwnd_bytes, self.rate_bps, self.u
