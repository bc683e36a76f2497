"""Path set-up of the flow backend: congestion-control models, routes and per-path constants.

:class:`PathTable` is owned by :class:`~netsim.backends.flow.backend.FlowBackend`
(``backend.paths``) and owns the route lookups, the resolved models and the
path caches.

A flow's constants — wire bytes, ideal FCT, latency term, rate cap, host-stack
cost — depend only on its size, its algorithm and its path's hops (link rates,
delays and kinds; node kinds and NIC kinds), so they are computed once per
(hop signature, size, algorithm) and shared by every path with that signature (one server pair's ECMP paths, every GPU pair of a
regular cluster). Caches are bounded and dropped on link changes.

Left out: multipath (a flow takes one ECMP path; ``routing=spray`` is ECMP),
path MTU discovery (a flow's MTU is its source node's).
"""
from __future__ import annotations

from typing import NamedTuple

from ...network.path import PathModel
from ...units import PS_PER_NS, PS_PER_S
from ...network.ideal import hops
from .ccmodel import CCModel, resolve_model
from .controllers import controller_class
from .settings import PathInfo, ideal_function


class FlowConsts(NamedTuple):
    """Constants of a flow of one size and algorithm on one path (shared by paths alike)."""

    wire_bytes: float   #: bytes on the wire: payload plus headers
    ideal_ns: float     #: ideal FCT (fractional ns), :func:`netsim.network.ideal.ideal_fct_exact_ns`
    latency_ps: float   #: time from fluid completion to delivery (ps), slow start and host stack included
    cap: float          #: per-flow rate cap (bytes/ps; ``inf``: none)


class PathTable:
    """Routes, congestion-control models and per-path constants of one backend.

    ``lid`` maps a directed link ``(a, b)`` to its id and ``cap`` holds the
    directed-link capacities (bytes/ps), both the backend's and read here;
    ``host_stack`` (set by the runtime through the backend) adds its cost to
    the constants. ``pair``: per ``(src, dst)``, the path info of a pair with a
    single path (``None``: several).
    """

    def __init__(self, graph, params: dict, router, cc_params: dict, lid: dict, cap: list[float]):
        self.graph = graph
        self.params = params
        self.router = router
        self.cc_params = cc_params
        self.lid = lid
        self.cap = cap
        self.ideal = ideal_function()
        self.host_stack = None     # netsim.hoststack.HostStack; the runtime sets it (issue 5)
        self.models: dict[str, CCModel] = {}
        self.pair: dict[tuple[str, str], PathInfo | None] = {}
        self._path_info: dict[tuple, PathInfo] = {}
        self._by_hops: dict[tuple, dict] = {}   # hop signature -> per-(size, algorithm) constants
        #: the network layer's path model (path MTU, header, base RTT, host-stack cost)
        self.pathmodel = PathModel(graph, params)

    def forget(self) -> None:
        """Drop every cache derived from link rates or routes (after a link change)."""
        self.pair.clear()
        self._path_info.clear()
        self._by_hops.clear()
        self.pathmodel.invalidate()

    def model(self, name: str) -> CCModel:
        """The :class:`CCModel` of algorithm ``name`` (resolved once) and its default priority."""
        m = self.models.get(name)
        if m is None:
            m = resolve_model(name, self.cc_params)
            if m.dynamic:
                controller_class(name)      # a dynamic model needs its rate controller (else InputError)
            self.models[name] = m
        return m

    def lookup(self, src: str, dst: str, fid: int) -> "PathInfo":
        """Path of a flow and its cached constants (one cache entry per single-path pair)."""
        key = (src, dst)
        if key not in self.pair:
            path = self.router.unique_path(src, dst) if hasattr(self.router, "unique_path") else None
            self.pair[key] = None if path is None else self.info(path)
        info = self.pair[key]
        if info is None:
            info = self.info(tuple(self.router.path(src, dst, fid)))
        return info

    def info(self, path: tuple) -> "PathInfo":
        """Constants of ``path``; paths alike hop by hop — link rates, delays and kinds, node
        kinds and NIC kinds, all that the constants and the host stack's cost read — share
        one per-size cache (one server pair's ECMP paths, every GPU pair of a regular cluster)."""
        info = self._path_info.get(path)
        if info is not None:
            return info
        if len(self._path_info) > 500_000:
            self._path_info.clear()
            self._by_hops.clear()
        lid = self.lid
        links = tuple(lid[(a, b)] for a, b in zip(path, path[1:]))
        pm = self.pathmodel.path(path)      # path MTU (smallest on the path), header, base RTT
        mtu, hdr = pm.mtu_bytes, pm.header_bytes
        rtt = pm.base_rtt_ns * PS_PER_NS
        info = self._path_info[path] = PathInfo(path, links, min(self.cap[l] for l in links), mtu, hdr,
                                                 rtt, self.cap[links[0]])
        g = self.graph
        nodes = g.nodes
        info.switched = any(nodes[n].get("kind") == "switch" for n in path[1:-1])
        sig = (mtu, tuple(hops(g, path)), tuple(g.edges[a, b].get("kind") for a, b in zip(path, path[1:])),
               tuple((nodes[n].get("kind"), nodes[n].get("nic_kind")) for n in path))
        info.shared = self._by_hops.get(sig)
        if info.shared is None:
            info.shared = self._by_hops[sig] = {}
        return info

    def flow_consts(self, info: "PathInfo", size: int, model: CCModel) -> FlowConsts:
        """The :class:`FlowConsts` of a flow of ``size`` on ``info``'s path."""
        key = (size, model.name)
        cache = info.shared
        v = cache.get(key)
        if v is None:
            if len(cache) > 4096:
                cache.clear()
            wire = size * info.mtu / (info.mtu - info.hdr)
            ideal_ns = float(self.ideal(self.graph, list(info.path), size, info.mtu, info.hdr))
            cap = model.rate_cap(info.first_rate)
            lat = max(0.0, ideal_ns * PS_PER_NS - wire / info.bott)
            if model.init_cwnd_pkts:
                # at the lone-flow rate; a flow whose first solve gives it less is corrected then
                lat += model.ramp_ps(wire, min(info.bott, cap), info.rtt, info.mtu)
            if self.host_stack is not None:     # host CPU: per-message delay, per-connection cap (issue 5)
                from ...hoststack import transport_of
                hc = self.pathmodel.host_cost(self.pathmodel.path(info.path), model.name, transport_of(model.name),
                                              self.host_stack)
                bott_bps = info.bott * 8.0 * PS_PER_S
                if hc is not None:
                    lat += hc.overhead_ps
                cap = min(cap, (bott_bps if hc is None else min(bott_bps, hc.cap_bps)) / 8.0 / PS_PER_S)
            v = cache[key] = FlowConsts(wire, ideal_ns, lat, cap)
        return v
