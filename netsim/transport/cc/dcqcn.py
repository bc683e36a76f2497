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
at ``None``; :data:`PRESETS` lists them with their sources. The default is
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

from ...params import Param
from .base import CongestionControl, PresetTable, register

INF = math.inf

#: Preset values and their sources. ``None`` parameters take these.
PRESETS: dict[str, dict] = {
    "paper": {
        "_source": "Zhu et al., DCQCN, SIGCOMM 2015 §5 / Zhu, Ghobadi, Misra, Padhye, CoNEXT 2016 "
                   "(min rate: HPCC ns-3 RdmaHw MinRate default 100 Mb/s; the paper gives none)",
        "g": 1 / 256, "alpha_timer_ns": 55_000, "alpha_update": "on_cnp", "initial_alpha": 1.0,
        "rate_decrease_interval_ns": 0, "clamp_target_rate": True, "rate_timer_ns": 55_000,
        "byte_counter_bytes": 10_000_000, "fast_recovery_steps": 5, "rai_bps": 40e6,
        "rhai_bps": 200e6, "hai_scale_with_stage": True, "min_rate_bps": 100e6,
        "cnp_interval_ns": 50_000, "kmin_bytes": 5_000, "kmax_bytes": 200_000, "pmax": 0.01,
        "rate_scale_ref_bps": 0.0,
    },
    "hpcc": {
        "_source": "HPCC ns-3 simulation/run.py, cc=dcqcn (alibaba-edu/High-Precision-Congestion-Control): "
                   "ALPHA_RESUME_INTERVAL 1us, RATE_DECREASE_INTERVAL 4us, RP_TIMER 300us, EWMA_GAIN 1/256, "
                   "FAST_RECOVERY_TIMES 1, RATE_AI 5Mbps*bw/25G, RATE_HAI 50Mbps*bw/25G, MIN_RATE 1Gbps, "
                   "CLAMP_TARGET_RATE 0, KMIN 100KB*bw/25G, KMAX 400KB*bw/25G, PMAX 0.2; CNP flag on the "
                   "per-packet ACK (L2_ACK_INTERVAL 1)",
        "g": 1 / 256, "alpha_timer_ns": 1_000, "alpha_update": "per_period", "initial_alpha": 1.0,
        "rate_decrease_interval_ns": 4_000, "clamp_target_rate": False, "rate_timer_ns": 300_000,
        "byte_counter_bytes": 0, "fast_recovery_steps": 1, "rai_bps": 5e6, "rhai_bps": 50e6,
        "hai_scale_with_stage": False, "min_rate_bps": 1e9, "cnp_interval_ns": 0,
        "kmin_bytes": 100_000, "kmax_bytes": 400_000, "pmax": 0.2, "rate_scale_ref_bps": 25e9,
    },
    "nvidia": {
        "_source": "NVIDIA DCQCN CC Parameters (networking-docs.nvidia.com, ConnectX-4 and later): "
                   "dce_tcp_g 1019/1024 (g = 5/1024), dce_tcp_rtt 1us, initial_alpha_value 1023/1024, "
                   "rpg_min_rate 1Mbps, rate_reduce_monitor_period 4us, min_time_between_cnps 4us; "
                   "rate increase (rpg_time_reset 300us, rpg_threshold 1, rpg_ai_rate 5Mbps, "
                   "rpg_hai_rate 50Mbps, no byte counter) as HPCC's model of the same firmware; "
                   "switch ECN thresholds are not NIC firmware: HPCC's rate-scaled values",
        "g": 5 / 1024, "alpha_timer_ns": 1_000, "alpha_update": "per_period", "initial_alpha": 1023 / 1024,
        "rate_decrease_interval_ns": 4_000, "clamp_target_rate": False, "rate_timer_ns": 300_000,
        "byte_counter_bytes": 0, "fast_recovery_steps": 1, "rai_bps": 5e6, "rhai_bps": 50e6,
        "hai_scale_with_stage": False, "min_rate_bps": 1e6, "cnp_interval_ns": 4_000,
        "kmin_bytes": 100_000, "kmax_bytes": 400_000, "pmax": 0.2, "rate_scale_ref_bps": 25e9,
    },
}

#: The preset used unless ``--cc-param preset=...`` says otherwise.
DEFAULT_PRESET = "hpcc"
#: Why :data:`DEFAULT_PRESET` is the default (shown by ``netsim defaults --cc dcqcn``).
DEFAULT_PRESET_REASON = (
    "what a RoCE deployment at 25-100 Gb/s runs: the Mellanox ConnectX reaction point (alpha every "
    "1 us, rate cut at most every 4 us, 300 us increase timer, F = 1, 1 Gb/s floor) with switch ECN "
    "thresholds scaled to the line rate, as HPCC's run.py (cc=dcqcn) sets it for its 100 Gb/s runs; "
    "nvidia has the firmware's NIC values but no switch thresholds of its own; paper is the 2015 law "
    "tuned at 40 Gb/s (Kmin 5 KB, Pmax 1 %, 55 us timers), far too slow to recover at 100 Gb/s: "
    "ask for it (preset=paper) to reproduce the paper")

_P = "None = from the preset"
#: Parameters a preset may scale with the link rate (left ``None`` until the rate is known).
SCALED = ("rai_bps", "rhai_bps", "kmin_bytes", "kmax_bytes")


class PresetParamTable(PresetTable):
    """A :class:`~.base.PresetTable` whose ``None`` defaults are filled from the chosen preset.

    ``None`` values in the layers mean "not set" (so a resolved dict can be
    resolved again). Keys the preset scales with the link rate stay ``None``
    until :meth:`DCQCN.effective_params` knows the rate.
    """

    def resolve(self, overrides=None, *, base=None, source=None) -> dict:
        out = super().resolve(overrides, base=base, source=source)
        table = PRESETS[out["preset"]]
        ref = out["rate_scale_ref_bps"]
        if ref is None:
            ref = out["rate_scale_ref_bps"] = table["rate_scale_ref_bps"]
        for k, v in out.items():
            if v is None and k in table and not (ref and k in SCALED):
                out[k] = table[k]
        return out


def _default_text(name: str) -> str:
    """The default preset's value of ``name``, as ``netsim defaults`` shows it."""
    table = PRESETS[DEFAULT_PRESET]
    v = table[name]
    text = f"{v:g}" if isinstance(v, float) else str(v)
    if table["rate_scale_ref_bps"] and name in SCALED:
        text += f" x link rate / {table['rate_scale_ref_bps'] / 1e9:g} Gb/s"
    return text


def _preset_param(name, kind, doc, **kw):
    return Param(name, None, kind, f"{doc} ({_P})",
                 f"preset {DEFAULT_PRESET}: {_default_text(name)} (netsim defaults --cc dcqcn lists every preset)",
                 **kw)


@register
class DCQCN(CongestionControl):
    """DCQCN rate-based RoCEv2 congestion control (RP state machine; CP/NP settings)."""

    name = "dcqcn"
    transport = "roce"
    ecn_capable = True
    PARAMS = PresetParamTable("dcqcn", [
        Param("preset", DEFAULT_PRESET, "choice", "which published parameter set fills the None values",
              f"default {DEFAULT_PRESET} (why: netsim defaults --cc dcqcn); hpcc: HPCC ns-3 run.py; "
              "nvidia: ConnectX firmware defaults; paper: SIGCOMM'15", choices=tuple(PRESETS)),
        _preset_param("g", "float", "α EWMA gain", minimum=0.0, maximum=1.0),
        _preset_param("alpha_timer_ns", "time", "α update period τ'", minimum=1),
        _preset_param("alpha_update", "choice", "on_cnp (paper) or per_period (Mellanox)",
                      choices=("on_cnp", "per_period")),
        _preset_param("initial_alpha", "float", "α set at the first CNP", minimum=0.0, maximum=1.0),
        _preset_param("rate_decrease_interval_ns", "time", "0 = cut on every CNP; else check period"),
        _preset_param("clamp_target_rate", "bool", "R_T <- R_C on every cut (off: only after an increase)"),
        _preset_param("rate_timer_ns", "time", "rate-increase timer T", minimum=1),
        _preset_param("byte_counter_bytes", "size", "rate-increase byte counter B (0 = off)"),
        _preset_param("fast_recovery_steps", "int", "F, fast-recovery events per counter", minimum=0),
        _preset_param("rai_bps", "rate", "additive increase step R_AI"),
        _preset_param("rhai_bps", "rate", "hyper increase step R_HAI"),
        _preset_param("hai_scale_with_stage", "bool", "hyper step times (stage − F)"),
        _preset_param("min_rate_bps", "rate", "rate floor"),
        _preset_param("cnp_interval_ns", "time", "NP: at most one CNP per flow per interval (0 = per mark)"),
        _preset_param("kmin_bytes", "size", "CP marking starts above this queue"),
        _preset_param("kmax_bytes", "size", "CP marks every packet above this queue"),
        _preset_param("pmax", "float", "CP marking probability at kmax", minimum=0.0, maximum=1.0),
        _preset_param("rate_scale_ref_bps", "rate",
                      "if > 0, rai/rhai/kmin/kmax scale with link rate / this", minimum=0),
        Param("window_bytes", 0, "size", "optional in-flight cap (0 = off, rate-based only)",
              "HPCC run.py dcqcn_vwin variants use a window; plain dcqcn has none (HAS_WIN 0)"),
    ])

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
