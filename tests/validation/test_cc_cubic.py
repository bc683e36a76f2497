"""CUBIC on the packet backend against RFC 9438's closed forms.

* cubic region (RTT >= 10 ms, BDP >= 500 segments, drop-tail): between two
  losses cwnd follows C·(t − K)³ + W_max, with W_max and cwnd_epoch read from
  the trace and K = ∛((W_max − cwnd_epoch)/C); RMS error <= 5 % of W_max. The
  default run scales C by 100 (time compresses by ∛100, the shape is the same);
  the ``slow`` run uses C = 0.4.
* datacenter RTT (< 100 µs): the Reno-friendly region governs: over an epoch,
  (W1² − W0²) / (2·MSS·acked) = α_cubic = 3(1−β)/(1+β), while W_cubic would
  have grown by a tiny fraction of the observed growth.
* 2 and 4 flows, equal RTTs, one bottleneck: Jain's index >= 0.9 and
  utilization >= 90 % over the last half of the run.
"""
import math

import numpy as np
import pytest

from netsim.bench.cc import dumbbell_graph, jain, simulate

MTU, HDR = 1500, 62
MSS = MTU - HDR
BETA = 0.7
ALPHA_CUBIC = 3 * (1 - BETA) / (1 + BETA)


def loss_indices(w):
    """Indices i where cwnd drops by more than 20 % between samples i and i+1."""
    w = np.asarray(w, dtype=float)
    return [int(i) for i in np.where(w[1:] < 0.8 * w[:-1])[0]]


def wan_run(c, until_s, init_ssthresh_segs=900):
    bdp_segs = 600e6 * 0.010 / 8 / MSS
    assert bdp_segs >= 500
    g = dumbbell_graph(1, host_rate_bps=10e9, host_delay_ns=1000, bott_rate_bps=600e6,
                       bott_delay_ns=5_000_000)
    params = {"pfc": False, "ecn": False, "buffer_mode": "static", "buffer_bytes": 2 * 521 * MTU,
              "initial_rto_ns": 10**9}  # RFC 6298 initial RTO: the path RTT is 10 ms
    ccp = {"cubic": {"c": c, "fast_convergence": "off", "init_ssthresh_bytes": init_ssthresh_segs * MSS,
                     "min_rto_ns": 200_000_000}}  # WAN: Linux's 200 ms minimum RTO
    return simulate(g, [("s0", "r0", 10**13, 0)], cc="cubic", params=params, cc_params=ccp,
                    until_ns=int(until_s * 1e9), probe_ns=1_000_000)


def check_cubic_epoch(res, c):
    t = np.asarray(res.t_ns, dtype=float) / 1e9
    w = np.asarray(res.cwnd[0], dtype=float) / MSS
    losses = loss_indices(w)
    assert len(losses) >= 2, f"need two losses, got {losses}"
    i, j = losses[0], losses[1]
    w_max, w_epoch = w[i], w[i + 1]
    # the epoch starts when cwnd starts growing again (fast recovery over)
    k0 = i + 1
    while k0 + 1 < j and w[k0 + 1] <= w_epoch * (1 + 1e-9):
        k0 += 1
    k = ((w_max - w_epoch) / c) ** (1 / 3)
    tt = t[k0:j + 1] - t[k0]
    pred = c * (tt - k) ** 3 + w_max
    rms = math.sqrt(float(np.mean((w[k0:j + 1] - pred) ** 2)))
    assert w_epoch == pytest.approx(BETA * w_max, rel=0.01)
    assert rms <= 0.05 * w_max, (rms, w_max)
    # the next loss comes on the plateau around W_max (the path's capacity did not change)
    assert w[j] == pytest.approx(w_max, rel=0.02)
    assert tt[-1] >= 0.5 * k
    return rms / w_max, k, tt[-1]


def test_cubic_region_follows_w_cubic_fast():
    c = 40.0
    res = wan_run(c, until_s=4.0)
    assert res.stats["timeouts"] == 0
    check_cubic_epoch(res, c)


@pytest.mark.slow
def test_cubic_region_follows_w_cubic_rfc_c():
    c = 0.4
    res = wan_run(c, until_s=17.0)
    assert res.stats["timeouts"] == 0
    check_cubic_epoch(res, c)


def dc_run(n, until_ms, start_gap_us=0):
    g = dumbbell_graph(n, host_rate_bps=25e9, host_delay_ns=5_000, bott_rate_bps=10e9, bott_delay_ns=10_000)
    params = {"pfc": False, "ecn": False, "buffer_mode": "static", "buffer_bytes": (n + 1) * 100 * MTU}
    flows = [(f"s{i}", "r0", 10**12, i * start_gap_us * 1000) for i in range(n)]
    return simulate(g, flows, cc="cubic", params=params, until_ns=until_ms * 1_000_000, probe_ns=20_000)


def test_reno_friendly_region_at_datacenter_rtt():
    res = dc_run(1, 60)
    w = np.asarray(res.cwnd[0], dtype=float)
    a = np.asarray(res.acked[0], dtype=float)
    t = np.asarray(res.t_ns, dtype=float) / 1e9
    losses = loss_indices(w)
    ratios = []
    for prev, i, j in zip(losses, losses[1:], losses[2:]):
        if not (w[prev + 1] == pytest.approx(BETA * w[prev], rel=0.01)
                and w[i + 1] == pytest.approx(BETA * w[i], rel=0.01)):
            continue  # slow-start overshoot and its long NewReno recovery: not an epoch
        k0 = i + 1
        while k0 + 1 < j and w[k0 + 1] <= w[i + 1] * (1 + 1e-9):
            k0 += 1  # fast recovery: cwnd frozen
        w0, w1 = w[k0], w[j]
        acked = a[j] - a[k0]
        ratios.append((w1 ** 2 - w0 ** 2) / (2 * MSS * acked))
        # what W_cubic would have added over the same time (W_max = previous peak, no FC: an upper bound)
        k = ((w[i] - w0) / MSS / 0.4) ** (1 / 3)
        dt = t[j] - t[k0]
        cubic_growth = 0.4 * ((dt - k) ** 3 + k ** 3)  # segments
        assert cubic_growth < 0.05 * (w1 - w0) / MSS
    print(f"reno-friendly (W1^2 - W0^2)/(2 MSS acked) per epoch: {np.round(ratios, 3).tolist()}")
    assert len(ratios) >= 2, losses
    for r in ratios:
        assert r == pytest.approx(ALPHA_CUBIC, rel=0.1), ratios


def fairness_and_utilization(res, n):
    t = np.asarray(res.t_ns)
    half = len(t) // 2
    got = [res.delivered[f][-1] - res.delivered[f][half] for f in sorted(res.delivered)]
    dt_s = (t[-1] - t[half]) / 1e9
    util = sum(got) * 8 / dt_s / (10e9 * MSS / MTU)
    return jain(got), util


@pytest.mark.parametrize("n", [2, 4])
def test_cubic_flows_share_fairly(n):
    res = dc_run(n, 60 if n == 2 else 120, start_gap_us=500)
    j, util = fairness_and_utilization(res, n)
    assert j >= 0.9, j
    assert util >= 0.9, util
