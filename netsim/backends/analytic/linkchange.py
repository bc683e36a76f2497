"""Link changes on the analytic backend: re-timing the flows still draining across a changed link.

``set_link_rate`` and ``fail_link`` (:class:`.backend.AnalyticBackend`, the
:mod:`netsim.whatif` protocol) change the graph and forget the cached path
costs; :func:`retime` then takes every flow still draining through its pacing
link whose path crosses the link off its share (its bits left advanced to now
at the old rates), puts it back on its path at the new rates, or on its new
ECMP route after a failure, and re-times the shares it left and joined.

Left out: a flow past its pacing link (only its latency tail left) keeps its
end time; in-flight bits are not lost on a failed link.
"""
from __future__ import annotations

from .contention import LinkLoads
from .sharing import advance


def retime(be, a: str, b: str, *, reroute: bool) -> None:
    """Re-place, on analytic backend ``be``, every draining flow whose path crosses a–b (either
    direction) at ``now``: at its new bottleneck (or on its new route if ``reroute``) with its bits left.

    Left out: a flow past its pacing link (only its latency tail left) keeps its end time.
    """
    now = be.env.now
    hit = {(a, b), (b, a)}
    moved, touched = [], []
    for link, sh in list(be._shares.items()):
        crossing = [f for f in sh.flows if hit.intersection(zip(f.path, f.path[1:]))]
        if not crossing:
            continue
        advance(sh, now)
        for f in crossing:
            LinkLoads.change(f.links, -f.load, now)
        sh.flows = [f for f in sh.flows if f not in crossing]
        moved.extend(crossing)
        touched.append(sh)
    for f in sorted(moved, key=lambda f: f.meta[0]):   # flow-id order: deterministic shares
        src, dst, key = f.meta[1], f.meta[2], f.meta[8]
        path = tuple(be.router.path(src, dst, key)) if reroute else f.path
        be._join(be._flow_on(path, f.meta, f.event, bits_left=f.bits), now)
    for sh in touched:
        be._reschedule(sh)
    for link in [k for k, sh in be._shares.items() if not sh.flows]:
        del be._shares[link]
