"""DCTCP on the packet backend against the DCTCP paper's steady-state analysis.

With N long-lived flows on a bottleneck of capacity C (packets/s), base RTT
and step marking at K (Alizadeh et al., SIGCOMM 2010 §3.3): the queue peaks at
Q_max = K + N packets and its sawtooth amplitude is
A ≈ ½·√(2N·(C·RTT + K)) ≪ K/2 for the recommended K, so once converged the
queue's p5–p95 stays within [K/2, K + N·MTU]; α settles near √(2/W*) with
W* = (C·RTT + K)/N; the link stays fully used; nothing is dropped.
"""
import math

import numpy as np
import pytest

from netsim.bench.cc import incast_graph, simulate
from netsim.transport.cc import ecn_overrides

MTU, HDR = 1500, 62
MSS = MTU - HDR
RATE = 10e9
DELAY_NS = 5_000


@pytest.mark.parametrize("n", [2, 4, 8])
def test_dctcp_queue_band_and_alpha(n):
    ecn = ecn_overrides("dctcp", {}, RATE)          # K = 65 packets at 10 Gbps (DCTCP paper)
    k = ecn["ecn_kmin_bytes"]
    assert ecn["ecn_kmax_bytes"] == k and ecn["ecn_pmax"] == 1.0
    until_ms = 30
    flows = [(f"s{i}", "r0", 10**12, i * 100_000) for i in range(n)]
    res = simulate(incast_graph(n, rate_bps=RATE, delay_ns=DELAY_NS), flows, cc="dctcp",
                   params={"pfc": False, **ecn}, until_ns=until_ms * 1_000_000, probe_ns=2_000,
                   watch=("sw0", "r0"))
    t = np.asarray(res.t_ns) / 1e6
    conv = t >= until_ms / 3
    q = np.asarray(res.queue)[conv]
    p5, p95 = np.percentile(q, [5, 95])
    print(f"dctcp N={n}: K={k} queue p5={p5:.0f} p95={p95:.0f} band=[{k / 2:.0f}, {k + n * MTU}]")
    assert k / 2 <= p5 and p95 <= k + n * MTU
    assert res.stats["drops"] == 0
    # full utilization after convergence
    i0 = int(np.argmax(conv))
    got = sum(res.delivered[f][-1] - res.delivered[f][i0] for f in res.delivered)
    util = got * 8 / ((t[-1] - t[i0]) * 1e-3) / (RATE * MSS / MTU)
    assert util >= 0.99
    # alpha near sqrt(2/W*), W* = (C*RTT + K)/N in packets
    rtt_s = 4 * DELAY_NS * 1e-9 + 2 * MTU * 8 / RATE + 2 * 64 * 8 / RATE
    w_star = (RATE * rtt_s / 8 / MTU + k / MTU) / n
    expect = math.sqrt(2 / w_star)
    for fl in res.flows.values():
        assert 0.5 * expect <= fl.cc.alpha <= 1.5 * expect, (fl.cc.alpha, expect)
