"""Where PFC pauses really happen: the standing queue of window-limited flows against XOFF.

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
all, on tests/trial/data7; left out). Every other algorithm (rate-based
DCQCN, loss-based Cubic, delay-based Swift, ECN-based DCTCP) counts as
unbounded: its components keep port fairness and head-of-line blocking.

Left out: transients (start-up bursts), queues an ingress holds for several
egresses of its node (each bottleneck is tested with its own flows' queues
only through their ingress, summed per ingress), the XOFF raised above ECN
Kmax and cut to the shared pool, port fairness at links whose own ingresses
do not pause in a component where some other ingress does.
"""
from __future__ import annotations

import math
from typing import Mapping, NamedTuple, Sequence

from ...network.params import node_overrides
from ...network.pfcxoff import xoff_bytes
from ...units import PS_PER_NS

#: a flow held at a link carries at least this fraction of the largest rate there (float slack)
_REL = 1e-9


class StandingWindow(NamedTuple):
    """The most a flow keeps queued: ``window_bytes - rate x rtt_ps`` (wire bytes, ps)."""

    window_bytes: float   #: in-flight limit, wire bytes (0: the algorithm keeps no standing queue)
    rtt_ps: float         #: base RTT of its path, ps


def standing_window(cc_name: str, cc_params: Mapping, params: Mapping, path) -> StandingWindow | None:
    """The :class:`StandingWindow` of a flow of ``cc_name`` on ``path`` (a
    :class:`netsim.network.path.Path`), ``None`` when its queue is not bounded by a window."""
    rtt_ps = path.base_rtt_ns * PS_PER_NS
    if cc_name == "hpcc":
        return StandingWindow(0.0, rtt_ps)
    if cc_name != "none":
        return None
    w = int((cc_params.get("none") or {}).get("window_bytes", 0) or 0) or int(params.get("window_bytes", 0) or 0)
    if w <= 0:
        w = max(path.bdp_window_bytes, path.mss_bytes)
    return StandingWindow(w * path.mtu_bytes / path.mss_bytes, rtt_ps)


class PauseGate:
    """XOFF of every ingress link and the test of :func:`pausing_ingresses` for the solver.

    ``graph``: the topology; ``link_ids``: ``{(a, b): link id}``; ``params``: resolved network
    parameters (node attributes of the receiving node override them).
    """

    def __init__(self, graph, link_ids: Mapping[tuple, int], params: Mapping):
        self._graph = graph
        self._ends = {l: ab for ab, l in link_ids.items()}
        self._params = params
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
            v = self._xoff[key] = float(xoff_bytes(
                p, delay_ps=int(float(e.get("delay_ns", 0.0)) * PS_PER_NS), rate_bps=float(e["rate_bps"]),
                mtu_bytes=int(p["mtu_bytes"]), prio=prio, switch_ingress=attrs.get("kind") == "switch"))
        return v

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
    standing queue ``window - rate x RTT`` (unbounded for a ``None`` window) then counts
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
        q = math.inf if w is None else w.window_bytes - r * w.rtt_ps
        if q <= 0:
            continue
        for i in range(1, len(p)):
            k, l = p[i - 1], p[i]
            if load[l] >= capacity[l] * (1 - _REL) and r >= top[k, l] * (1 - _REL):
                key = (k, prio)
                queue[key] = queue.get(key, 0.0) + q
    return frozenset(k for (k, prio), q in queue.items() if q >= xoff(k, prio))
