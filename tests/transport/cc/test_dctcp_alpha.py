"""DCTCP (RFC 8257) alpha estimator and window reduction."""
import pytest

from netsim.transport.cc.dctcp import DCTCP

MSS = 1000


def make(**over):
    return DCTCP(DCTCP.PARAMS.resolve(over), mss_bytes=MSS, line_rate_bps=10e9, base_rtt_ns=100_000)


def test_alpha_update_once_per_window():
    cc = make()
    cc.cwnd_bytes = cc.ssthresh_bytes = 100 * MSS
    cc._cwr_end = 10**12                     # isolate the estimator from the cut
    # first window ends when the initial window (10 MSS) is acked
    for i in range(10):
        cc.on_ack(i, MSS, 100_000, i < 5, 100 * MSS)
    # 5 of 10 acked segments marked: alpha = 15/16 * 1 + 1/16 * 0.5
    assert cc.alpha == pytest.approx(1 - 1 / 16 + 0.5 / 16)
    a1 = cc.alpha
    # next window = 100 MSS in flight: 25 marked out of 100
    for i in range(100):
        cc.on_ack(100 + i, MSS, 100_000, i < 25, 100 * MSS)
    assert cc.alpha == pytest.approx((1 - 1 / 16) * a1 + 0.25 / 16)


def test_alpha_decays_without_marks():
    cc = make()
    cc.cwnd_bytes = cc.ssthresh_bytes = 20 * MSS
    n = 0
    for w in range(50):
        inflight = int(cc.cwnd_bytes)
        for i in range(inflight // MSS):
            cc.on_ack(n, MSS, 100_000, False, inflight)
            n += 1
    assert cc.alpha < (15 / 16) ** 40


def test_cut_once_per_window_with_alpha():
    cc = make()
    cc.cwnd_bytes = cc.ssthresh_bytes = 100 * MSS
    cc.alpha = 0.4
    cc._window_end = 10**12                  # keep alpha fixed
    cc.on_ack(0, MSS, 100_000, True, 100 * MSS)
    assert cc.cwnd_bytes == pytest.approx(100 * MSS * (1 - 0.2))
    c = cc.cwnd_bytes
    for i in range(50):                      # same window: no second cut, no growth on ECE
        cc.on_ack(i + 1, MSS, 100_000, True, 80 * MSS)
    assert cc.cwnd_bytes == pytest.approx(c)
    for i in range(60):                      # after the window: the next mark cuts again
        cc.on_ack(100 + i, MSS, 100_000, False, 80 * MSS)
    c = cc.cwnd_bytes
    cc.on_ack(1000, MSS, 100_000, True, 80 * MSS)
    assert cc.cwnd_bytes == pytest.approx(c * 0.8)


def test_reno_growth_without_marks():
    cc = make()
    cc.cwnd_bytes = cc.ssthresh_bytes = 50 * MSS
    for i in range(50):
        cc.on_ack(i, MSS, 100_000, False, 50 * MSS)
    assert cc.cwnd_bytes == pytest.approx(51 * MSS, rel=0.01)


def test_loss_and_timeout_like_reno():
    cc = make()
    cc.cwnd_bytes = 100 * MSS
    cc.on_loss(0, 100 * MSS)
    assert cc.cwnd_bytes == 50 * MSS
    cc.on_timeout(1, 40 * MSS)               # inside recovery: no second reduction
    assert cc.cwnd_bytes == MSS and cc.ssthresh_bytes == 50 * MSS
    cc.on_recovery_end(2)
    cc.cwnd_bytes = 60 * MSS
    cc.on_timeout(3, 40 * MSS)
    assert cc.cwnd_bytes == MSS and cc.ssthresh_bytes == 20 * MSS


def test_step_marking_settings():
    assert DCTCP.ecn_settings({"k_bytes": 0}, 10e9) == {
        "ecn_kmin_bytes": 97_500, "ecn_kmax_bytes": 97_500, "ecn_pmax": 1.0, "ecn_mark_at": "enqueue"}
    assert DCTCP.ecn_settings({"k_bytes": 0}, 100e9, mtu_bytes=1000)["ecn_kmin_bytes"] == 650_000
    assert DCTCP.ecn_settings({"k_bytes": 20_000}, 100e9)["ecn_kmax_bytes"] == 20_000
