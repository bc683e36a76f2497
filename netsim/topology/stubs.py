"""Per-class routing state: a destination's *stub* and the *gate* every outside route passes.

A regular fabric routes every host under one leaf (ToR, rail switch) the
same way until the leaf: the next hops from a spine towards ``s7.gpu3`` are
its next hops towards ``s7.gpu3``'s rail switch. :class:`Stub` records that
fact, exactly, for one destination ``d``, so :class:`~.routing.Router` keeps
one full next-hop row per gate (per leaf) and a few entries per destination
instead of one full row per destination.

Definitions (``H`` is the graph restricted to nodes that may relay — every
kind but the endpoints, :data:`~.schema.ENDPOINT_KINDS` — plus ``d``):

* the **gate** ``t`` of ``d`` is a relaying node without NVLink links such
  that ``d``'s connected component ``C`` of ``H - t`` is small (at most
  :data:`STUB_MAX_NODES` nodes); every route into ``C`` passes ``t``;
* the **stub** ``S = C + {t} + E``, ``E`` the endpoints adjacent to ``C``.

For a node ``u`` outside ``S`` every valid route to ``d`` is a valid route
to ``t`` followed by one from ``t`` to ``d`` (a route leaving ``C`` through
``t`` and re-entering would repeat ``t``), so ``dist(u, d) = dist(u, t) +
dist(t, d)``, ``u`` has no NVLink-only route to ``d`` (it would cross ``t``,
which has no NVLink link), and ``u``'s equal-cost next hops towards ``d`` are
its next hops towards ``t``. Inside ``S`` distances come from a BFS over
``C + {t}`` and, for ``E``, one hop to a neighbour. The gate is found by
growing a region from ``d``, cheapest frontier node first (fewest relaying
neighbours), and keeping the last time the frontier was one node.
Only endpoints (GPUs, hosts) get a stub, so a gate's own row is always a
full one and gates never chain. Left out: gates of more than one node (a dual-homed server is routed per
destination, as before).
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

#: largest region grown behind a destination while looking for its gate, in nodes: a GPU's stub on a
#: DGX-like server is 4 nodes (GPU, NVSwitch, PCIe switch, NIC) and a host's is 1; the search stops as
#: soon as the frontier cannot shrink to one node within this budget (each step removes at most one
#: frontier node), which keeps it cheap at the leaf's fan-out on a 16k-GPU fabric (netsim choice)
STUB_MAX_NODES = 16
UNREACHED = 0xFFFF


@dataclass
class Stub:
    """One destination's gate and the nodes routed by its own (small) tables.

    Attributes
    ----------
    gate : int
        Index of the gate ``t``.
    inner : frozenset of int
        ``C``: the destination's component of ``H - t`` (holds the destination).
    members : frozenset of int
        ``S = C + {t} + E``; nodes outside are routed via the gate's row.
    dist : dict of int to int
        Hop counts to the destination of ``C + {t}`` and of ``E``.
    nvdist : dict of int to int or None
        NVLink-only hop counts to the destination (None: no NVLink links).
    nh : dict of int to tuple
        Next hops of members, filled lazily.
    """

    gate: int
    inner: frozenset
    members: frozenset
    dist: dict = field(default_factory=dict)
    nvdist: dict | None = None
    nh: dict = field(default_factory=dict)


def find_gate(dst: int, adj, nvadj, transit, relay_degree, max_nodes: int = STUB_MAX_NODES
              ) -> tuple[int, frozenset] | None:
    """``(gate, C)`` of destination ``dst``, or None when no gate is found within ``max_nodes``.

    ``relay_degree[v]`` is the number of relaying neighbours of ``v`` (the growth order: cheapest first).
    """
    def relays(v):
        return transit[v] and v != dst

    region, frontier, heap = {dst}, set(), []

    def grow(x):
        region.add(x)
        frontier.discard(x)
        for v in adj[x]:
            if relays(v) and v not in region and v not in frontier:
                frontier.add(v)
                heapq.heappush(heap, (relay_degree[v], v))
    grow(dst)
    best = None
    while frontier and len(frontier) - 1 <= max_nodes - len(region):
        if len(frontier) == 1:
            (t,) = frontier
            if not nvadj[t]:
                best = (t, frozenset(region))
        while heap[0][1] not in frontier:
            heapq.heappop(heap)
        grow(heapq.heappop(heap)[1])
    return best


def _bfs_local(dst: int, adj, transit, allowed) -> dict:
    """Hop counts to ``dst`` over nodes of ``allowed`` (endpoints other than ``dst`` never relay)."""
    dist = {dst: 0}
    q = deque([dst])
    while q:
        u = q.popleft()
        if u != dst and not transit[u]:
            continue
        du = dist[u] + 1
        for v in adj[u]:
            if v not in dist and (allowed is None or v in allowed):
                dist[v] = du
                q.append(v)
    return dist


def make_stub(dst: int, gate: int, inner: frozenset, adj, nvadj, transit, gate_dist, has_nvlink: bool) -> Stub:
    """The :class:`Stub` of ``dst`` behind ``gate``; ``gate_dist`` is the gate's full distance table."""
    region = inner | {gate}
    dist = _bfs_local(dst, adj, transit, region)
    dist = {v: d for v, d in dist.items() if v in region}
    ends = {v for c in inner for v in adj[c] if v != dst and not transit[v] and v not in region}
    through = dist[gate]

    def outside(v):
        g = gate_dist[v]
        return UNREACHED if g == UNREACHED else g + through
    for x in sorted(ends):
        best = min((dist[v] if v in region else outside(v) for v in adj[x] if v == dst or transit[v]),
                   default=UNREACHED)
        dist[x] = UNREACHED if best == UNREACHED else best + 1
    nv = _bfs_local(dst, nvadj, transit, None) if has_nvlink and nvadj[dst] else None
    return Stub(gate, inner, frozenset(region | ends), dist, nv)


def stub_next(stub: Stub, u: int, dst: int, adj, nvadj, transit, gate_dist) -> tuple[int, ...]:
    """Equal-cost next hops of stub member ``u`` towards ``dst`` (the same as a full BFS gives)."""
    if u == dst:
        return ()
    nv, dist, through = stub.nvdist, stub.dist, stub.dist[stub.gate]

    def far(v):
        d = dist.get(v)
        if d is not None:
            return d
        g = gate_dist[v]
        return UNREACHED if g == UNREACHED else g + through
    if nv is not None and u in nv:
        du, cand, val = nv[u], nvadj[u], (lambda v: nv.get(v, UNREACHED))
    else:
        du, cand, val = far(u), adj[u], far
    if du == UNREACHED:
        return ()
    return tuple(v for v in cand if (v == dst or transit[v]) and val(v) == du - 1)
