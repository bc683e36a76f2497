"""Steady-state fast-forward of the packet network (``--fast-forward on``; issue #21).

What is modelled. A detector (a network event of its own, every window of
:func:`.ffcc.window_rtts` base RTTs of the slowest active flow) splits the
active flows into components (:mod:`.ffcomponents`: flows sharing an egress
port) and snapshots each (:func:`.ffstate.snapshot`: in-order delivered
bytes and counters of its flows, queues and counters of its ports), keeping
up to :data:`MAX_HISTORY_WINDOWS` per component while its flow set stays the
same. When :func:`.ffcycles.plan_jump` finds the history steady — a fixed
point, or a limit cycle over whole cycles — the component jumps
(:func:`.ffstate.jump`): its pending events and absolute times move ``dt``
later, its flows' sequence spaces and counters advance at the measured rates,
and packet simulation of it resumes at ``now + dt`` from that state.

* One component holding every active flow: the whole network jumps (every
  network event moves, samplers and this detector included), never past the
  next event that is not the network's (a flow start, a compute completion,
  a what-if, ``until``), so nothing outside sees a frozen state.
* Several: each steady component jumps alone (only its ports' and flows'
  events move) while the rest runs; it is *frozen* until ``now + dt``. A flow
  starting on a frozen component's ports (:meth:`FastForward.ensure`) or a
  what-if on any link (:meth:`FastForward.thaw_all`) thaws it: the jump is
  cut short there (:func:`.ffcomponents.thaw_plan`).

Every jump is recorded (``summary.json`` and fast_forward.csv, :mod:`.fftrace`).
Only runs without random loss or spraying are watched; algorithms whose
state the jump cannot move (:data:`.ffcc.CC_STATE`) are never jumped.

Left out: exact memoisation of repeated collectives (its own option, :mod:`.memo`); events that are not the
network's do not bound a single component's jump (other than a flow start on
its ports or a what-if, nothing outside reads a component's state mid-run:
a process reading a frozen flow's bytes would see them advanced already).
"""
from __future__ import annotations

from ...units import PS_PER_NS
from . import ffcc, ffcomponents, ffcycles, ffstate, fftrace

#: detection window in base RTTs when no flow says otherwise (each algorithm's own is ffcc.window_rtts: short
#: enough that detection and margin stay a few per cent of a collective step; issue #21 asks for stability
#: "over several RTTs")
DETECT_WINDOW_RTTS = ffcc.WINDOW_RTTS_WINDOWED
#: fewest consecutive windows the steadiness test looks at (netsim choice, issue #21: "several")
STEADY_WINDOWS = ffcycles.FIXED_WINDOWS
#: most windows kept: a limit cycle up to a quarter of this long can be tested over 3 whole cycles after
#: the start-up (netsim choice: 512 windows of 2 RTTs of ~6 us hold DCQCN's ~1 ms cycle six times over)
MAX_HISTORY_WINDOWS = 512
#: the limit-cycle test reads the whole history, so it runs when the history has grown by this factor
#: since the last test (netsim choice: a cycle is found at most 1/4 of the history late, and the tests
#: cost ~3 per doubling of the history instead of one per window)
CYCLE_TEST_GROWTH = 1.25
#: ... and at least once every this many windows (netsim choice: a test costs about a millisecond of CPU,
#: a window of a loaded 100 Gb/s bottleneck a few, so the detector stays a few per cent of the run)
CYCLE_TEST_MAX_GAP = 16
#: windows of packet simulation kept before the earliest flow end (issue #21: "minus a few RTTs")
MARGIN_WINDOWS = 2
#: a jump shorter than this many windows is not worth the state shift (netsim choice)
MIN_JUMP_WINDOWS = 2


class FastForward:
    """The detector and jump of one packet backend (see module docstring).

    Parameters
    ----------
    backend : PacketBackend
        The backend whose network it watches; its ``params`` give ``fast_forward_tolerance``.
    """

    __slots__ = ("callbacks", "be", "net", "tol", "cycle_tol", "hists", "running", "period_ps", "skips",
                 "skipped_ps", "skipped_packets", "eligible_net", "intervals", "frozen", "cycle_skips", "comps",
                 "marks_err")
    _ok = True

    def __init__(self, backend):
        self.callbacks = None
        self.be = backend
        self.net = backend.net
        self.tol = float(backend.params["fast_forward_tolerance"])
        self.cycle_tol = float(backend.params["fast_forward_cycle_tolerance"])
        #: per component (its flow ids): the snapshots since its flow set last changed
        self.hists: dict = {}
        self.running = False
        self.period_ps = 0
        self.skips = 0
        self.cycle_skips = 0
        self.skipped_ps = 0
        self.skipped_packets = 0
        #: every jump: [from_ps, to_ps, ports, flow ids]; frozen from ``from_ps``, resumed at ``to_ps``
        self.intervals: list = []
        #: components frozen by a jump of their own (the rest of the network running): fids -> Frozen
        self.frozen: dict = {}
        self.comps = None
        #: the ECN-mark error bound the jumps so far carried (95 %, summed; ffcycles.counter_cycles)
        self.marks_err = 0.0
        self.eligible_net = ffstate.network_is_deterministic(self.net, backend.params)

    def ensure(self) -> None:
        """A flow started: forget the history of what it joins, thaw a frozen component it crosses."""
        net = self.net
        flow = next(reversed(net.flows.values()))
        for fids, fr in list(self.frozen.items()):
            if ffcomponents.touches(flow, fr.comp):
                self._thaw(fids, fr)
        self.hists = {k: h for k, h in self.hists.items()
                      if not any(ffcomponents.touches(flow, c) for c in ffcomponents.components_of(net, k))}
        if self.running or not self.eligible_net:
            return
        self.running = True
        self._schedule()

    def _schedule(self, after_ps: int = 0) -> None:
        """Next tick one window after now (+ ``after_ps``: the jump just made, which moved the network)."""
        flows = self.net.flows.values()
        rtt_ns = max((f.cc.base_rtt_ns for f in flows), default=0)
        rtts = max((ffcc.window_rtts(f.cc_name) for f in flows), default=DETECT_WINDOW_RTTS)
        self.period_ps = max(1, int(rtt_ns)) * rtts * PS_PER_NS
        self.callbacks = (self._tick,)
        self.net.sched.schedule(self.net.env.now + after_ps + self.period_ps, self)

    def _tick(self, _ev) -> None:
        net = self.net
        if not net.active:
            self.running = False
            self.hists.clear()
            return
        now = net.env.now
        self.frozen = {k: fr for k, fr in self.frozen.items() if fr.t1_ps > now and all(f in net.flows for f in k)}
        fids = tuple(net.flows)
        if self.comps is None or self.comps[0] != fids:
            self.comps = (fids, ffcomponents.components(net))   # the same until a flow starts or ends
        comps = self.comps[1]
        whole = len(comps) == 1 and not self.frozen      # the whole network jumps (its own events move too)
        dt = 0
        for comp in comps:
            if comp.fids not in self.frozen:
                dt = self._watch(comp, now, whole)
        self._schedule(dt if whole else 0)

    def _watch(self, comp, now: int, whole: bool) -> int:
        """Snapshot ``comp``, jump if steady; returns the time skipped (ps)."""
        net = self.net
        ports = list(comp.ports)
        snap = ffstate.snapshot(net, now, {f: net.flows[f] for f in comp.fids}, ports)
        key = comp.fids
        hist = self.hists.get(key)
        if snap is None:
            self.hists.pop(key, None)
            return 0
        if hist is None:
            mine = set(key)
            self.hists = {k: h for k, h in self.hists.items() if not mine.intersection(k)}
            hist = self.hists[key] = ffcycles.History(MAX_HISTORY_WINDOWS + 1)
        hist.append(snap)
        if len(hist) <= STEADY_WINDOWS:
            return 0
        n = len(hist) - 1
        due = hist.appended >= hist.next_cycle_test
        if due:
            hist.next_cycle_test = hist.appended + min(CYCLE_TEST_MAX_GAP, max(2, int(n * (CYCLE_TEST_GROWTH - 1))))
        plan = ffcycles.plan_jump(net, hist, self.tol, self.cycle_tol, MARGIN_WINDOWS,
                                  MIN_JUMP_WINDOWS * self.period_ps, component=not whole, test_cycle=due,
                                  marks_spent=self.marks_err)
        if plan is None:
            return 0
        owned = None if whole else ffcomponents.owner(net, comp)
        self.skipped_packets += ffstate.jump(net, plan, ports, owned, shift_all_ports=whole)
        self.skips += 1
        self.marks_err += plan.marks_err
        self.cycle_skips += plan.cycles > 0
        self.skipped_ps += plan.dt_ps
        self.intervals.append([now, now + plan.dt_ps, comp.ports, comp.fids, plan.cycles])
        del self.hists[key]
        if not whole:
            self.frozen[comp.fids] = ffcomponents.Frozen(now, now + plan.dt_ps, comp, plan)
        return plan.dt_ps

    def thaw_all(self) -> None:
        """Every frozen component resumes now (a what-if is about to change a link)."""
        for fids, fr in list(self.frozen.items()):
            if fr.t1_ps > self.net.env.now:
                self._thaw(fids, fr)
        self.frozen.clear()

    def _thaw(self, fids, fr) -> None:
        """A flow starts on ``fr``'s frozen ports: the component resumes now (the jump is cut short)."""
        net = self.net
        del self.frozen[fids]
        back = ffcomponents.thaw_plan(fr, net.env.now, {f: net.flows[f].mss for f in fids})
        if back is None:
            return
        self.skipped_packets += ffstate.jump(net, back, list(fr.comp.ports), ffcomponents.owner(net, fr.comp))
        self.skipped_ps += back.dt_ps
        for iv in reversed(self.intervals):
            if iv[0] == fr.t0_ps and iv[3] == fids:
                iv[1] += back.dt_ps
                break

    def stats(self) -> dict:
        """The ``fast_forward`` block of ``summary.json``."""
        return {"skips": self.skips, "cycle_skips": self.cycle_skips,
                "skipped_sim_time_ns": (self.skipped_ps + 500) // PS_PER_NS,
                "skipped_packets": self.skipped_packets, "tolerance": self.tol,
                "cycle_tolerance": self.cycle_tol, "deterministic_network": self.eligible_net,
                "ecn_marks_error_bound": round(self.marks_err, 1),
                "skipped_intervals_ns": [[(a + 500) // PS_PER_NS, (b + 500) // PS_PER_NS]
                                         for a, b, *_rest in self.intervals]}

    def close(self) -> None:
        """Write the skipped intervals to fast_forward.csv (:mod:`.fftrace`) if the run has an output folder."""
        sink = fftrace.skip_sink(self.be.sinks)
        if sink is not None:
            fftrace.write_skips(sink, self.intervals)
