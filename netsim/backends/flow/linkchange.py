"""Link changes during a flow-backend run (the :mod:`netsim.whatif` protocol): degrade and fail.

Owned by :class:`~netsim.backends.flow.backend.FlowBackend` (``backend.links``): ``set_link_rate``
changes a link's capacity from now on, ``fail_link`` removes it and moves every
flow that crossed it to its new ECMP path. Remaining bytes are advanced at the
old rates first, so the fluid model loses nothing; a DCQCN flow's bytes queued
on the failed path leave the fluid FIFO queues with it.

Left out: bytes in flight on a failed link (a fluid flow has none), routing
convergence time (flows move at the instant of the failure), link recovery.
"""
from __future__ import annotations

from ...errors import InputError
from ...units import PS_PER_S, ps_to_ns
from .settings import PathInfo
from .components import FluidFlow


class LinkChanges:
    """``set_link_rate`` and ``fail_link`` of one flow backend (``backend.links``), which it
    changes: capacities, graph, routes, caches, and the flows on the changed links."""

    def __init__(self, backend):
        self._net = backend
        self._lid_rev: dict | None = None   # link id -> (a, b), built on first use
        #: link changes so far (0: every path and path constant is the one of the run's start)
        self.changes = 0

    def _link_ids(self, a: str, b: str, where: str) -> tuple[int, int]:
        net = self._net
        lab, lba = net.link_ids.get((a, b)), net.link_ids.get((b, a))
        if lab is None or lba is None or not net.graph.has_edge(a, b):
            raise InputError("no such link", where=where, value=f"{a}:{b}")
        return lab, lba

    def _forget_paths(self) -> None:
        """Drop every cache derived from link rates or routes (path constants, solver memo)."""
        net = self._net
        net.paths.forget()
        net.solver.reset_capacities()

    def _repath(self, f: FluidFlow, info: "PathInfo") -> None:
        """Refresh ``f``'s path constants (bottleneck, solo rate, latency) from ``info``."""
        net = self._net
        _, _, lat, _ = net._flow_consts(info, f.size, net.controller(f.cc))
        f.bott = info.bott
        f.solo = info.bott if info.bott < f.cap else f.cap
        f.lat_ps = lat

    def set_link_rate(self, a: str, b: str, rate_bps: float) -> None:
        """Link a–b runs at ``rate_bps`` (both directions) from now on.

        Remaining bytes of every flow are advanced to now at its old rate
        (the fluid network does it when the rate changes), the two directed
        capacities and the graph edge are updated, path constants and memoized
        solutions are dropped, and the components through the link are re-solved
        at this instant. Running flows keep their per-flow cap and ideal FCT;
        their bottleneck and latency term follow the new rate.
        """
        net = self._net
        lab, lba = self._link_ids(a, b, "set_link_rate")
        rate = float(rate_bps)
        if not rate > 0:
            raise InputError("link rate must be positive", where=f"link {a}:{b}", value=rate_bps,
                             accepted="a positive rate in bit/s")
        self.changes += 1
        for ctl in net.controllers.values():
            ctl.catch_up()              # integrate the fluid queues at the old capacity
        net.graph.edges[a, b]["rate_bps"] = rate
        cap = rate / 8.0 / PS_PER_S
        fluid = net.net
        fluid.capacity[lab] = fluid.capacity[lba] = cap
        self._forget_paths()
        seen: set[int] = set()
        for l in (lab, lba):
            for fid, f in fluid.users[l].items():
                if fid not in seen:
                    seen.add(fid)
                    path = tuple([f.src] + [self._dst_of(x) for x in f.links])
                    self._repath(f, net._info(path))
        fluid.mark_dirty((lab, lba))

    def _dst_of(self, l: int) -> str:
        net = self._net
        rev = self._lid_rev
        if rev is None or len(rev) != len(net.link_ids):
            rev = self._lid_rev = {v: k for k, v in net.link_ids.items()}
        return rev[l][1]

    def fail_link(self, a: str, b: str) -> None:
        """Remove link a–b now; every active flow crossing it moves to its new ECMP path.

        The fluid model loses nothing: a rerouted flow keeps its remaining
        bytes (advanced to now at its old rate) and continues on
        ``router.path(src, dst, key)`` (its ECMP key); its latency term follows the new
        path, its ideal FCT stays that of its original path.

        Raises
        ------
        RoutingError
            A running flow's endpoints are no longer connected.
        """
        net = self._net
        from ...errors import RoutingError
        lab, lba = self._link_ids(a, b, "fail_link")
        self.changes += 1
        for ctl in net.controllers.values():
            ctl.catch_up()
        now = net.env.now
        net.graph.remove_edge(a, b)
        net.router.invalidate()
        self._forget_paths()
        fluid = net.net
        users = fluid.users
        moved = sorted({**users[lab], **users[lba]}.items())
        fluid.mark_dirty((lab, lba))
        for fid, f in moved:
            try:
                path = tuple(net.router.path(f.src, f.dst, f.key))   # its ECMP key
            except RoutingError as e:
                raise RoutingError(f"link {a}:{b} failed at {ps_to_ns(now)} ns and flow {fid} "
                                   f"{f.src}->{f.dst} has no path left ({e})") from None
            info = net._info(path)
            if f.ctl is not None:
                f.ctl.detach(f)         # its queued bytes were on the failed path
            fluid.move(f, info.links)   # remaining bytes advanced to now at the old rate first
            if f.ctl is not None:
                f.ctl.attach(f)
            self._repath(f, info)
