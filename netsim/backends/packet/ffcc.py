"""Congestion-control state across a fast-forward jump (:mod:`.fastforward`, issue #21).

A jump of ``dt`` keeps every flow's congestion-control state as it is (the
same phase of its limit cycle, :mod:`.ffcycles`) and moves the clock on by
``dt``. So the state an algorithm keeps as an *absolute time* must move by
``dt`` too; counters kept by the algorithm itself advance at their
per-cycle counts. :data:`CC_STATE` names those attributes per algorithm, read
from the algorithm's source (netsim/transport/cc/):

* ``none`` and DCTCP: no absolute time; DCTCP's observation and CWR windows
  are counted in its own acknowledged-bytes total, which the jump does not
  move (the next ACK acknowledges the usual amount), so nothing to shift;
* DCQCN: its three lazy timers (``_next_alpha``, ``_next_rate``,
  ``_next_dec``, ns, ``inf`` while inactive) and its CNP and cut counters;
  a fixed point is tested over at least one period of its rate-increase
  timer while that runs (:func:`timer_span_ns`);
* Cubic: the epoch start (ns) and classic HyStart's round start and last
  ACK (ns); its HyStart rounds, like DCTCP's windows, count in its own
  acknowledged-bytes total, which the jump leaves alone.

An algorithm not in the table is never jumped (its state is unknown here).
Left out: HPCC (per-packet INT state), Swift and TIMELY (delay history with
absolute timestamps not listed here).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class CcState:
    """What a jump moves in one algorithm's state (attribute names of its object)."""

    time_ns: tuple = ()        # absolute times, ns (None / inf left alone)
    counters: tuple = ()       # running counts, advanced at their per-cycle rate
    sub_time_ns: tuple = ()    # (sub-object attribute, its ns-time attributes...)
    window_rtts: int = 4       # detector window in base RTTs (see WINDOW_RTTS_*)
    timers: tuple = ()         # (next-time attribute, period attribute in ns): a timer that may move the rate


#: detector window of a window-based algorithm (DCTCP, Cubic): its sawtooth spans several RTTs, so a
#: shorter window mostly measures the sawtooth (netsim choice; the first case's 4 RTTs)
WINDOW_RTTS_WINDOWED = 4
#: detector window of a paced or unregulated sender (none, DCQCN): at a fixed rate every RTT delivers the
#: same bytes, and a shorter window halves detection and margin on short collective steps (netsim choice:
#: 64 MiB ring on 16 servers under DCQCN 3.1x -> 6.4x fewer events at 4 -> 2 RTTs)
WINDOW_RTTS_PACED = 2


#: the algorithms a jump may move, with their state (see module docstring)
CC_STATE = {
    "none": CcState(window_rtts=WINDOW_RTTS_PACED),
    "dctcp": CcState(window_rtts=WINDOW_RTTS_WINDOWED),
    "dcqcn": CcState(time_ns=("_next_alpha", "_next_rate", "_next_dec"), counters=("cnps", "rate_cuts"),
                     window_rtts=WINDOW_RTTS_PACED, timers=(("_next_rate", "rate_period_ns"),)),
    "cubic": CcState(time_ns=("epoch_start_ns",), sub_time_ns=("hs_classic", "round_start_ns", "last_ack_ns"),
                     window_rtts=WINDOW_RTTS_WINDOWED),
}
#: algorithms with absolute-time state: a jump that moves them must be a whole number of ns
NS_TIMED = frozenset(n for n, s in CC_STATE.items() if s.time_ns or s.sub_time_ns)


def can_jump(cc_name: str) -> bool:
    """Whether the jump knows ``cc_name``'s state."""
    return cc_name in CC_STATE


def window_rtts(cc_name: str) -> int:
    """Detector window (base RTTs) the algorithm needs (the largest over the active flows is used)."""
    st = CC_STATE.get(cc_name)
    return WINDOW_RTTS_WINDOWED if st is None else st.window_rtts


def timer_span_ns(flow) -> int:
    """Longest period (ns) of the running timers that may change ``flow``'s rate (0: none running).

    A fixed point must be tested over at least this long: a rate unchanged over less than one period of
    DCQCN's rate-increase timer (300 us under the hpcc preset, 4 detector windows are ~50 us) only says
    the timer has not fired yet, as between the mark bursts of its limit cycle.
    """
    st = CC_STATE.get(flow.cc_name)
    if st is None or not st.timers:
        return 0
    cc = flow.cc
    return max((int(getattr(cc, per)) for nxt, per in st.timers if not math.isinf(getattr(cc, nxt, math.inf))),
               default=0)


def counters(flow) -> tuple:
    """The algorithm's own running counters of ``flow`` (in :data:`CC_STATE` order)."""
    return tuple(getattr(flow.cc, a, 0) for a in CC_STATE[flow.cc_name].counters)


def _shift(obj, names, delta) -> None:
    for a in names:
        v = getattr(obj, a, None)
        if v is None or (isinstance(v, float) and math.isinf(v)):
            continue
        setattr(obj, a, v + delta)


def shift(flow, dt_ns: int, counter_adds: tuple) -> None:
    """Move ``flow``'s algorithm state across a jump of ``dt_ns``; its counters by ``counter_adds``."""
    cc = flow.cc
    st = CC_STATE[flow.cc_name]
    _shift(cc, st.time_ns, dt_ns)
    if st.sub_time_ns and getattr(cc, st.sub_time_ns[0], None) is not None:
        _shift(getattr(cc, st.sub_time_ns[0]), st.sub_time_ns[1:], dt_ns)
    for a, add in zip(st.counters, counter_adds):
        setattr(cc, a, getattr(cc, a) + add)
