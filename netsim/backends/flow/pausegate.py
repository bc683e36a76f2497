"""Where PFC pauses really happen: the standing queue of window-, delay- and ECN-limited flows against XOFF.

Port fairness and head-of-line blocking (:mod:`.portfair`, :mod:`.hol`) are
what PFC pauses do; a pause needs the bytes an ingress link ``k`` has queued
in the node it feeds to reach that ingress' XOFF (the packet backend's own
threshold, :func:`netsim.network.pfcxoff.xoff_bytes`). A window-limited flow
can queue no more than its window less what its path holds at its rate:
``window - rate x RTT`` (wire bytes), all of it at its bottleneck link ``l``,
counted against the ingress just before ``l``. So a lossless component whose
flows all have a bounded standing window (:func:`standing_window`) is
solved by max-min, without port fairness or head-of-line blocking, unless
some ingress' sum of such queues (per priority) reaches its XOFF; then it is
solved as before, and only the ingresses that reach XOFF are paused.

Bounded: ``--cc none``'s fixed window (``window_bytes``, else one BDP of the
path at its bottleneck plus an MSS, :attr:`netsim.network.path.Path.bdp_window_bytes`:
the packet backend's window) and HPCC, whose window law drives every link to
``eta < 1`` utilisation, so it keeps no standing queue (its start-up burst at
line rate can pause a few tens of microseconds: measured 4 pauses, 52 us in
all, on tests/trial/data7; left out). And two whose bound is the bottleneck's
queue itself, shared among its flows in proportion to their rates (a FIFO
holds a flow's bytes in proportion to its arrival rate):

* Swift (Kumar et al., SIGCOMM 2020, §3): the window settles where the
  measured RTT equals the target delay, so the bottleneck holds
  ``(target - base RTT) x rate`` — a flow at ``r`` contributes
  ``r x (target - base RTT)``; the target is the flow's own (base + hops x
  hop scale + flow scaling at the window ``r x target``, solved by fixed
  point, :class:`DelayQueue`);
* DCTCP (Alizadeh et al., SIGCOMM 2010, §3.3): with step marking at ``K``
  the queue peaks at ``Q_max = K + N`` packets for ``N`` flows — a flow
  contributes its rate share of ``K`` plus one packet (:class:`EcnQueue`); ``K``
  is DCTCP's own (65 packets per 10 Gb/s, or ``k_bytes``). For an
  ECN-capable run the XOFF tested is the packet backend's, raised above the
  switch's largest Kmax (:func:`netsim.network.pfcxoff.xoff_above_ecn`).

Every other algorithm (rate-based DCQCN and Timely, loss-based Cubic)
counts as unbounded: its components keep port fairness and head-of-line
blocking.

Left out: transients (start-up bursts, Swift's overshoot while the queue
builds: the gate is all or nothing, so a Swift bound just above XOFF pauses
fully where the packet backend pauses part of the time), queues an ingress holds for several
egresses of its node (each bottleneck is tested with its own flows' queues
only through their ingress, summed per ingress), the XOFF raised above ECN
Kmax and cut to the shared pool, port fairness at links whose own ingresses
do not pause in a component where some other ingress does.
"""
from __future__ import annotations

import math
from typing import Mapping, NamedTuple, Sequence

from ...network.params import node_overrides, per_priority
from ...network.pfcxoff import xoff_above_ecn, xoff_bytes
from ...transport.cc.config import cc_class, ecn_overrides
from ...units import PS_PER_NS
from .settings import ecn_fixed

#: a flow held at a link carries at least this fraction of the largest rate there (float slack)
_REL = 1e-9


class StandingWindow(NamedTuple):
    """The most a flow keeps queued: ``window_bytes - rate x rtt_ps`` (wire bytes, ps)."""

    window_bytes: float   #: in-flight limit, wire bytes (0: the algorithm keeps no standing queue)
    rtt_ps: float         #: base RTT of its path, ps

    def queue_bytes(self, rate: float, capacity: float) -> float:
        """Bytes it keeps queued at ``rate`` (bytes/ps) at a saturated link of ``capacity``."""
        return self.window_bytes - rate * self.rtt_ps


class DelayQueue(NamedTuple):
    """Swift: ``rate x (target - base RTT)``, the target at the flow's window ``rate x target`` (wire bytes, ps)."""

    fixed_target_ps: float   #: base target + hops x hop scale, ps
    rtt_ps: float            #: base RTT of its path, ps
    fs_alpha_ps: float       #: flow scaling ``alpha / sqrt(cwnd) + beta``, clamped to [0, fs_range] (0: off)
    fs_beta_ps: float
    fs_range_ps: float
    packet_bytes: float      #: wire bytes of one packet (cwnd in packets)

    def target_ps(self, rate: float) -> float:
        """The target delay at ``rate`` (bytes/ps): fixed point of target(cwnd = rate x target)."""
        t = self.fixed_target_ps
        if not self.fs_alpha_ps:
            return t
        for _ in range(SWIFT_FIXED_POINT_ROUNDS):
            cwnd = max(rate * t / self.packet_bytes, 1e-9)
            fs = min(max(self.fs_alpha_ps / math.sqrt(cwnd) + self.fs_beta_ps, 0.0), self.fs_range_ps)
            t = self.fixed_target_ps + fs
        return t

    def queue_bytes(self, rate: float, capacity: float) -> float:
        """Bytes it keeps queued at ``rate`` (bytes/ps) at a saturated link (``capacity`` unused)."""
        return rate * max(self.target_ps(rate) - self.rtt_ps, 0.0)


class EcnQueue(NamedTuple):
    """DCTCP: its rate share of the marking threshold K plus one packet (``Q_max = K + N``), wire bytes."""

    k_delay_ps: float    #: K / rate when K scales with the port rate (65 packets per 10 Gb/s), ps (else 0)
    k_bytes: float       #: a fixed K (``k_bytes`` set), bytes (else 0)
    packet_bytes: float  #: one packet, wire bytes

    def queue_bytes(self, rate: float, capacity: float) -> float:
        """Bytes it keeps queued at ``rate`` (bytes/ps) at a saturated link of ``capacity`` (bytes/ps)."""
        return rate * self.k_delay_ps + self.k_bytes * rate / capacity + self.packet_bytes


#: fixed-point rounds of Swift's target against its flow-scaled window (converges in a few: fs ~ 1/sqrt(t))
SWIFT_FIXED_POINT_ROUNDS = 30


def _swift_queue(cc_params: Mapping, path, rtt_ps: float) -> DelayQueue:
    p = cc_class("swift").PARAMS.resolve(dict(cc_params.get("swift") or {}))
    fixed = (float(p["base_target_ns"]) + len(path.hops) * float(p["hop_scale_ns"])) * PS_PER_NS
    if not p["flow_scaling"]:
        return DelayQueue(fixed, rtt_ps, 0.0, 0.0, 0.0, float(path.mtu_bytes))
    fs_range = float(p["fs_range_ns"]) * PS_PER_NS      # the Swift class's own flow-scaling law (swift.py)
    alpha = fs_range / (1 / math.sqrt(float(p["fs_min_cwnd"])) - 1 / math.sqrt(float(p["fs_max_cwnd"])))
    return DelayQueue(fixed, rtt_ps, alpha, -alpha / math.sqrt(float(p["fs_max_cwnd"])), fs_range,
                      float(path.mtu_bytes))


def _dctcp_queue(cc_params: Mapping, path) -> EcnQueue:
    p = cc_class("dctcp").PARAMS.resolve(dict(cc_params.get("dctcp") or {}))
    if int(p["k_bytes"] or 0) > 0:
        return EcnQueue(0.0, float(p["k_bytes"]), float(path.mtu_bytes))
    bott = path.bottleneck_bps
    k = ecn_overrides("dctcp", cc_params.get("dctcp"), bott, mtu_bytes=path.mtu_bytes)["ecn_kmax_bytes"]
    return EcnQueue(k / (bott / 8e12), 0.0, float(path.mtu_bytes))


def standing_window(cc_name: str, cc_params: Mapping, params: Mapping, path):
    """The standing-queue bound of a flow of ``cc_name`` on ``path`` (a :class:`netsim.network.path.Path`):
    a :class:`StandingWindow`, :class:`DelayQueue` or :class:`EcnQueue`, ``None`` when unbounded."""
    rtt_ps = path.base_rtt_ns * PS_PER_NS
    if cc_name == "hpcc":
        return StandingWindow(0.0, rtt_ps)
    if cc_name == "swift":
        return _swift_queue(cc_params, path, rtt_ps)
    if cc_name == "dctcp":
        return _dctcp_queue(cc_params, path)
    if cc_name != "none":
        return None
    w = int((cc_params.get("none") or {}).get("window_bytes", 0) or 0) or int(params.get("window_bytes", 0) or 0)
    if w <= 0:
        w = max(path.bdp_window_bytes, path.mss_bytes)
    return StandingWindow(w * path.mtu_bytes / path.mss_bytes, rtt_ps)


class PauseGate:
    """XOFF of every ingress link and the test of :func:`pausing_ingresses` for the solver.

    ``graph``: the topology; ``link_ids``: ``{(a, b): link id}``; ``params``: resolved network
    parameters (node attributes of the receiving node override them); ``cc``, ``cc_params``: the
    run's default algorithm and its parameters (an ECN-capable one raises XOFF above Kmax, as the
    packet backend does).
    """

    def __init__(self, graph, link_ids: Mapping[tuple, int], params: Mapping, cc: str = "none",
                 cc_params: Mapping | None = None):
        self._graph = graph
        self._ends = {l: ab for ab, l in link_ids.items()}
        self._params = params
        self._cc = cc
        self._cc_params = dict(cc_params or {})
        self._ecn_cc = bool(cc_class(cc).ecn_capable) if cc != "none" else False
        self._xoff: dict[tuple[int, int], float] = {}
        self._by_prio: dict[int, dict[int, float]] = {}     # prio -> {link: XOFF}, for signature

    def xoff(self, link: int, prio: int) -> float:
        """XOFF (bytes) of priority ``prio`` of the ingress ``link`` into its head node."""
        key = (link, prio)
        v = self._xoff.get(key)
        if v is None:
            a, b = self._ends[link]
            g = self._graph
            attrs = g.nodes[b]
            p = dict(self._params)
            p.update(node_overrides(attrs, node=b))
            e = g.edges[a, b]
            delay_ps, rate_bps = int(float(e.get("delay_ns", 0.0)) * PS_PER_NS), float(e["rate_bps"])
            switch = attrs.get("kind") == "switch"
            v = float(xoff_bytes(p, delay_ps=delay_ps, rate_bps=rate_bps, mtu_bytes=int(p["mtu_bytes"]), prio=prio,
                                 switch_ingress=switch))
            # ECN on/off and the XOFF-above-ECN mode are refused on this backend (netsim/honours.py), so their
            # defaults hold here: ECN marks, and XOFF is raised above Kmax for an ECN-capable algorithm only
            if switch and self._ecn_cc:
                v = xoff_above_ecn(p, v, kmax_bytes=self._kmax(b, prio), delay_ps=delay_ps, rate_bps=rate_bps,
                                   prio=prio, ecn_capable_cc=self._ecn_cc)
            self._xoff[key] = v
        return v

    def _kmax(self, node, prio: int) -> float | None:
        """The largest ECN Kmax of switch ``node``'s egress links (the run's algorithm's, under --set and
        node attributes, as the packet backend's ports); ``None`` when it does not mark."""
        g = self._graph
        attrs = g.nodes[node]
        p = dict(self._params)
        p.update(node_overrides(attrs, node=node))
        fixed = ecn_fixed(self._params, attrs, node, prio)
        best = None
        for (a, b) in self._ends.values():
            if a != node or not g.has_edge(a, b):      # a failed link is gone from the graph
                continue
            rate = float(g.edges[a, b]["rate_bps"])
            implied = ecn_overrides(self._cc, self._cc_params.get(self._cc), rate, mtu_bytes=int(p["mtu_bytes"]))
            k = float(fixed.get("ecn_kmax_bytes", implied.get("ecn_kmax_bytes",
                                                               per_priority(p, "ecn_kmax_bytes")[prio])))
            best = k if best is None else max(best, k)
        return best

    def signature(self, links, prios: Sequence[int]) -> list:
        """The XOFF values a solution of a component on ``links`` depends on (for its memo key)."""
        out = []
        for p in sorted(set(prios)):
            by = self._by_prio.get(p)
            if by is None:
                by = self._by_prio[p] = {}
            for l in links:
                x = by.get(l)
                if x is None:
                    x = by[l] = self.xoff(l, p)
                out.append(x)
        return out

    def pausing(self, comp: Sequence, rates: Sequence[float], capacity: Mapping[int, float]) -> frozenset:
        """:func:`pausing_ingresses` with this gate's thresholds."""
        return pausing_ingresses([f.links for f in comp], [f.win for f in comp], [f.prio for f in comp],
                                 rates, capacity, self.xoff)


def pausing_ingresses(paths: Sequence[Sequence[int]], windows: Sequence[StandingWindow | None],
                      prios: Sequence[int], rates: Sequence[float], capacity: Mapping[int, float],
                      xoff) -> frozenset:
    """Ingress links whose standing queue reaches their XOFF (rates in bytes/ps, windows in bytes).

    A flow entering a saturated link ``l`` from link ``k`` is held at ``l`` when no flow that
    also comes from ``k`` gets more there (the max-min bottleneck condition within the
    ingress' share: port fairness may give a flow from another ingress more); its
    standing queue (``window - rate x RTT``, Swift's and DCTCP's share of the link's queue:
    ``windows[i].queue_bytes``; unbounded for a ``None`` window) then counts
    against ``k``. A flow can count at several ingresses (the bound errs towards a pause).
    A link's first hop has no ingress before it (the sender's own queue pauses nothing).
    ``xoff(link, prio)`` gives the threshold.

    >>> w = StandingWindow(22_534.0, 6_750_000.0)       # BDP window of a 25 Gb/s, 6.75 us path
    >>> caps = {0: 12.5e-3, 1: 12.5e-3, 2: 3.125e-3}    # bytes/ps: 100, 100, 25 Gb/s
    >>> sorted(pausing_ingresses([[0, 1, 2], [0, 1, 2]], [w, w], [3, 3], [1.5625e-3] * 2, caps,
    ...                          lambda l, p: 56_000.0))
    []
    >>> sorted(pausing_ingresses([[0, 1, 2]] * 6, [w] * 6, [3] * 6, [3.125e-3 / 6] * 6, caps,
    ...                          lambda l, p: 56_000.0))
    [1]
    """
    load: dict[int, float] = {}
    top: dict[tuple[int, int], float] = {}
    for p, r in zip(paths, rates):
        for i, l in enumerate(p):
            load[l] = load.get(l, 0.0) + r
            if i > 0 and r > top.get((p[i - 1], l), 0.0):
                top[p[i - 1], l] = r
    queue: dict[tuple[int, int], float] = {}
    for p, w, prio, r in zip(paths, windows, prios, rates):
        for i in range(1, len(p)):
            k, l = p[i - 1], p[i]
            if load[l] >= capacity[l] * (1 - _REL) and r >= top[k, l] * (1 - _REL):
                q = math.inf if w is None else w.queue_bytes(r, capacity[l])
                if q > 0:
                    key = (k, prio)
                    queue[key] = queue.get(key, 0.0) + q
    return frozenset(k for (k, prio), q in queue.items() if q >= xoff(k, prio))
