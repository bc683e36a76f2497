"""Link changes during a flow-backend run (the :mod:`netsim.whatif` protocol): degrade and fail.

A mixin of :class:`~netsim.backends.flow.backend.FlowBackend`: ``set_link_rate``
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


class LinkChangeMixin:
    """``set_link_rate`` and ``fail_link`` of the flow backend."""

    def _link_ids(self, a: str, b: str, where: str) -> tuple[int, int]:
        lab, lba = self._lid.get((a, b)), self._lid.get((b, a))
        if lab is None or lba is None or not self.graph.has_edge(a, b):
            raise InputError("no such link", where=where, value=f"{a}:{b}")
        return lab, lba

    def _forget_paths(self) -> None:
        """Drop every cache derived from link rates or routes (path constants, solver memo)."""
        self.paths.forget()
        self.solver.reset_capacities()

    def _repath(self, f: FluidFlow, info: "PathInfo") -> None:
        """Refresh ``f``'s path constants (bottleneck, solo rate, latency) from ``info``."""
        _, _, lat, _ = self._flow_consts(info, f.size, self._model(f.cc))
        f.bott = info.bott
        f.solo = info.bott if info.bott < f.cap else f.cap
        f.lat_ps = lat

    def set_link_rate(self, a: str, b: str, rate_bps: float) -> None:
        """Link a–b runs at ``rate_bps`` (both directions) from now on.

        Remaining bytes of every flow are advanced to now at its old rate
        (:meth:`_apply` does it when the rate changes), the two directed
        capacities and the graph edge are updated, path constants and memoized
        solutions are dropped, and the components through the link are re-solved
        at this instant. Running flows keep their per-flow cap and ideal FCT;
        their bottleneck and latency term follow the new rate.
        """
        lab, lba = self._link_ids(a, b, "set_link_rate")
        rate = float(rate_bps)
        if not rate > 0:
            raise InputError("link rate must be positive", where=f"link {a}:{b}", value=rate_bps,
                             accepted="a positive rate in bit/s")
        self.dcqcn.catch_up()            # integrate the fluid queues at the old capacity
        self.graph.edges[a, b]["rate_bps"] = rate
        cap = rate / 8.0 / PS_PER_S
        self._cap[lab] = self._cap[lba] = cap
        self._forget_paths()
        seen: set[int] = set()
        for l in (lab, lba):
            for fid, f in self._users[l].items():
                if fid not in seen:
                    seen.add(fid)
                    path = tuple([f.src] + [self._dst_of(x) for x in f.links])
                    self._repath(f, self._info(path))
        self._dirty.update((lab, lba))
        self._request_settle()

    def _dst_of(self, l: int) -> str:
        rev = getattr(self, "_lid_rev", None)
        if rev is None or len(rev) != len(self._lid):
            rev = self._lid_rev = {v: k for k, v in self._lid.items()}
        return rev[l][1]

    def fail_link(self, a: str, b: str) -> None:
        """Remove link a–b now; every active flow crossing it moves to its new ECMP path.

        The fluid model loses nothing: a rerouted flow keeps its remaining
        bytes (advanced to now at its old rate) and continues on
        ``router.path(src, dst, flow_id)``; its latency term follows the new
        path, its ideal FCT stays that of its original path.

        Raises
        ------
        RoutingError
            A running flow's endpoints are no longer connected.
        """
        from ...errors import RoutingError
        lab, lba = self._link_ids(a, b, "fail_link")
        self.dcqcn.catch_up()
        now = self.env.now
        self.graph.remove_edge(a, b)
        self.router.invalidate()
        self._forget_paths()
        users = self._users
        moved = sorted({**users[lab], **users[lba]}.items())
        dirty = self._dirty
        dirty.update((lab, lba))
        for fid, f in moved:
            try:
                path = tuple(self.router.path(f.src, f.dst, fid))
            except RoutingError as e:
                raise RoutingError(f"link {a}:{b} failed at {ps_to_ns(now)} ns and flow {fid} "
                                   f"{f.src}->{f.dst} has no path left ({e})") from None
            info = self._info(path)
            if f.rate > 0.0:             # advance to now at the old rate before the links change
                f.rem -= f.rate * (now - f.t_upd)
            f.t_upd = now
            if f.rp is not None:
                self.dcqcn.detach(f)     # its queued bytes were on the failed path
            for l in f.links:
                del users[l][fid]
            dirty.update(f.links)
            f.links = info.links
            for l in f.links:
                users[l][fid] = f
            dirty.update(f.links)
            if f.rp is not None:
                self.dcqcn.attach(f)
            self._repath(f, info)
        self._request_settle()
