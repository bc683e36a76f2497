"""Routing: shortest paths by hop count, ECMP over all equal-hop paths.

Modelled:

* a route's intermediate nodes are never ``gpu`` or ``host`` nodes (they are
  endpoints only); every other kind (nic, nvswitch, pcie_switch, switch) may
  transit — except that a graph with attribute ``gpu_forwarding: True``
  (GPU-to-GPU rings, meshes and tori, :mod:`.directbuilders`; off by default,
  as NCCL does not forward through GPUs on switched fabrics) lets routes
  transit GPUs too;
* GPU-to-GPU traffic that can stay on NVLink does (as NCCL does): when the
  destination GPU is reachable from a node over NVLink edges only (through
  NVSwitches, never through another GPU), the route from that node takes the
  shortest NVLink-only path, else the shortest path over all links;
* ECMP: :meth:`Router.path` picks one equal-hop path per flow by hashing
  ``(src, dst, key, seed)`` with CRC-32 — ``key`` is the flow's ECMP key,
  the same on every backend (:mod:`netsim.network.flowkey`) — then at each branching hop
  mixing in the CRC-32 of the hop's name through MurmurHash3's ``fmix32``
  finalizer (per-switch hashing: no polarization between tiers);
  :meth:`Router.next_hops` gives every equal-cost next hop for per-packet
  spraying (``routing=spray``).

Speed: one BFS per destination, lazily, on an integer-indexed adjacency;
distances kept in compact arrays. Per class (``per_class=True``, the
default): a destination behind a gate (its leaf/rail switch, :mod:`.stubs`)
keeps next hops for its few stub nodes only, every other node uses the
gate's row — exactly the same paths, with one full row per leaf instead of
per destination, so a 16k-GPU fabric routes in seconds and well under 4 GiB.
Call :meth:`Router.invalidate` after editing the graph (link removal).
A path's links, bottleneck rate and propagation delay are :mod:`.paths`. Left out: weighted (non hop-count) costs,
adaptive routing, NCCL's PXN (relaying across rails through another GPU).
"""
from __future__ import annotations

import zlib
from array import array
from typing import Hashable

import networkx as nx
import numpy as np

from ..errors import RoutingError
from .bfs import csr, hop_counts
from .schema import ENDPOINT_KINDS
from .stubs import STUB_MAX_NODES, find_gate, make_stub, stub_next

_UNREACHED = 0xFFFF
_M32 = 0xFFFFFFFF


def _fmix32(h: int) -> int:
    """MurmurHash3's 32-bit finalizer: full avalanche (CRC-32 alone is affine, so seeds would only XOR-permute)."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


MODES = ("ecmp", "spray")


def relay_kinds(graph) -> frozenset:
    """Endpoint kinds routes may transit: ``gpu`` with ``gpu_forwarding``, ``host`` with ``host_forwarding``."""
    return frozenset(k for k, flag in (("gpu", "gpu_forwarding"), ("host", "host_forwarding"))
                     if graph.graph.get(flag, False))


class Router:
    """Hop-count shortest-path router with ECMP.

    Parameters
    ----------
    graph : networkx.Graph
        A validated topology.
    seed : int
        Mixed into the ECMP hash.
    mode : str
        ``"ecmp"`` (one path per flow) or ``"spray"`` (the backend sprays
        packets with :meth:`next_hops`; :meth:`path` still gives the flow's
        ECMP path, e.g. for its ideal FCT).
    per_class : bool
        Share next-hop rows between destinations behind the same gate
        (:mod:`.stubs`; same paths, less state). False: one row per
        destination (the reference the per-class tables are tested against).

    Examples
    --------
    >>> from netsim.topology.builders import leaf_spine
    >>> r = Router(leaf_spine(2, 2, 2))
    >>> r.paths("h0", "h2")
    [('h0', 'leaf0', 'spine0', 'leaf1', 'h2'), ('h0', 'leaf0', 'spine1', 'leaf1', 'h2')]
    >>> r.next_hops("leaf0", "h2")
    ('spine0', 'spine1')
    """

    def __init__(self, graph: nx.Graph, seed: int = 0, mode: str = "ecmp", per_class: bool = True):
        if mode not in MODES:
            raise RoutingError(f"unknown routing mode {mode!r}; expected one of {', '.join(MODES)}")
        self.graph = graph
        self.seed = int(seed)
        self.mode = mode
        self.per_class = bool(per_class)
        self.invalidate()

    # -- index -------------------------------------------------------------------------------------
    def invalidate(self) -> None:
        """Forget every cached route; call after the graph's nodes or links change."""
        g = self.graph
        self._names: list = sorted(g.nodes, key=str)
        self._idx: dict = {n: i for i, n in enumerate(self._names)}
        idx = self._idx
        self._ncrc = [zlib.crc32(str(n).encode()) for n in self._names]
        relay = relay_kinds(g)
        self._transit = [g.nodes[n].get("kind") not in ENDPOINT_KINDS - relay for n in self._names]
        self._adj: list[tuple[int, ...]] = []
        self._nvadj: list[tuple[int, ...]] = []
        for n in self._names:
            nbrs = sorted((idx[m] for m in g[n]))
            self._adj.append(tuple(nbrs))
            self._nvadj.append(tuple(m for m in nbrs if g.edges[n, self._names[m]].get("kind") == "nvlink"))
        self._has_nvlink = any(self._nvadj)
        self._transit_np = np.array(self._transit, dtype=bool)
        self._csrs: dict = {}
        self._relay_degree = [sum(1 for v in a if self._transit[v]) for a in self._adj]
        self._dist: dict[int, array] = {}
        self._nvdist: dict[int, array | None] = {}
        self._nh: dict[int, list] = {}
        self._intern: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._stubs: dict = {}

    def _bfs(self, dst: int, adj) -> array:
        """Hop counts to ``dst`` over ``adj`` (the full or the NVLink adjacency; :func:`.bfs.hop_counts`)."""
        key = id(adj)
        if key not in self._csrs:
            self._csrs[key] = csr(adj)
        return hop_counts(dst, *self._csrs[key], self._transit_np, _UNREACHED)

    def _tables(self, dst: int) -> tuple[array, array | None]:
        dist = self._dist.get(dst)
        if dist is None:
            dist = self._dist[dst] = self._bfs(dst, self._adj)
            nv = None
            if self._has_nvlink and self._nvadj[dst]:
                nv = self._bfs(dst, self._nvadj)
            self._nvdist[dst] = nv
        return dist, self._nvdist[dst]

    def _stub(self, dst: int):
        """The destination's :class:`~.stubs.Stub` (None: routed by its own full row)."""
        try:
            return self._stubs[dst]
        except KeyError:
            pass
        # endpoints only: a gate is a relaying node, so its own row is full and gates never chain
        found = None
        if self.per_class and not self._transit[dst]:
            found = find_gate(dst, self._adj, self._nvadj, self._transit, self._relay_degree, STUB_MAX_NODES)
        stub = None
        if found is not None:
            gate, inner = found
            stub = make_stub(dst, gate, inner, self._adj, self._nvadj, self._transit, self._tables(gate)[0],
                             self._has_nvlink)
        self._stubs[dst] = stub
        return stub

    def _next(self, u: int, dst: int) -> tuple[int, ...]:
        stub = self._stubs[dst] if dst in self._stubs else self._stub(dst)
        if stub is not None:
            if u not in stub.members:
                return self._next(u, stub.gate)
            nh = stub.nh.get(u)
            if nh is None:
                nh = stub_next(stub, u, dst, self._adj, self._nvadj, self._transit, self._dist[stub.gate])
                nh = stub.nh[u] = self._intern.setdefault(nh, nh)
            return nh
        row = self._nh.get(dst)
        if row is None:
            row = self._nh[dst] = [None] * len(self._names)
        nh = row[u]
        if nh is not None:
            return nh
        dist, nv = self._tables(dst)
        if nv is not None and nv[u] != _UNREACHED and u != dst:
            d, adj, table = nv[u], self._nvadj[u], nv
        else:
            d, adj, table = dist[u], self._adj[u], dist
        if d == _UNREACHED or u == dst:
            nh = ()
        else:
            transit = self._transit
            nh = tuple(v for v in adj if table[v] == d - 1 and (v == dst or transit[v]))
        nh = row[u] = self._intern.setdefault(nh, nh)  # share identical tuples across destinations
        return nh

    def _index(self, node: Hashable) -> int:
        try:
            return self._idx[node]
        except KeyError:
            raise RoutingError(f"unknown node {node!r}: not in the topology") from None

    def _check(self, src, dst) -> tuple[int, int]:
        s, d = self._index(src), self._index(dst)
        if s == d:
            raise RoutingError(f"no route from {src!r} to itself")
        if not self._next(s, d):
            failed = self.graph.graph.get("failed_links")
            if failed:          # a what-if failure cut the pair: name it (netsim.whatif records them)
                raise RoutingError(f"{'; '.join(failed)}: destination {dst!r} unreachable from {src!r} after "
                                   "the link failed; expected a failure that leaves every communicating pair "
                                   "a route (fail a fabric link, or degrade this one instead)")
            raise RoutingError(f"destination {dst!r} unreachable from {src!r} "
                               "(no path whose intermediate nodes are all switches/NICs/NVSwitches/PCIe switches"
                               + ("" if self.graph.graph.get("gpu_forwarding") else
                                  "; GPUs linked to each other need the topology's gpu_forwarding: true") + ")")
        return s, d

    # -- public API --------------------------------------------------------------------------------
    def next_hops(self, node: Hashable, dst: Hashable) -> tuple:
        """All equal-cost next hops from ``node`` towards ``dst`` (sorted; empty if none)."""
        names = self._names
        return tuple(names[v] for v in self._next(self._index(node), self._index(dst)))

    def distance(self, src: Hashable, dst: Hashable) -> int:
        """Hop count of the route from ``src`` to ``dst`` (links)."""
        s, d = self._check(src, dst)
        n = 0
        while s != d:
            s = self._next(s, d)[0]
            n += 1
        return n

    def path(self, src: Hashable, dst: Hashable, key=0) -> tuple:
        """The flow's ECMP path ``(src, ..., dst)``; deterministic in (src, dst, key, seed).

        ``key`` is the flow's ECMP key: what the backends route with is
        :meth:`netsim.network.flowkey.FlowKeys.key` (``fct.csv``'s ``path_key``), the key of the
        flow's connection (src, dst, job, communicator, channel), so all flows of one connection
        take one path.

        Raises
        ------
        RoutingError
            Unknown node, ``src == dst`` or unreachable destination.
        """
        s, d = self._check(src, dst)
        names, ncrc = self._names, self._ncrc
        h = zlib.crc32(f"{src}|{dst}|{key}|{self.seed}".encode())
        out = [names[s]]
        # the hops of _next, resolved once per path: outside d's stub a node's next hops are the
        # gate's row (the same tuples _next returns); inside it, the stub's own entries
        stub = self._stubs[d]                      # set by _check's _next(s, d)
        target, members, snh = (d, (), None) if stub is None else (stub.gate, stub.members, stub.nh)
        rows, nxt = self._nh, self._next
        row = rows.get(target)
        u = s
        while u != d:
            if u in members:
                nh = snh.get(u)
                if nh is None:
                    nh = nxt(u, d)
            else:
                nh = row[u] if row is not None else None
                if nh is None:
                    nh = nxt(u, target)
                    row = rows.get(target)
            if not nh:  # pragma: no cover - guarded by _check
                raise RoutingError(f"destination {dst!r} unreachable from {src!r}")
            if len(nh) == 1:
                u = nh[0]
            else:
                u = nh[_fmix32(h ^ ncrc[u]) % len(nh)]
            out.append(names[u])
        return tuple(out)

    def unique_path(self, src: Hashable, dst: Hashable) -> tuple | None:
        """The route from ``src`` to ``dst`` when it is the only equal-cost one, else ``None``.

        One walk along the next hops: a route that never branches is the only
        shortest route (cheaper than :meth:`paths` with ``limit=2``).

        Raises
        ------
        RoutingError
            Unknown node, ``src == dst`` or unreachable destination.

        Examples
        --------
        >>> from netsim.topology.builders import leaf_spine
        >>> r = Router(leaf_spine(2, 2, 2))
        >>> r.unique_path("h0", "h1"), r.unique_path("h0", "h2")
        (('h0', 'leaf0', 'h1'), None)
        """
        s, d = self._check(src, dst)
        names = self._names
        out = [names[s]]
        while s != d:
            nh = self._next(s, d)
            if len(nh) != 1:
                return None
            s = nh[0]
            out.append(names[s])
        return tuple(out)

    def paths(self, src: Hashable, dst: Hashable, limit: int = 100_000) -> list[tuple]:
        """Every equal-cost path from ``src`` to ``dst``, sorted (at most ``limit``)."""
        s, d = self._check(src, dst)
        names = self._names
        out: list[tuple] = []
        stack: list[tuple[int, tuple[int, ...]]] = [(s, (s,))]
        while stack and len(out) < limit:
            u, p = stack.pop()
            if u == d:
                out.append(tuple(names[i] for i in p))
                continue
            for v in reversed(self._next(u, d)):
                stack.append((v, p + (v,)))
        return sorted(out, key=lambda p: tuple(map(str, p)))
