"""DCQCN's published parameter sets (``--cc-param dcqcn.preset=...``) and its parameter table.

Three presets, each value with its source: ``hpcc`` (the default: HPCC's ns-3
run.py, cc=dcqcn — the Mellanox reaction point with rate-scaled switch ECN
thresholds; :data:`DEFAULT_PRESET_REASON` says why it is the default),
``nvidia`` (ConnectX firmware defaults) and ``paper`` (SIGCOMM'15). A
parameter left at ``None`` takes the chosen preset's value
(:class:`PresetParamTable`); the ones in :data:`SCALED` stay ``None`` until
the link rate is known (:meth:`netsim.transport.cc.dcqcn.DCQCN.effective_params`).
The reaction point's state machine is :mod:`.dcqcn`; this module holds only
its parameters. Left out: the window variants of HPCC's run.py (``dcqcn_vwin``)
as presets (``window_bytes`` gives the cap).
"""
from __future__ import annotations

from ...params import Param
from .base import PresetTable

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


#: the parameter table of ``--cc-param dcqcn.KEY`` (:attr:`DCQCN.PARAMS`)
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
