"""TIMELY's published parameter sets (``--cc-param timely.preset=...``), each value with its source.

Four presets: ``paper`` (Mittal et al. §6 with Zhu et al.'s α and minRTT,
16 KB segments paced as segments), ``hpcc`` (HPCC's ns-3 TIMELY), ``code``
(the authors' reference code with its per-packet-pacing values) and
``patched`` (Zhu et al.'s Patched TIMELY: a weighted gradient and a
reference RTT, which give the law a unique fixed point inside the band).
The law itself is :mod:`.timely`; this module holds its parameter table and the presets.

Left out: the authors' 64 KB-message setting of the reference code as a
preset of its own (``code`` with ``t_low_ns=50us``, ``pacing=segment``,
``segment_bytes=64KB`` gives it).
"""
from __future__ import annotations

from functools import partial

from ...params import Param
from .base import PresetTable, preset_param

_SRC = "Mittal et al., TIMELY, SIGCOMM 2015"
_HPCC = "HPCC ns-3 (alibaba-edu/High-Precision-Congestion-Control)"
#: the authors' published reference code of Algorithm 1 (R. Mittal, timely-code-snippet.cc)
_CODE = "the authors' reference code (Mittal, timely-code-snippet.cc)"
#: the analysis of TIMELY by Zhu, Ghobadi (a TIMELY author), Misra and Padhye: Algorithm 1, the paper's
#: parameters (its §4 footnote: C 10 Gb/s, β 0.8, α 0.875, T_low 50 us, T_high 500 us, minRTT 20 us) and
#: the implementation's per-chunk pacing
_ZHU = "Zhu et al., ECN or Delay, CoNEXT 2016"

#: preset values and their sources; ``None`` parameters take these
PRESETS: dict[str, dict] = {
    "paper": {
        "_source": f"{_SRC}: §6 segment size 16 KB, T_low 50 us, T_high 500 us, δ 10 Mb/s, β 0.8; "
                   "Algorithm 1 (only δ below T_low, HAI only for non-positive gradients in the band); "
                   f"minRTT 20 us as {_ZHU} §4 gives the paper's parameters; per-segment pacing and the "
                   f"min(1, Δt/minRTT) step scaling of the implementation ({_ZHU} §4, after the paper's §5; "
                   f"{_CODE}, which pairs T_low 50 us with 64 KB-message pacing)",
        "t_low_ns": 50_000, "t_high_ns": 500_000, "delta_bps": 10e6, "delta_per_line_rate": 0.0,
        "hai_any_increase": False, "min_rtt_ns": 20_000, "segment_bytes": 16_000,
        "scale_by_interval": True, "pacing": "segment", "max_cut": 1.0, "alpha": 0.875,
        "hai_raw_diff": False, "scale_gradient_cut": True, "first_event_records_only": False, "patched": False, "min_rtt_between_events": False,
        "patched_beta": 0.0, "rtt_ref_ns": 0,
    },
    "hpcc": {
        "_source": f"{_HPCC}: simulation/run.py cc=timely (RATE_AI 10*bw/10 Mb/s = line rate / 1000, "
                   "RATE_HAI 5 x RATE_AI, T_low/T_high/minRTT left at RdmaHw's TimelyTLow 50000 ns, "
                   "TimelyTHigh 500000 ns, TimelyMinRtt 20000 ns); RdmaHw::UpdateRateTimely: one update "
                   "per RTT, every increase counts towards HAI (also below T_low), the first RTT's update "
                   "only records the RTT (m_lastUpdateSeq == 0)",
        "t_low_ns": 50_000, "t_high_ns": 500_000, "delta_bps": 0.0, "delta_per_line_rate": 1e-3,
        "hai_any_increase": True, "min_rtt_ns": 20_000, "segment_bytes": 0,
        "scale_by_interval": False, "pacing": "packet", "max_cut": 1.0, "alpha": 0.875,
        "hai_raw_diff": False, "scale_gradient_cut": False, "first_event_records_only": True, "patched": False, "min_rtt_between_events": False,
        "patched_beta": 0.0, "rtt_ref_ns": 0,
    },
    "code": {
        "_source": f"{_CODE}, as published with its recommended values for per-packet pacing: ewma_alpha 0.02, "
                   "t_low 0 (\"0 if using per-packet pacing, 50us if using per 64KB message pacing\"), t_high "
                   "1 ms, additiveIncrement 10 Mb/s for 10 Gb/s line rate (line rate / 1000), decreaseFactor 0.8, "
                   "HAI_Thresh 5 consecutive negative raw RTT differences, the cut per update capped at half the "
                   "rate, delta_factor min(1, dt/minRTT) on the increases and the T_high decrease but not on the "
                   "gradient decrease, minRTT the fixed minimum network RTT (here the path's base RTT), invoked "
                   "on every ACK",
        "t_low_ns": 0, "t_high_ns": 1_000_000, "delta_bps": 0.0, "delta_per_line_rate": 1e-3,
        "hai_any_increase": False, "min_rtt_ns": 0, "segment_bytes": 1, "scale_by_interval": True,
        "pacing": "packet", "max_cut": 0.5, "alpha": 0.02, "hai_raw_diff": True, "scale_gradient_cut": False,
        "first_event_records_only": False, "patched": False, "min_rtt_between_events": False,
        "patched_beta": 0.0, "rtt_ref_ns": 0,
    },
    "patched": {
        "_source": f"{_ZHU} §4.3, Patched TIMELY: inside [T_low, T_high] the gradient branch is replaced by "
                   "R <- (1 - w(g))·δ + R·(1 - β'·w(g)·(RTT - RTT_ref)/RTT_ref), w(g) = 0 for g <= -1/4, "
                   "2g + 1/2 between, 1 for g >= 1/4, β' 0.008; everything else Algorithm 1 with the paper's "
                   "parameters as the paper preset (T_low 50 us, T_high 500 us, α 0.875, minRTT 20 us, "
                   "16 KB completions, β 0.8 above T_high); δ = line rate / 1000 (the paper's 10 Mb/s at "
                   "10 Gb/s, scaled as HPCC's ns-3 and the reference code scale it); RTT_ref = T_low (the "
                   "band's lower edge, as the htsim implementation of Patched TIMELY takes it); per-packet "
                   "pacing (the fluid model's smooth sending); an update at most every minRTT (the model's update "
                   "interval τ* = max(Seg/R, minRTT), §4.1), so the gradient is an RTT difference over at least minRTT",
        "t_low_ns": 50_000, "t_high_ns": 500_000, "delta_bps": 0.0, "delta_per_line_rate": 1e-3,
        "hai_any_increase": False, "min_rtt_ns": 20_000, "segment_bytes": 16_000,
        "scale_by_interval": True, "pacing": "packet", "max_cut": 1.0, "alpha": 0.875,
        "hai_raw_diff": False, "scale_gradient_cut": True, "first_event_records_only": False, "patched": True, "min_rtt_between_events": True,
        "patched_beta": 0.008, "rtt_ref_ns": 0,
    },
}
DEFAULT_PRESET = "paper"
_FROM_PRESET = ("t_low_ns", "t_high_ns", "delta_bps", "delta_per_line_rate", "hai_any_increase", "min_rtt_ns",
                "segment_bytes", "scale_by_interval", "pacing", "max_cut", "alpha", "hai_raw_diff",
                "scale_gradient_cut", "first_event_records_only",
                "patched", "patched_beta", "rtt_ref_ns", "min_rtt_between_events")

_p = partial(preset_param, PRESETS)

#: the ``--cc-param timely.*`` table (``None`` values: from the preset)
PARAMS = PresetTable("timely", [
    Param("preset", DEFAULT_PRESET, "choice", "which published parameter set fills the None values",
          f"paper: {_SRC}; hpcc: HPCC ns-3 run.py cc=timely + RdmaHw defaults; code: {_CODE}; patched: "
          f"{_ZHU} §4.3", choices=tuple(PRESETS)),
    _p("t_low_ns", "time", "below this RTT: additive increase", minimum=0),
    _p("t_high_ns", "time", "above this RTT: multiplicative decrease", minimum=1),
    _p("alpha", "float", "EWMA weight of the newest RTT difference", minimum=0.0, maximum=1.0),
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
    _p("hai_raw_diff", "bool", "HAI counts consecutive completions whose raw RTT difference is negative "
       "(the reference code) rather than non-positive smoothed gradients"),
    _p("first_event_records_only", "bool", "a flow's first completion event only records its RTT"),
    _p("scale_gradient_cut", "bool", "the min(1, dt/min_rtt) factor also scales the gradient decrease"),
    _p("min_rtt_ns", "time", "gradient normaliser (0 = the path's base RTT)"),
    _p("min_rtt_between_events", "bool", "a completion event needs min_rtt_ns since the flow's last one "
       "(the update interval max(segment/R, minRTT) of Zhu et al.'s model; bytes acked meanwhile count "
       "towards it)"),
    _p("patched", "bool", "Patched TIMELY inside the band: R <- (1 - w(g))·δ + R·(1 - patched_beta·w(g)·"
       "(RTT - rtt_ref)/rtt_ref) instead of the gradient step and HAI"),
    _p("patched_beta", "float", "β' of Patched TIMELY's reference-RTT term", minimum=0.0, maximum=1.0),
    _p("rtt_ref_ns", "time", "Patched TIMELY's reference RTT (0 = t_low_ns)", minimum=0),
    _p("segment_bytes", "size", "acknowledged bytes per completion event (0 = one event per RTT: the "
       "first ACK beyond the data sent at the last event)"),
    _p("scale_by_interval", "bool", "scale every step by min(1, time since the last update / min_rtt)"),
    _p("pacing", "choice", "packet: every packet paced at the rate; segment: each segment_bytes back to "
       "back at line rate, then a gap that brings the segment to the rate", choices=("packet", "segment")),
    _p("max_cut", "float", "largest fraction of the rate one completion may take off (1 = down to "
       "min_rate_bps)", minimum=0.0, maximum=1.0),
    Param("init_rate_bps", 0.0, "rate", "rate a flow starts at (0 = line rate; capped at the line rate)",
          f"{_ZHU} §4: TIMELY starts a host's new flow at C/(N+1) with N flows already active (C for "
          "the first); their validation starts every flow at C/N", minimum=0),
    Param("min_rate_bps", 100e6, "rate", "rate floor", "HPCC ns-3 RdmaHw MinRate default 100 Mb/s"),
    Param("window_bytes", 0, "size", "optional in-flight cap (0 = rate-based only)",
          "HPCC run.py timely_vwin variant uses a window; timely has none (HAS_WIN 0)"),
])
