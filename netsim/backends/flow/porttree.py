"""Path-prefix trees of one link and the water-filling on them (port fairness, :mod:`.portfair`).

At a link ``l`` the flows are arranged by their path prefix: the children of
``l`` are the distinct previous links of its flows, their children the links
before those, down to the flows. The link's capacity is split max-min among
the children by their demand, recursively. All rates here are in the unit of
the capacities given (the flow backend uses bytes/ps).

A node with a single child node passes its whole budget on when computing
offers and ``min(demand, budget)`` when allocating, so chains of single
children are collapsed when the tree is built: the offers are unchanged, the
allocations only differ by float rounding where a flow gets its whole demand.
A tree whose root has only flows as children is *flat* and has a faster
path (:func:`.flatoffer.flat_offer_list`). :func:`tree_offer_list` gives the
offers (by flow position, as the round loop :mod:`.portround` keeps the
demands); :func:`tree_allocation` the split itself (the head-of-line pass,
:mod:`.hol`, reads it). Left out: weights, and trees of more than one link
(each link's tree is split on its own).
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

INF = math.inf
#: :func:`tree_offer_list` results kept per :class:`OfferCache` (cleared when full)
OFFER_CACHE = 16_384
#: an allocation within this relative distance of the demand counts as demand-held
HELD_TOL = 1e-12
_KEEP = 1 - HELD_TOL


def split_one_link(budget: float, demands: list[float]) -> list[float]:
    """Max-min split of ``budget`` among ``demands``: the one-link case of max-min fairness.

    The allocation is that of :func:`.maxmin.maxmin_csr` on a single link of
    capacity ``budget`` crossed by flows capped at ``demands`` (the one-link
    case has a closed form: serve the demands in ascending order, each its
    demand or an equal share of what is left, whichever is less; tested equal
    to :func:`.maxmin.maxmin_csr` in ``tests/backends/flow``). It is kept as
    its own function, not a call to the vectorized solver, because it runs at
    every node of a prefix tree in the port-fair rounds (a handful of children
    each), where numpy's per-call overhead would be most of the cost.
    """
    n = len(demands)
    out = [0.0] * n
    left = budget
    k = n
    for i in sorted(range(n), key=demands.__getitem__):
        share = left / k
        d = demands[i]
        a = d if d < share else share
        out[i] = a
        left -= a
        k -= 1
    return out


class OfferCache:
    """Offers already computed, by tree shape, budget and demands: one per solver (instance
    state; no module global holds simulation state). Shapes are numbered by the cache, so
    trees built for different problems but alike share results."""

    __slots__ = ("offers", "_shapes", "_numbers")

    def __init__(self):
        self.offers: dict = {}       # (tree shape, budget, *demands) -> offers
        self._shapes: dict = {}      # compiled tree (tuple of tuples) -> shape number
        self._numbers = itertools.count()

    def shape(self, key: tuple) -> int:
        """The shape number of the compiled tree ``key`` (numbers are never reused)."""
        shape = self._shapes.get(key)
        if shape is None:
            if len(self._shapes) >= OFFER_CACHE:
                self._shapes.clear()          # (numbers are never reused: no stale match)
            shape = self._shapes[key] = next(self._numbers)
        return shape


class _Tree:
    """The path-prefix tree of one link (single-child chains collapsed).

    ``kids[node]`` lists a node's children: ``("n", node)`` or ``("f", flow)``;
    ``route[flow]`` is the list of ``(node, child position)`` from the root;
    ``flat_flows`` lists the root's flows in child order when every child of
    the root is a flow, else it is ``None``.
    """

    __slots__ = ("paths", "kids", "route", "flows", "flat_flows", "cache", "_compiled")

    def __init__(self, users: list[tuple[int, int]], paths, cache: OfferCache | None = None):
        self.paths = paths
        self.cache = cache if cache is not None else OfferCache()
        self.kids: list[list[tuple[str, int]]] = []
        self.route: dict[int, list[tuple[int, int]]] = {}
        self.flows = [f for f, _ in users]
        self._build(users, 0, [])
        root = self.kids[0]
        self.flat_flows = [x for _, x in root] if all(kind == "f" for kind, _ in root) else None
        self._compiled = None

    def compiled(self) -> tuple[list[list[int]], list[list[tuple[int, int]]], int]:
        """``(kids, routes, shape)`` by flow position (built once): ``kids[node]`` lists a
        node's children as ``i >= 0`` for the flow ``flows[i]`` or ``~child`` for a node;
        ``routes[i]`` is the route of ``flows[i]``; ``shape`` numbers the distinct ``kids``
        (which fix the routes), so trees of one shape share :func:`tree_offer_list` results."""
        c = self._compiled
        if c is None:
            at = {f: i for i, f in enumerate(self.flows)}
            kids = [[at[x] if kind == "f" else ~x for kind, x in ks] for ks in self.kids]
            key = tuple(map(tuple, kids))
            shape = self.cache.shape(key)
            c = self._compiled = kids, [self.route[f] for f in self.flows], shape
        return c

    def _common_depth(self, members, depth: int) -> int:
        """Deepest ``depth`` at which all ``members`` still came through one previous link."""
        paths = self.paths
        while True:
            first = None
            for f, pos in members:
                i = pos - depth - 1
                if i < 0:
                    return depth
                k = paths[f][i]
                if first is None:
                    first = k
                elif k != first:
                    return depth
            depth += 1

    def _build(self, members, depth, prefix) -> int:
        depth = self._common_depth(members, depth)
        node = len(self.kids)
        kids: list[tuple[str, int]] = []
        self.kids.append(kids)
        groups: dict = {}
        for f, pos in members:
            if pos - depth - 1 < 0:
                self.route[f] = prefix + [(node, len(kids))]
                kids.append(("f", f))
            else:
                groups.setdefault(self.paths[f][pos - depth - 1], []).append((f, pos))
        for key in sorted(groups):
            g = groups[key]
            if len(g) == 1:
                self.route[g[0][0]] = prefix + [(node, len(kids))]
                kids.append(("f", g[0][0]))
            else:
                pos_here = len(kids)
                kids.append(("n", -1))
                child = self._build(g, depth + 1, prefix + [(node, pos_here)])
                kids[pos_here] = ("n", child)
        return node


def _level(budget: float, srt: list[float], mine: float) -> float:
    """Water level one child of demand ``mine`` gets when it asks for everything.

    ``srt`` are the ascending demands of all children of the node (``mine``
    among them); the others keep their demands.
    """
    k = len(srt)
    left = budget
    skipped = False
    for d in srt:
        if d == INF:
            break
        if not skipped and d == mine:
            skipped = True          # this child: it asks for everything now
            continue
        share = left / k
        if d >= share:
            break                    # every remaining child is held by the level
        left -= d
        k -= 1
    return left / k


def tree_offer_list(tree: _Tree, budget: float, ds: list[float]) -> Sequence[float]:
    """Offer of the link to every flow of ``tree``: ``ds[i]`` is the demand of
    ``tree.flows[i]``, and so is the offer returned (a list or tuple, not to be modified).

    A flow's offer is its allocation in the hierarchical max-min split of ``budget``
    (:func:`tree_allocation`), or, when it is held by its demand, what it would get if it
    wanted everything, the others keeping their demands: at every node on its route the
    child toward it gets the water level left after the children asking less are served
    (:func:`_level`). Each water level is computed once: the budget reaching a node is the
    same on every route through it, so a level depends only on the node and the demand of
    the child asking.

    Results are kept in the tree's :class:`OfferCache` by shape, budget and demands
    (:data:`OFFER_CACHE` of them): the
    components of a collective repeat the same trees and rates. Not when the budget or a
    demand is zero, the only values that compare equal with different bits (±0).
    """
    kids, routes, shape = tree.compiled()
    offers = tree.cache.offers
    key = (shape, budget, *ds)
    o = offers.get(key)
    if o is not None:
        return o
    if budget == 0.0 or 0.0 in ds:
        return _tree_offer_list(kids, routes, budget, ds)
    if len(offers) >= OFFER_CACHE:
        offers.clear()
    o = offers[key] = tuple(_tree_offer_list(kids, routes, budget, ds))   # (floats only: untracked by gc)
    return o


def tree_allocation(tree: _Tree, budget: float, ds: list[float]) -> list[float]:
    """Hierarchical max-min split of ``budget`` among the flows of ``tree`` (``ds[i]``: the
    demand of ``tree.flows[i]``; the result by the same positions): every node splits what
    reaches it among its children by their demands (:func:`split_one_link`), a node's demand
    being the sum of its children's."""
    return _allocation(tree.compiled()[0], budget, ds)[0]


def _allocation(kids: list[list[int]], budget: float, ds: list[float]) -> tuple[list[float], list]:
    """:func:`tree_allocation` on the compiled tree ``kids``; also, per node, the demands of
    its children."""
    n = len(kids)
    nd = [0.0] * n                   # per node: its demand (the root's total is not needed)
    for node in range(n - 1, 0, -1):
        tot = 0.0
        for x in kids[node]:
            tot += ds[x] if x >= 0 else nd[~x]
        nd[node] = tot
    alloc = [0.0] * len(ds)
    dems: list = [None] * n          # per node: the demands of its children
    stack = [(0, budget)]
    while stack:
        node, b = stack.pop()
        ks = kids[node]
        d = dems[node] = [ds[x] if x >= 0 else nd[~x] for x in ks]
        for x, a in zip(ks, split_one_link(b, d)):
            if x >= 0:
                alloc[x] = a
            else:
                stack.append((~x, a))
    return alloc, dems


def _tree_offer_list(kids: list[list[int]], routes: list, budget: float, ds: list[float]) -> list[float]:
    """:func:`tree_offer_list` on the compiled tree ``kids``, ``routes`` (no cache)."""
    alloc, dems = _allocation(kids, budget, ds)
    srt: dict = {}
    levels: dict = {}
    for i, a in enumerate(alloc):
        if a >= ds[i] * _KEEP:       # held by its demand: the level if it asked for everything
            a = budget
            for node, pos in routes[i]:
                mine = dems[node][pos]
                key = (node, mine)
                v = levels.get(key)
                if v is None:
                    s = srt.get(node)
                    if s is None:
                        s = srt[node] = sorted(dems[node])
                    v = levels[key] = _level(a, s, mine)
                a = v
            alloc[i] = a
    return alloc
