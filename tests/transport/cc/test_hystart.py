"""Classic HyStart (Ha & Rhee 2011; Linux tcp_cubic.c) on synthetic ACK sequences.

The sender model: slow start sends a window back to back; its ACKs return
``spacing_ns`` apart (the bottleneck's serialization time) one RTT after the
burst started, and every ACK releases two new segments (RFC 5681 slow start),
which form the next burst. ``in_flight`` is passed as the transport does
(before the segments this ACK releases are sent).
"""
import math

import pytest

from netsim.errors import InputError
from netsim.transport.cc.cubic import Cubic

MSS = 1000


def make(**over):
    return Cubic(Cubic.PARAMS.resolve(over), mss_bytes=MSS, line_rate_bps=10e9, base_rtt_ns=100_000)


def bursts(cc, rtt_ns, spacing_ns, rounds, rtt_of_round=None, stop_on_exit=True):
    """Feed ``rounds`` slow-start bursts; returns the (round, ack index) of the exit, or None."""
    t0 = 0
    for r in range(rounds):
        w = int(cc.cwnd_bytes // MSS)
        rtt = rtt_of_round(r) if rtt_of_round else rtt_ns
        for i in range(w):
            in_flight = (w - i - 1 + 2 * i) * MSS
            ss_before = cc.ssthresh_bytes
            cc.on_ack(t0 + i * spacing_ns, MSS, rtt, False, in_flight)
            if math.isinf(ss_before) and not math.isinf(cc.ssthresh_bytes) and stop_on_exit:
                return r, i
        t0 += max(rtt, w * spacing_ns)
    return None


def test_default_is_classic():
    assert Cubic.PARAMS.resolve()["hystart"] == "classic"
    assert make().hs_classic is not None


@pytest.mark.parametrize("value,mode", [("on", "plus"), (True, "plus"), ("true", "plus"), ("plus", "plus"),
                                        ("off", "off"), (False, "off"), ("classic", "classic")])
def test_hystart_values_and_old_boolean_aliases(value, mode):
    cc = make(hystart=value)
    assert cc.hystart == mode
    assert (cc.hs_classic is not None) == (mode == "classic")


def test_bad_hystart_value_rejected():
    with pytest.raises(InputError):
        Cubic.PARAMS.resolve({"hystart": "sometimes"})


def test_ack_train_exits_at_the_predicted_window():
    # RTT 100 us, ACKs 1 us apart. Bursts of 16 and 32 segments last 16/32 us < minRTT/2 = 50 us: no
    # exit. The 64-segment burst's train passes 50 us at its ACK index 51 (t - round start = 51 us),
    # when cwnd = 64 + 51 segments (one per ACK so far) -> ssthresh = cwnd = 115 segments.
    cc = make(init_cwnd_segments=16)
    where = bursts(cc, 100_000, 1000, 5)
    assert where == (2, 51)
    assert cc.ssthresh_bytes == 115 * MSS
    hs = cc.hs_classic
    assert hs.reason == "train" and hs.exit_cwnd_bytes == 115 * MSS
    assert hs.found_at_ns == 200_000 + 51_000
    # the exit ACK counts for congestion avoidance: far less than the +1 MSS of slow start
    assert 115 * MSS <= cc.cwnd_bytes < 115 * MSS + 0.1 * MSS


def test_same_acks_without_hystart_never_exit():
    cc = make(init_cwnd_segments=16, hystart="off")
    assert bursts(cc, 100_000, 1000, 5) is None
    assert math.isinf(cc.ssthresh_bytes)


def test_ns3_train_threshold_is_one_min_rtt():
    # ns-3.37 compares the train with minRTT itself: the 64-segment burst (64 us) is too short, the
    # 128-segment burst passes 100 us at its ACK index 101 -> cwnd = 128 + 101.
    cc = make(init_cwnd_segments=16, hystart_train_fraction=1.0)
    assert bursts(cc, 100_000, 1000, 6) == (3, 101)
    assert cc.ssthresh_bytes == 229 * MSS


def test_gap_longer_than_ack_delta_breaks_the_train():
    # WAN: RTT 100 ms, ACKs 3 ms apart (> ack_delta 2 ms): no train ever; with ACKs 1 ms apart the
    # 64-segment burst (64 ms > 50 ms) ends slow start at its ACK index 51.
    cc = make(init_cwnd_segments=16, hystart_detect="train")
    assert bursts(cc, 100_000_000, 3_000_000, 4) is None
    cc = make(init_cwnd_segments=16, hystart_detect="train")
    assert bursts(cc, 100_000_000, 1_000_000, 4) == (2, 51)


@pytest.mark.parametrize("base_ns,rise_ns,exits", [
    (50_000_000, 7_000_000, True),    # threshold clamp(50/8 = 6.25 ms, 4, 16) ms
    (50_000_000, 6_000_000, False),
    (100_000, 5_000_000, True),       # datacenter RTT: threshold clamped up to 4 ms
    (100_000, 3_000_000, False),
    (400_000_000, 17_000_000, True),  # 400/8 = 50 ms clamped down to 16 ms
    (400_000_000, 15_000_000, False),
])
def test_delay_increase_threshold(base_ns, rise_ns, exits):
    # one round at the base RTT, then every sample is base + rise; Linux tests the minimum of the
    # round's samples from the 9th sample on (HYSTART_MIN_SAMPLES = 8): exit at ACK index 8 of round 1,
    # cwnd = 32 + 8 segments.
    cc = make(init_cwnd_segments=16, hystart_detect="delay")
    where = bursts(cc, base_ns, 1000, 3, rtt_of_round=lambda r: base_ns if r == 0 else base_ns + rise_ns)
    if exits:
        assert where == (1, 8)
        assert cc.ssthresh_bytes == 40 * MSS and cc.hs_classic.reason == "delay"
    else:
        assert where is None and math.isinf(cc.ssthresh_bytes)


def test_nothing_below_the_low_window():
    # ACKs spread evenly over the RTT would be a train longer than minRTT/2 - but cwnd < 16 segments
    def feed(cc):
        for i in range(5):  # cwnd 10 -> 15, ACKs 20 us apart over 100 us
            cc.on_ack(i * 20_000, MSS, 100_000, False, 9 * MSS)
    cc = make()
    feed(cc)
    assert math.isinf(cc.ssthresh_bytes) and cc.cwnd_bytes == 15 * MSS and not cc.hs_classic.found
    cc = make(hystart_low_window_segments=0)
    feed(cc)
    assert cc.ssthresh_bytes == 13 * MSS and cc.hs_classic.reason == "train"  # 60 us > 50 us at ACK 3


def test_retransmitted_acks_without_rtt_are_ignored():
    cc = make(init_cwnd_segments=16)
    for i in range(100):
        cc.on_ack(i * 1000, MSS, None, False, 200 * MSS)
    assert math.isinf(cc.ssthresh_bytes) and cc.hs_classic.rounds == 0


def test_timeout_resets_hystart():
    cc = make(init_cwnd_segments=16)
    bursts(cc, 100_000, 1000, 5)
    assert cc.hs_classic.found
    cc.on_timeout(1_000_000, 100 * MSS)
    hs = cc.hs_classic
    assert not hs.found and math.isinf(hs.min_rtt_ns) and hs.reason is None


def test_plus_ignores_the_ack_train():
    # HyStart++ has no train signal and the RTT does not rise: slow start continues
    cc = make(init_cwnd_segments=16, hystart="plus")
    assert bursts(cc, 100_000, 1000, 5) is None
    assert math.isinf(cc.ssthresh_bytes) and not cc.in_css


def test_rounds_follow_the_bursts_from_the_initial_window():
    # IW10: bursts of 10, 20, 40, 80 segments (1 us apart, RTT 100 us). cwnd passes the low window
    # (16) in the middle of the 10-segment burst; rounds are counted from the first ACK, so no round
    # spans the idle gap between two bursts and the first train longer than 50 us is the 80-segment
    # burst's: exit at its ACK index 51, cwnd = 80 + 51.
    cc = make()
    assert bursts(cc, 100_000, 1000, 6) == (3, 51)
    assert cc.ssthresh_bytes == 131 * MSS
