"""DCQCN (Zhu et al., SIGCOMM 2015) reaction point, plus its switch and receiver settings.

Three roles; this module is the **RP** (sender NIC) state machine and the
settings the two others need:

* CP (switch egress): RED-like marking between ``kmin_bytes`` and
  ``kmax_bytes`` with ``pmax``, on the egress queue at dequeue — :meth:`DCQCN.ecn_settings`
  returns the network parameters (``ecn_kmin_bytes``, ``ecn_kmax_bytes``,
  ``ecn_pmax``, ``ecn_mark_at=dequeue``) a preset implies for a port of a given rate; ``run_flows`` applies them unless the
  user set them explicitly (``--set`` wins).
* NP (receiver NIC): at most one CNP per flow per ``cnp_interval_ns``
  (0 = one per marked packet); the roce transport reads
  :attr:`DCQCN.cnp_interval_ns`.
* RP: starts at line rate. On a rate decrease ``R_T ← R_C``,
  ``R_C ← max(min_rate, R_C·(1 − α/2))``; α follows ``α ← (1 − g)·α (+ g)``;
  rate-increase events from a timer (``rate_timer_ns``) and a byte counter
  (``byte_counter_bytes``, 0 = off): the first ``F = fast_recovery_steps``
  are fast recovery ``R_C ← (R_C + R_T)/2``, then additive increase
  (``R_T += rai_bps``), then hyper increase (``R_T += rhai_bps``, times the
  stage when ``hai_scale_with_stage``), always followed by
  ``R_C ← (R_C + R_T)/2`` and capped at line rate.

Two RP styles cover the presets:

* ``alpha_update=on_cnp`` + ``rate_decrease_interval_ns=0`` (paper): each CNP
  cuts the rate at once and raises α; the α timer decays α after each full
  ``alpha_timer_ns`` without a CNP; the timer and byte counter both count
  (additive once either passes F, hyper once both do).
* ``alpha_update=per_period`` + ``rate_decrease_interval_ns>0`` (Mellanox
  firmware as modelled by HPCC's ns-3 ``RdmaHw::*Mlx``): α is updated every
  period (up if a CNP arrived in it, else down); the rate is cut at most once
  per decrease interval if a CNP arrived; with the byte counter off, timer
  events 1..F are fast recovery, event F+1 additive, later ones hyper.

Preset values (``preset`` = hpcc | nvidia | paper) fill every parameter left
at ``None``; :data:`PRESETS` lists them with their sources (they and the
parameter table are :mod:`.dcqcnpresets`, re-exported here). The default is
:data:`DEFAULT_PRESET` (``hpcc``; :data:`DEFAULT_PRESET_REASON` says why);
``paper`` reproduces the SIGCOMM'15 figures and must be asked for. With
``rate_scale_ref_bps > 0`` (hpcc), ``rai_bps``, ``rhai_bps`` and the ECN
thresholds are scaled by ``link rate / rate_scale_ref_bps`` as HPCC's run.py
does.

All timers are lazy (:meth:`advance`), batched in closed form where a run of
ticks is a pure decay or a no-op, so a flow costs no events of its own.

>>> cc = DCQCN(DCQCN.PARAMS.resolve({"preset": "paper"}), mss_bytes=1000, line_rate_bps=40e9, base_rtt_ns=10_000)
>>> cc.on_cnp(0); cc.rate_bps / 1e9
20.0
>>> for i in range(1, 6):
...     cc.advance(i * 55_000); print(cc.rate_bps / 1e9)
30.0
35.0
37.5
38.75
39.375
"""
from __future__ import annotations

import math

from .base import CongestionControl, register
# the presets and the parameter table live in .dcqcnpresets; their names stay importable from here
from .dcqcnpresets import DEFAULT_PRESET, DEFAULT_PRESET_REASON, PARAMS, PRESETS, SCALED  # noqa: F401
from .dcqcnpresets import PresetParamTable  # noqa: F401

INF = math.inf


@register
class DCQCN(CongestionControl):
    """DCQCN rate-based RoCEv2 congestion control (RP state machine; CP/NP settings)."""

    name = "dcqcn"
    transport = "roce"
    ecn_capable = True
    PARAMS = PARAMS

    # -- parameters ----------------------------------------------------------------
    @classmethod
    def effective_params(cls, params: dict, link_rate_bps: float | None = None) -> dict:
        """Fill ``None`` values from the preset and apply rate scaling.

        >>> e = DCQCN.effective_params({"preset": "hpcc"}, 100e9)
        >>> e["rai_bps"] / 1e6, e["kmin_bytes"], e["g"]
        (20.0, 400000, 0.00390625)
        """
        preset = params.get("preset") or DEFAULT_PRESET
        table = PRESETS[preset]
        out = {}
        for p in cls.PARAMS:
            v = params.get(p.name, p.default)
            out[p.name] = table[p.name] if v is None and p.name in table else v
        ref = out["rate_scale_ref_bps"]
        if ref and link_rate_bps:
            f = link_rate_bps / ref
            for k in ("rai_bps", "rhai_bps"):
                if params.get(k) is None:
                    out[k] = table[k] * f
            for k in ("kmin_bytes", "kmax_bytes"):
                if params.get(k) is None:
                    out[k] = int(round(table[k] * f))
        return out

    @classmethod
    def ecn_settings(cls, params: dict, link_rate_bps: float, **_) -> dict:
        """Network ECN settings (CP) the preset implies on a port of ``link_rate_bps``.

        >>> DCQCN.ecn_settings({"preset": "hpcc"}, 100e9)
        {'ecn_kmin_bytes': 400000, 'ecn_kmax_bytes': 1600000, 'ecn_pmax': 0.2, 'ecn_mark_at': 'dequeue'}
        >>> DCQCN.ecn_settings({"preset": "paper"}, 100e9)
        {'ecn_kmin_bytes': 5000, 'ecn_kmax_bytes': 200000, 'ecn_pmax': 0.01, 'ecn_mark_at': 'dequeue'}
        """
        e = cls.effective_params(params, link_rate_bps)
        return {"ecn_kmin_bytes": int(e["kmin_bytes"]), "ecn_kmax_bytes": int(e["kmax_bytes"]),
                "ecn_pmax": float(e["pmax"]), "ecn_mark_at": "dequeue"}

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        e = self.effective_params(params, self.line_rate_bps)
        self.params = e
        self.g = float(e["g"])
        self.alpha_period_ns = int(e["alpha_timer_ns"])
        self.per_period = e["alpha_update"] == "per_period"
        self.initial_alpha = float(e["initial_alpha"])
        self.dec_interval_ns = int(e["rate_decrease_interval_ns"])
        self.clamp_target = bool(e["clamp_target_rate"])
        self.rate_period_ns = int(e["rate_timer_ns"])
        self.byte_counter = int(e["byte_counter_bytes"])
        self.f_steps = int(e["fast_recovery_steps"])
        self.rai = float(e["rai_bps"])
        self.rhai = float(e["rhai_bps"])
        self.hai_scaled = bool(e["hai_scale_with_stage"])
        self.min_rate = float(e["min_rate_bps"])
        self.cnp_interval_ns = int(e["cnp_interval_ns"])
        w = int(e["window_bytes"])
        self.cwnd_bytes = w if w > 0 else INF
        self.rate_bps = self.line_rate_bps            # R_C
        self.target_bps = self.line_rate_bps          # R_T
        self.alpha = self.initial_alpha
        self.t_stage = 0
        self.b_stage = 0
        self._bytes = 0
        self.active = False                           # timers run after the first CNP
        self._next_alpha = INF
        self._next_rate = INF
        self._next_dec = INF
        self._cnp_alpha = False                       # per_period: CNP seen in this α period
        self._cnp_dec = False                         # a cut is pending (decrease interval mode)
        self.cnps = 0
        self.rate_cuts = 0

    # -- lazy timers -----------------------------------------------------------------
    def advance(self, now_ns: int) -> None:
        """Apply every α, decrease-check and rate-increase tick at or before ``now_ns``."""
        while self.active:
            ta, td, tr = self._next_alpha, self._next_dec, self._next_rate
            if ta <= td and ta <= tr:
                if ta > now_ns:
                    return
                self._alpha_ticks(min(td, tr, now_ns))
            elif td <= tr:
                if td > now_ns:
                    return
                self._dec_tick(now_ns)
            else:
                if tr > now_ns:
                    return
                self._rate_ticks(now_ns)

    def _alpha_ticks(self, bound_ns):
        period = self.alpha_period_ns
        ta = self._next_alpha
        if self.per_period and self._cnp_alpha:
            self.alpha = (1.0 - self.g) * self.alpha + self.g
            self._cnp_alpha = False
            self._next_alpha = ta + period
            return
        n = (bound_ns - ta) // period + 1               # pure decay ticks in [ta, bound]
        self.alpha *= (1.0 - self.g) ** n
        self._next_alpha = ta + n * period

    def _dec_tick(self, now_ns):
        td = self._next_dec
        if not self._cnp_dec:                           # no-op checks: skip past now
            self._next_dec = td + ((now_ns - td) // self.dec_interval_ns + 1) * self.dec_interval_ns
            return
        self._next_dec = td + self.dec_interval_ns
        self._cnp_dec = False
        self._cut(td, clamp=self.clamp_target or self.t_stage != 0)

    def _rate_ticks(self, now_ns):
        tr = self._next_rate
        period = self.rate_period_ns
        if self.rate_bps >= self.line_rate_bps and self.target_bps >= self.line_rate_bps:
            n = (now_ns - tr) // period + 1             # no-ops at line rate: count them only
            self.t_stage += n
            self._next_rate = tr + n * period
            return
        self._next_rate = tr + period
        self.t_stage += 1
        self._increase()

    # -- rate changes ------------------------------------------------------------------
    def _cut(self, at_ns, *, clamp=True):
        if clamp:
            self.target_bps = self.rate_bps
        self.rate_bps = max(self.min_rate, self.rate_bps * (1.0 - self.alpha / 2.0))
        self.t_stage = self.b_stage = 0
        self._bytes = 0
        self._next_rate = at_ns + self.rate_period_ns
        self.rate_cuts += 1

    def _increase(self):
        f = self.f_steps
        t = self.t_stage
        if self.byte_counter > 0:
            b = self.b_stage
            hi, lo = max(t, b), min(t, b)
            if hi <= f:
                pass                                    # fast recovery
            elif lo <= f:
                self.target_bps += self.rai             # additive increase
            else:
                self.target_bps += self.rhai * ((lo - f) if self.hai_scaled else 1)
        else:
            if t <= f:
                pass
            elif t == f + 1:
                self.target_bps += self.rai
            else:
                self.target_bps += self.rhai * ((t - f - 1) if self.hai_scaled else 1)
        line = self.line_rate_bps
        if self.target_bps > line:
            self.target_bps = line
        self.rate_bps = min(line, (self.rate_bps + self.target_bps) / 2.0)

    # -- hooks -------------------------------------------------------------------------
    def on_send(self, now_ns, size_bytes):
        self.advance(now_ns)
        if not self.active or self.byte_counter <= 0:
            return
        self._bytes += size_bytes
        while self._bytes >= self.byte_counter:
            self._bytes -= self.byte_counter
            self.b_stage += 1
            self._increase()

    def on_ack(self, now_ns, acked_bytes, rtt_ns, ece, in_flight_bytes):
        self.advance(now_ns)

    def on_cnp(self, now_ns):
        self.advance(now_ns)
        self.cnps += 1
        first = not self.active
        if first:                                       # the first CNP starts the timers
            self.active = True
            self.alpha = self.initial_alpha
            self.target_bps = self.rate_bps
        if self.per_period and first:
            self._next_alpha = now_ns + self.alpha_period_ns
        elif self.per_period:
            self._cnp_alpha = True                      # counted at the next α tick
        if self.dec_interval_ns > 0:                    # Mellanox: cut at the next check
            self._cnp_dec = True
            if first:
                self._next_dec = now_ns + self.dec_interval_ns
        else:                                           # paper: cut at once
            self._cut(now_ns, clamp=self.clamp_target or self.t_stage != 0)
        if not self.per_period:                         # paper: α up now, α timer restarts
            self.alpha = (1.0 - self.g) * self.alpha + self.g
            self._next_alpha = now_ns + self.alpha_period_ns

    def sample(self):
        cw = None if math.isinf(self.cwnd_bytes) else self.cwnd_bytes
        return cw, self.rate_bps, self.alpha
