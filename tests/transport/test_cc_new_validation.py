"""HPCC, Swift and TIMELY on the packet backend: the checks of issue #19 (all ``slow``).

Oracles: HPCC holds the bottleneck at η with near-zero queue (Li et al. §3:
the sum of windows converges to η·B·T); against DCQCN on an incast HPCC's
queue is far lower and PFC pauses fewer; Swift's RTT settles at its target
delay; TIMELY's RTT stays within its [T_low, T_high] band. Each figure is
printed (``-s``) so the numbers in docs/congestion-control.md can be rechecked.
"""
import numpy as np
import pytest

from netsim.bench.cc import incast_graph, simulate
from netsim.transport.cc import ecn_overrides

RATE = 100e9
MTU = 1500

pytestmark = pytest.mark.slow


def _wire_util(res, port, t0_ns, t1_ns):
    """Bytes on the wire (headers included) over [t0, t1] from the probe, as a fraction of RATE."""
    t = np.asarray(res.t_ns)
    i0, i1 = np.searchsorted(t, t0_ns), np.searchsorted(t, t1_ns) - 1
    d = sum(np.asarray(v, dtype=float) for v in res.delivered.values())
    payload = (d[i1] - d[i0]) * 8 / ((t[i1] - t[i0]) * 1e-9)
    f = next(iter(res.flows.values()))
    return payload / RATE * (f.mss + f.hdr) / f.mss


def test_hpcc_two_to_one_utilisation_and_queue():
    res = simulate(incast_graph(2, rate_bps=RATE), [(f"s{i}", "r0", 10**12, 0) for i in range(2)],
                   cc="hpcc", until_ns=2_000_000, probe_ns=1_000, watch=("sw0", "r0"))
    util = _wire_util(res, None, 1_000_000, 2_000_000)
    q = np.asarray(res.queue)[len(res.queue) // 2:]
    print(f"hpcc 2-to-1: wire utilisation {util:.4f} (eta 0.95), mean queue {q.mean():.0f} B")
    assert abs(util - 0.95) <= 0.02
    assert q.mean() < 2 * MTU                      # below one MTU per flow


def _incast(cc, ccp=None):
    n = 16
    params = {"buffer_bytes": 2_000_000}           # as netsim bench incast16_*: PFC comes into play
    if cc == "dcqcn":
        params.update(ecn_overrides("dcqcn", ccp or {}, RATE))
    res = simulate(incast_graph(n, rate_bps=RATE), [(f"s{i}", "r0", 2_000_000, 0) for i in range(n)],
                   cc=cc, params=params, cc_params={cc: ccp or {}}, probe_ns=500, watch=("sw0", "r0"))
    base_rtt = next(iter(res.flows.values())).cc.base_rtt_ns
    t = np.asarray(res.t_ns)
    q = np.asarray(res.queue, dtype=float)
    end = min(r.fct_ns for r in res.records)      # while all 16 are still sending
    sel = (t >= 2 * base_rtt) & (t <= end)
    return q[sel].mean(), res.stats["pfc_pauses"], res.stats["drops"]


def test_hpcc_incast_queue_and_pauses_vs_dcqcn():
    """16-to-1, both at line rate from the start; static PFC thresholds (dynamic ones: pfc19)."""
    qh, ph, dh = _incast("hpcc")
    qd, pd, dd = _incast("dcqcn", {"preset": "hpcc"})
    print(f"16-to-1: mean queue hpcc {qh:.0f} B, dcqcn(preset hpcc) {qd:.0f} B (x{qd / qh:.1f}); "
          f"PFC pauses {ph} vs {pd}")
    assert dh == dd == 0
    assert qd >= 5 * qh
    assert ph < pd


@pytest.mark.parametrize("n", [2, 8, 32])
def test_swift_queueing_delay_at_target(n):
    ccp = {"flow_scaling": False}
    res = simulate(incast_graph(n, rate_bps=RATE), [(f"s{i}", "r0", 10**12, 0) for i in range(n)],
                   cc="swift", params={"pfc": False}, cc_params={"swift": ccp}, until_ns=2_000_000,
                   probe_ns=1_000, watch=("sw0", "r0"))
    f = next(iter(res.flows.values()))
    target_q_ns = f.cc.target_ns() - f.cc.base_rtt_ns          # the queueing part of the target RTT
    q = np.asarray(res.queue, dtype=float)[len(res.queue) // 2:]
    qdelay_ns = q.mean() * 8 / RATE * 1e9
    print(f"swift N={n}: queueing delay {qdelay_ns:.0f} ns, target {target_q_ns:.0f} ns")
    assert abs(qdelay_ns - target_q_ns) <= 0.10 * target_q_ns


def test_swift_incast_64_converges_without_loss():
    n = 64
    res = simulate(incast_graph(n, rate_bps=RATE), [(f"s{i}", "r0", 1_000_000, 0) for i in range(n)],
                   cc="swift", params={"pfc": False}, probe_ns=1_000, watch=("sw0", "r0"))
    print(f"swift 64-to-1: drops {res.stats['drops']}, timeouts {res.stats['timeouts']}, "
          f"completed {len(res.records)}")
    assert len(res.records) == n
    assert res.stats["drops"] == 0


@pytest.mark.xfail(strict=True, reason="measured (2 flows, 100 Gb/s, 10 ms, run.py delta and per-RTT "
                   "updates, min_rtt = base RTT or 20 us): the RTT cycles from the empty queue (p5 = base RTT "
                   "4.25 us) to ~47-55 us; the band check of issue #19 is not met yet")
def test_timely_rtt_within_band():
    # at 100 Gb/s the paper's 10 Gb/s increments (delta 10 Mb/s per 16 KB) recover from the first cut in
    # seconds; HPCC's run.py (cc=timely) scales delta to 10 Mb/s per 10 Gb/s and updates once per RTT
    ccp = {"delta_bps": 100e6, "segment_bytes": 0}
    res = simulate(incast_graph(2, rate_bps=RATE), [(f"s{i}", "r0", 10**12, 0) for i in range(2)],
                   cc="timely", params={"pfc": False}, cc_params={"timely": ccp}, until_ns=10_000_000,
                   probe_ns=2_000, watch=("sw0", "r0"))
    f = next(iter(res.flows.values()))
    q = np.asarray(res.queue, dtype=float)[len(res.queue) // 2:]
    rtt_ns = f.cc.base_rtt_ns + q * 8 / RATE * 1e9
    p5, p95 = np.percentile(rtt_ns, [5, 95])
    print(f"timely: RTT p5 {p5:.0f} ns, p95 {p95:.0f} ns, band [{f.cc.t_low:.0f}, {f.cc.t_high:.0f}]")
    assert f.cc.t_low <= p5 and p95 <= f.cc.t_high
