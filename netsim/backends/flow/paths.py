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

import math

from ...network.path import PathModel
from ...units import PS_PER_NS
from ...network.ideal import hops
from .ccmodel import CCModel, resolve_model
from .controllers import HostStackController, RateController, controller_class
from .settings import FlowConsts, PathInfo, ideal_function

#: most (src, dst, ECMP key) paths :meth:`PathTable.lookup` keeps (a 16 k-GPU step's DP-ring and
#: all-to-all connections fit; beyond it the cache restarts: the paths are recomputed, not changed)
ECMP_CACHE = 1 << 20


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
        #: (src, dst, ECMP key) -> path info of a multi-path pair: a connection's flows share their key,
        #: so only its first flow walks the router (bounded: cleared at :data:`ECMP_CACHE` entries)
        self._ecmp: dict[tuple, PathInfo] = {}
        #: the network layer's path model (path MTU, header, base RTT, host-stack cost)
        self.pathmodel = PathModel(graph, params)

    def forget(self) -> None:
        """Drop every cache derived from link rates or routes (after a link change)."""
        self.pair.clear()
        self._ecmp.clear()
        self._path_info.clear()
        self._by_hops.clear()
        self.pathmodel.invalidate()

    def model(self, name: str) -> CCModel:
        """The :class:`CCModel` of algorithm ``name`` (resolved once) and its default priority."""
        m = self.models.get(name)
        if m is None:
            m = resolve_model(name, self.cc_params)
            controller_class(m)             # a dynamic model needs its rate controller (else InputError)
            self.models[name] = m
        return m

    def lookup(self, src: str, dst: str, key: int) -> "PathInfo":
        """Path of a flow with ECMP key ``key`` (:mod:`netsim.network.flowkey`) and its cached
        constants (one cache entry per single-path pair)."""
        pair = (src, dst)
        if pair not in self.pair:
            path = self.router.unique_path(src, dst)
            self.pair[pair] = None if path is None else self.info(path)
        info = self.pair[pair]
        if info is None:
            ekey = (src, dst, key)
            info = self._ecmp.get(ekey)
            if info is None:
                ecmp = self._ecmp
                if len(ecmp) >= ECMP_CACHE:
                    ecmp.clear()
                info = ecmp[ekey] = self.info(tuple(self.router.path(src, dst, key)))
        return info

    def info(self, path: tuple) -> "PathInfo":
        """Constants of ``path``; paths alike hop by hop — link rates, delays and kinds, node
        kinds and NIC kinds, all that the constants and the host stack's cost read — share
        one per-size cache (one server pair's ECMP paths, every GPU pair of a regular cluster)."""
        info = self._path_info.get(path)
        if info is not None:
            return info
        if len(self._path_info) > 500_000:
            self._ecmp.clear()
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

    def flow_consts(self, info: "PathInfo", size: int, ctl: RateController) -> FlowConsts:
        """The :class:`FlowConsts` of a flow of ``size`` on ``info``'s path under controller ``ctl``:
        the path's own (wire bytes, ideal FCT, latency = ideal FCT less the bytes' time at the
        bottleneck, no cap) shaped by ``ctl``, then by the host stack when one is set."""
        key = (size, ctl.cc_model.name)
        cache = info.shared
        v = cache.get(key)
        if v is None:
            if len(cache) > 4096:
                cache.clear()
            wire = size * info.mtu / (info.mtu - info.hdr)
            ideal_ns = float(self.ideal(self.graph, list(info.path), size, info.mtu, info.hdr))
            v = FlowConsts(wire, ideal_ns, max(0.0, ideal_ns * PS_PER_NS - wire / info.bott), math.inf)
            v = ctl.shape(info, size, v)
            if self.host_stack is not None:     # host CPU: per-message delay, per-connection cap (issue 5)
                v = HostStackController(self.pathmodel, self.host_stack, ctl.cc_model).shape(info, size, v)
            cache[key] = v
        return v
