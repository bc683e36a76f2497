"""The packet-level checks of HPCC, Swift and TIMELY (issue #19), as measurements.

Shared by ``tests/transport/test_cc_new_validation.py`` (which asserts the
checks) and ``tools/docfigures/cc_checks.py`` (which puts the numbers in
docs/congestion-control.md). All scenarios are :func:`netsim.bench.cc.incast_graph`
at 100 Gb/s (TIMELY also at its paper's 10 Gb/s: :data:`TIMELY_PAPER_RATE_BPS`), 1 µs links,
watched at the switch port to the receiver.
"""
from __future__ import annotations

import numpy as np

from .cc import incast_graph, simulate

RATE_BPS = 100e9
#: the line rate of TIMELY's evaluation (Mittal et al., SIGCOMM 2015, §6: 10 Gb/s NICs; δ = 10 Mb/s is
#: stated for it)
TIMELY_PAPER_RATE_BPS = 10e9
#: how long the 10 Gb/s TIMELY runs last: flows that cut to a low rate recover by δ = 10 Mb/s per
#: 16 KB completion, tens of ms (netsim choice: the second half, 100–200 ms, is measured)
TIMELY_PAPER_UNTIL_NS = 200_000_000
#: Zhu, Ghobadi, Misra, Padhye (ECN or Delay, CoNEXT 2016) §4, Fig. 6(a): their TIMELY scenario with the
#: paper's parameters (the ``paper`` preset's values) at 10 Gb/s, two senders to one receiver through one
#: switch, both flows starting at 5 Gb/s, per-packet pacing
TIMELY_ZHU_PARAMS = {"preset": "paper", "pacing": "packet", "init_rate_bps": 5e9}
#: the authors' reference code (timely-code-snippet.cc) with its recommendation for per-packet pacing
#: (T_low 0, T_high 1 ms, alpha 0.02, an update per ACK, minRTT = the path's base RTT): the ``code`` preset
TIMELY_CODE_PARAMS = {"preset": "code"}
#: Patched TIMELY (Zhu et al., CoNEXT 2016 §4.3): the ``patched`` preset, every value sourced there
TIMELY_PATCHED_PARAMS = {"preset": "patched"}
#: how long the 100 Gb/s Patched TIMELY runs last: both flows start at line rate, the overload above T_high
#: cuts them towards the floor and δ = 100 Mb/s per minRTT brings them back in ~10 ms; the RTT then
#: settles in a damped swing (netsim choice: the second half, 30–60 ms, is measured)
TIMELY_PATCHED_100G_UNTIL_NS = 60_000_000
#: not a sourced setting: the ``paper`` run paced per packet with the gradient normalised by 100 us, whose
#: in-band loop gain is below the stability limit (the check of the explanation of the band check)
TIMELY_STABLE_PARAMS = {"preset": "paper", "pacing": "packet", "min_rtt_ns": 100_000}


def _long_flows(n: int) -> list:
    return [(f"s{i}", "r0", 10**12, 0) for i in range(n)]


def hpcc_two_to_one(until_ns: int = 2_000_000, preset: str = "paper") -> dict:
    """2 long HPCC flows: wire utilisation of the bottleneck and mean queue over the second half."""
    res = simulate(incast_graph(2, rate_bps=RATE_BPS), _long_flows(2), cc="hpcc", until_ns=until_ns,
                   cc_params={"hpcc": {"preset": preset}}, probe_ns=1_000, watch=("sw0", "r0"))
    t = np.asarray(res.t_ns)
    half = len(t) // 2
    d = sum(np.asarray(v, dtype=float) for v in res.delivered.values())
    f = next(iter(res.flows.values()))
    payload_bps = (d[-1] - d[half]) * 8 / ((t[-1] - t[half]) * 1e-9)
    return {"util": payload_bps / RATE_BPS * (f.mss + f.hdr) / f.mss,
            "queue_bytes": float(np.mean(res.queue[half:])), "eta": f.cc.eta}


def incast_queue(cc: str, cc_params: dict | None = None, n: int = 16, size: int = 2_000_000,
                 pfc_threshold: str = "dynamic") -> dict:
    """``n``-to-1 of ``size`` bytes, 2 MB buffer (as ``bench incast16_*``), all at line rate from t = 0.

    Mean queue from two base RTTs after the start until the first flow ends; PFC pauses; drops.
    ``pfc_threshold``: ``dynamic`` (α × free shared buffer at every switch ingress, the issue's
    setting and HPCC's ns-3 switch) or ``static`` (the network defaults).
    """
    params = {"buffer_bytes": 2_000_000, "pfc_threshold": pfc_threshold}
    if cc == "dcqcn":
        from ..transport.cc import ecn_overrides
        params.update(ecn_overrides("dcqcn", cc_params or {}, RATE_BPS))
    res = simulate(incast_graph(n, rate_bps=RATE_BPS), [(f"s{i}", "r0", size, 0) for i in range(n)],
                   cc=cc, params=params, cc_params={cc: cc_params or {}}, probe_ns=500, watch=("sw0", "r0"))
    base = next(iter(res.flows.values())).cc.base_rtt_ns
    t = np.asarray(res.t_ns)
    q = np.asarray(res.queue, dtype=float)
    sel = (t >= 2 * base) & (t <= min(r.fct_ns for r in res.records))
    return {"queue_bytes": float(q[sel].mean()), "pauses": res.stats["pfc_pauses"], "drops": res.stats["drops"]}


def swift_queue_delay(n: int, until_ns: int = 2_000_000) -> dict:
    """``n`` long Swift flows, flow scaling off, lossy: mean queueing delay (2nd half) and its target."""
    res = simulate(incast_graph(n, rate_bps=RATE_BPS), _long_flows(n), cc="swift", params={"pfc": False},
                   cc_params={"swift": {"flow_scaling": False}}, until_ns=until_ns, probe_ns=1_000,
                   watch=("sw0", "r0"))
    f = next(iter(res.flows.values()))
    q = np.asarray(res.queue, dtype=float)[len(res.queue) // 2:]
    return {"qdelay_ns": float(q.mean() * 8 / RATE_BPS * 1e9),
            "target_ns": float(f.cc.target_ns() - f.cc.base_rtt_ns)}


def swift_incast(n: int = 64, size: int = 1_000_000) -> dict:
    """``n``-to-1 Swift incast on the lossy class: drops, timeouts, completed flows."""
    res = simulate(incast_graph(n, rate_bps=RATE_BPS), [(f"s{i}", "r0", size, 0) for i in range(n)],
                   cc="swift", params={"pfc": False}, watch=("sw0", "r0"))
    return {"drops": res.stats["drops"], "timeouts": res.stats["timeouts"], "completed": len(res.records)}


def swift_paced_incast(n: int = 64, rate_bps: float = 10e9, until_ns: int = 6_000_000) -> dict:
    """``n`` long Swift flows into one port at ``rate_bps`` (flow scaling off, lossy): the paced regime.

    At 10 Gb/s the path's BDP plus the target's queue is about 23 packets, so 64 fair windows are
    below one packet and only pacing (one packet every RTT/cwnd) holds them; at 100 Gb/s (the
    :func:`swift_incast` check) it is 225 packets and the windows stay above one. Returns the
    lowest window of any flow (packets, probed every µs), how many flows went below one packet,
    drops and timeouts, and the mean queueing delay over the second half against the target.
    """
    res = simulate(incast_graph(n, rate_bps=rate_bps), _long_flows(n), cc="swift", params={"pfc": False},
                   cc_params={"swift": {"flow_scaling": False}}, until_ns=until_ns, probe_ns=1_000,
                   watch=("sw0", "r0"))
    f = next(iter(res.flows.values()))
    low = {fid: min(v) / f.cc.mss_bytes for fid, v in res.cwnd.items()}
    q = np.asarray(res.queue, dtype=float)[len(res.queue) // 2:]
    return {"min_cwnd_pkts": float(min(low.values())), "flows_below_one": sum(v < 1.0 for v in low.values()),
            "drops": res.stats["drops"], "timeouts": res.stats["timeouts"],
            "qdelay_ns": float(q.mean() * 8 / rate_bps * 1e9), "target_ns": float(f.cc.target_ns() - f.cc.base_rtt_ns)}


def timely_rtt(cc_params: dict, until_ns: int = 10_000_000, rate_bps: float = RATE_BPS) -> dict:
    """2 long TIMELY flows at ``rate_bps``: p5/p95 of the RTT (base + queueing) over the second half, and the band.

    The RTT is the base RTT plus the watched queue's drain time, sampled every 2 µs (what a probe
    packet would see), not the flows' own samples.
    """
    res = simulate(incast_graph(2, rate_bps=rate_bps), _long_flows(2), cc="timely", params={"pfc": False},
                   cc_params={"timely": cc_params}, until_ns=until_ns, probe_ns=2_000, watch=("sw0", "r0"))
    f = next(iter(res.flows.values()))
    q = np.asarray(res.queue, dtype=float)[len(res.queue) // 2:]
    rtt = f.cc.base_rtt_ns + q * 8 / rate_bps * 1e9
    p5, p95 = np.percentile(rtt, [5, 95])
    return {"p5_ns": float(p5), "p95_ns": float(p95), "t_low_ns": f.cc.t_low, "t_high_ns": f.cc.t_high,
            "min_rtt_ns": f.cc.min_rtt, "base_rtt_ns": float(f.cc.base_rtt_ns)}


def timely_loop_gain(cc_params: dict, rate_bps: float = RATE_BPS, n: int = 2) -> dict:
    """The linearised in-band TIMELY loop of ``n`` equal flows on :func:`incast_graph` (no simulation).

    Per round of completions the flows change their excess rate by ``−K·x`` with
    ``K = β·α·f·T_e/minRTT`` (``T_e``: time between one flow's completions, ``segment_bytes`` at
    ``rate_bps / n``, or one RTT at T_low with per-RTT events; ``f = min(1, T_e/minRTT)`` with
    ``scale_by_interval``, else 1), acting on an RTT ``d`` rounds old
    (``d = max(1, round(T_low / T_e))``); ``x ← x − K·x(d rounds ago)`` is stable for
    ``K < 2·sin(π / (2(2d + 1)))`` (``limit``).
    """
    import math

    from ..network.params import resolve_params
    from ..network.path import PathModel
    from ..transport.cc import Timely
    path = PathModel(incast_graph(n, rate_bps=rate_bps), resolve_params()).path(("s0", "sw0", "r0"))
    cc = Timely(Timely.PARAMS.resolve(cc_params), mss_bytes=path.mss_bytes, line_rate_bps=rate_bps,
                base_rtt_ns=int(round(path.base_rtt_ns)))
    t_e = cc.segment * 8e9 / (rate_bps / n) if cc.segment > 0 else cc.t_low
    d = max(1, round(cc.t_low / t_e))
    f = min(1.0, t_e / cc.min_rtt) if cc.scale_interval else 1.0
    return {"k": cc.beta * cc.a * f * t_e / cc.min_rtt, "limit": 2 * math.sin(math.pi / (2 * (2 * d + 1))),
            "t_e_ns": t_e, "delay_rounds": d, "min_rtt_ns": cc.min_rtt, "base_rtt_ns": float(path.base_rtt_ns)}


def timely_patched_fixed_point_ns(cc_params: dict, rate_bps: float, n: int = 2) -> float:
    """Patched TIMELY's fixed point for ``n`` equal flows at ``rate_bps / n`` (flat RTT: g = 0, w = 1/2):
    ``(1 − w)·δ = β'·w·R·(RTT − RTT_ref)/RTT_ref`` gives ``RTT* = RTT_ref·(1 + δ/(β'·R))``."""
    from ..transport.cc import Timely
    cc = Timely(Timely.PARAMS.resolve(cc_params), mss_bytes=1000, line_rate_bps=rate_bps, base_rtt_ns=1000)
    return cc.rtt_ref * (1.0 + cc.delta / (cc.patched_beta * rate_bps / n))
