"""Classic HyStart slow-start exit (Ha & Rhee 2011; Linux ``tcp_cubic.c``), as a pure state machine.

HyStart ends slow start (``ssthresh = cwnd``) before the first loss using two
per-round signals, evaluated on every ACK that carries an RTT sample while
the flow is in slow start with ``cwnd ≥ low_window``:

* **ACK train** — ACKs of one round arriving no more than ``ack_delta_ns``
  apart form a train (the first ACK of a round starts it; once a gap longer
  than ``ack_delta_ns`` occurs the train of that round is over). When the
  train has lasted longer than ``train_fraction · minRTT`` (Linux, no pacing:
  minRTT/2, the forward one-way delay; ns-3.37: minRTT) the data in flight at
  the round start fills about half the path's bandwidth-delay product, so the
  window reached during this round is about one BDP: exit.
* **Delay increase** — the minimum of the first ``min_samples`` RTT samples of
  the round exceeds ``minRTT + clamp(minRTT / delay_divisor, delay_min_ns,
  delay_max_ns)`` (Linux ≥ 5.6: divisor 8, clamp [4 ms, 16 ms]; ns-3.37:
  divisor 1, clamp [4 ms, 1 s]).

``minRTT`` is the minimum of every RTT sample seen since the flow started
(or since the last retransmission timeout, which resets HyStart as Linux's
``TCP_CA_Loss`` does).

Rounds are delimited by sequence numbers as in Linux and ns-3: a round starts
with the first sampled ACK whose cumulative acknowledgement passes
``end_seq``, and ``end_seq`` is then set to the highest byte sent so far
(``snd_nxt = snd_una + bytes in flight``, before this ACK's new segments), so
the round covers the ACKs of the data that was in flight when it started (one
window: in slow start, exactly one burst). Rounds are tracked from the first
ACK, also below the low window (as ns-3.37 does; Linux starts them only once
``cwnd ≥ low_window``). That matters at datacenter RTTs: a round first opened
in the middle of a burst would also contain the ACKs of the next burst, so
its "train" would span the idle gap between bursts (much shorter than the
2 ms ``ack_delta``) and last a whole RTT, ending slow start at ~16 segments
whatever the BDP. Linux escapes this through the TSO/pacing cushion it adds to
the train threshold (below), which netsim does not model.

Deliberately left out: Linux's TSO/GRO cushion ``hystart_ack_delay`` (added to
the train threshold when the socket has a pacing rate: netsim sends no TSO
bursts), and discarding delay samples during the first second of a
congestion-avoidance epoch (irrelevant to the slow-start decision).

A window of 60 KB in flight, ACKed at 10 B/ns (so it drains in 6 µs), minRTT
10 µs: the round's ACK train passes minRTT/2 = 5 µs at the ACK of t = 5.1 µs.

>>> hs = ClassicHystart(mss_bytes=1000)
>>> hs.on_ack(0, 0, 60_000, 10_000, 20_000)        # first round starts at t=0, ends at byte 60000
False
>>> any(hs.on_ack(t, 10 * t, 10 * t + 60_000, 10_000, 20_000) for t in range(100, 6_000, 100))
True
>>> hs.reason, hs.found_at_ns
('train', 5100)
"""
from __future__ import annotations

import math

from ...params import Param

#: Detection-mode names of the ``hystart_detect`` parameter (Linux ``hystart_detect`` bit mask 1|2).
DETECT_MODES = ("both", "train", "delay")
#: Values of Cubic's ``hystart`` parameter.
HYSTART_MODES = ("classic", "plus", "off")
# Compatibility: ``hystart`` used to be a bool meaning HyStart++ on/off.
_ALIASES = {"on": "plus", "true": "plus", "yes": "plus", "1": "plus",
            "false": "off", "no": "off", "0": "off", "none": "off", "hystart++": "plus"}


class HystartChoice(Param):
    """A ``choice`` parameter that also accepts the old boolean values of ``hystart``.

    >>> p = HystartChoice("hystart", "classic", "choice", "", "", choices=HYSTART_MODES)
    >>> [p.parse(v) for v in ("classic", "on", True, "off", False, "plus")]
    ['classic', 'plus', 'plus', 'off', 'off', 'plus']
    """

    def _convert(self, value):
        if isinstance(value, bool):
            return "plus" if value else "off"
        s = str(value).strip().lower()
        return super()._convert(_ALIASES.get(s, s))

    def accepted(self) -> str:
        return super().accepted() + " (on/true = plus, false = off, for compatibility)"


class ClassicHystart:
    """Per-flow classic HyStart state; :meth:`on_ack` says when to leave slow start.

    Parameters
    ----------
    mss_bytes : int
        Segment payload, bytes (``low_window_segments`` is in segments).
    low_window_segments : int
        HyStart only runs while ``cwnd ≥ low_window_segments · MSS``.
    ack_delta_ns : int
        Maximum spacing of two consecutive ACKs of one train, ns.
    train_fraction : float
        The train must last longer than ``train_fraction · minRTT``.
    delay_min_ns, delay_max_ns : int
        Clamp of the delay-increase threshold, ns.
    delay_divisor : float
        The threshold before clamping is ``minRTT / delay_divisor``.
    min_samples : int
        RTT samples per round whose minimum is compared with ``minRTT``.
    detect : str
        ``both`` | ``train`` | ``delay``.
    """

    __slots__ = ("low_window_bytes", "ack_delta_ns", "train_fraction", "delay_min_ns", "delay_max_ns",
                 "delay_divisor", "min_samples", "use_train", "use_delay",
                 "found", "reason", "found_at_ns", "exit_cwnd_bytes", "min_rtt_ns", "round_start_ns", "last_ack_ns",
                 "end_seq", "curr_rtt_ns", "samples", "rounds")

    def __init__(self, *, mss_bytes: int, low_window_segments: int = 16, ack_delta_ns: int = 2_000_000,
                 train_fraction: float = 0.5, delay_min_ns: int = 4_000_000, delay_max_ns: int = 16_000_000,
                 delay_divisor: float = 8.0, min_samples: int = 8, detect: str = "both"):
        self.low_window_bytes = low_window_segments * mss_bytes
        self.ack_delta_ns = ack_delta_ns
        self.train_fraction = train_fraction
        self.delay_min_ns = delay_min_ns
        self.delay_max_ns = delay_max_ns
        self.delay_divisor = delay_divisor
        self.min_samples = min_samples
        self.use_train = detect in ("both", "train")
        self.use_delay = detect in ("both", "delay")
        self.rounds = 0
        self.reset()

    def reset(self) -> None:
        """Forget everything (flow start, or a retransmission timeout as Linux ``TCP_CA_Loss``)."""
        self.found = False
        self.reason: str | None = None
        self.found_at_ns: int | None = None
        self.exit_cwnd_bytes: float | None = None
        self.min_rtt_ns: float = math.inf
        self.round_start_ns = 0
        self.last_ack_ns = 0
        self.end_seq = -1          # the next sampled ACK starts a round
        self.curr_rtt_ns: float = math.inf
        self.samples = 0

    def delay_threshold_ns(self) -> float:
        """``clamp(minRTT / delay_divisor, delay_min_ns, delay_max_ns)``.

        >>> ClassicHystart(mss_bytes=1000, min_samples=8).delay_threshold_ns()  # no sample yet
        inf
        """
        if not math.isfinite(self.min_rtt_ns):
            return math.inf
        return min(max(self.min_rtt_ns / self.delay_divisor, self.delay_min_ns), self.delay_max_ns)

    def on_ack(self, now_ns: int, snd_una: int, snd_nxt: int, rtt_ns: int | None, cwnd_bytes: float) -> bool:
        """One new cumulative ACK while in slow start; ``True`` = exit slow start now (once).

        Parameters
        ----------
        now_ns : int
            Arrival time of the ACK, ns.
        snd_una, snd_nxt : int
            Cumulatively acknowledged bytes after this ACK, and the highest byte sent.
        rtt_ns : int or None
            RTT sample of this ACK (None: retransmitted data, Karn; the ACK is ignored).
        cwnd_bytes : float
            Congestion window before this ACK's growth, bytes.
        """
        if rtt_ns is None or rtt_ns <= 0:
            return False
        if rtt_ns < self.min_rtt_ns:
            self.min_rtt_ns = rtt_ns
        if self.found:
            return False
        if snd_una > self.end_seq:  # a new round (tracked below the low window too, as ns-3 does)
            self.round_start_ns = self.last_ack_ns = now_ns
            self.end_seq = snd_nxt
            self.curr_rtt_ns = math.inf
            self.samples = 0
            self.rounds += 1
        if cwnd_bytes < self.low_window_bytes:
            return False
        if self.use_train and now_ns - self.last_ack_ns <= self.ack_delta_ns:
            self.last_ack_ns = now_ns
            if now_ns - self.round_start_ns > self.train_fraction * self.min_rtt_ns:
                return self._exit("train", now_ns, cwnd_bytes)
        if self.use_delay:
            if rtt_ns < self.curr_rtt_ns:
                self.curr_rtt_ns = rtt_ns
            if self.samples < self.min_samples:
                self.samples += 1
            elif self.curr_rtt_ns > self.min_rtt_ns + self.delay_threshold_ns():
                return self._exit("delay", now_ns, cwnd_bytes)
        return False

    def _exit(self, reason: str, now_ns: int, cwnd_bytes: float) -> bool:
        self.found = True
        self.reason = reason
        self.found_at_ns = now_ns
        self.exit_cwnd_bytes = cwnd_bytes
        return True
