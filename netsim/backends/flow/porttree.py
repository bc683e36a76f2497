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
path (:func:`flat_offers`).
"""
from __future__ import annotations

import math

INF = math.inf
#: an allocation within this relative distance of the demand counts as demand-held
HELD_TOL = 1e-12


def _waterfill(budget: float, demands: list[float]) -> list[float]:
    """Max-min split of ``budget`` among ``demands``."""
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


class _Tree:
    """The path-prefix tree of one link (single-child chains collapsed).

    ``kids[node]`` lists a node's children: ``("n", node)`` or ``("f", flow)``;
    ``route[flow]`` is the list of ``(node, child position)`` from the root;
    ``flat_flows`` lists the root's flows in child order when every child of
    the root is a flow, else it is ``None``.
    """

    __slots__ = ("paths", "kids", "route", "flows", "flat_flows")

    def __init__(self, users: list[tuple[int, int]], paths):
        self.paths = paths
        self.kids: list[list[tuple[str, int]]] = []
        self.route: dict[int, list[tuple[int, int]]] = {}
        self.flows = [f for f, _ in users]
        self._build(users, 0, [])
        root = self.kids[0]
        self.flat_flows = [x for _, x in root] if all(kind == "f" for kind, _ in root) else None

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


def _node_demands(tree: _Tree, dem) -> list[float]:
    """Total demand of every node (children after parents in ``kids``, so go backwards)."""
    out = [0.0] * len(tree.kids)
    for node in range(len(tree.kids) - 1, -1, -1):
        tot = 0.0
        for kind, x in tree.kids[node]:
            tot += dem[x] if kind == "f" else out[x]
        out[node] = tot
    return out


def _allocate(tree: _Tree, budget: float, dem, nd: list[float]) -> dict[int, float]:
    """Hierarchical max-min split of ``budget`` among the flows (``dem``: flow demands)."""
    out: dict[int, float] = {}
    stack = [(0, budget)]
    while stack:
        node, b = stack.pop()
        kids = tree.kids[node]
        ds = [dem[x] if kind == "f" else nd[x] for kind, x in kids]
        for (kind, x), a in zip(kids, _waterfill(b, ds)):
            if kind == "f":
                out[x] = a
            else:
                stack.append((x, a))
    return out


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


def _offered(tree: _Tree, budget: float, dem, nd: list[float], f: int, sorted_ds: dict) -> float:
    """What flow ``f`` would get at this link if it wanted everything (others keep ``dem``).

    ``sorted_ds`` caches each node's ascending child demands for this round.
    At every node on ``f``'s route the child toward ``f`` asks for everything:
    it gets the water level left after the children asking less are served
    (the others keep their demands), as :func:`_waterfill` would give it.
    """
    for node, pos in tree.route[f]:
        srt = sorted_ds.get(node)
        if srt is None:
            kids = tree.kids[node]
            srt = sorted_ds[node] = sorted(dem[x] if kind == "f" else nd[x] for kind, x in kids)
        kind, x = tree.kids[node][pos]
        budget = _level(budget, srt, dem[x] if kind == "f" else nd[x])
    return budget


def tree_offers(tree: _Tree, budget: float, dem: dict) -> dict[int, float]:
    """Offer of the link to every flow of ``tree``: its allocation, or, when it is held by
    its demand, what it would get if it wanted everything (:func:`_offered`)."""
    nd = _node_demands(tree, dem)
    alloc = _allocate(tree, budget, dem, nd)
    o = {}
    srt: dict = {}
    for f in tree.flows:
        a = alloc[f]
        o[f] = _offered(tree, budget, dem, nd, f, srt) if a >= dem[f] * (1 - HELD_TOL) else a
    return o


def flat_offers(budget: float, flows: list[int], ds: list[float]) -> dict[int, float]:
    """:func:`tree_offers` for a flat tree: ``flows`` in child order, ``ds`` their demands.

    Same arithmetic as the general case (one water-filling, one level per
    distinct demand of a demand-held flow).
    """
    n = len(ds)
    order = sorted(range(n), key=ds.__getitem__)
    srt = [ds[i] for i in order]
    o = {}
    levels: dict[float, float] = {}
    left = budget
    k = n
    for i in order:
        d = ds[i]
        share = left / k
        a = d if d < share else share
        left -= a
        k -= 1
        if a >= d * (1 - HELD_TOL):
            a = levels.get(d)
            if a is None:
                a = levels[d] = _level(budget, srt, d)
        o[flows[i]] = a
    return o


class PortProblem:
    """The link structure of one set of paths, shared by the port-fair steps.

    ``users[l]`` lists ``(flow, position of l in its path)``; ``pair_links``
    are the links entered by two flows from the same previous link (only
    their trees can be non-flat); prefix trees are built on first use and
    kept, so the port-fair solves (before and after head-of-line blocking)
    and the pause computation build each tree once.
    """

    __slots__ = ("paths", "pair_links", "_users", "_trees")

    def __init__(self, paths):
        self.paths = paths
        seen = set()
        pair = set()
        for p in paths:
            for i in range(1, len(p)):
                key = (p[i - 1], p[i])
                if key in seen:
                    pair.add(p[i])
                else:
                    seen.add(key)
        self.pair_links = pair
        self._users: dict[int, list[tuple[int, int]]] | None = None
        self._trees: dict[int, _Tree] = {}

    @property
    def users(self) -> dict[int, list[tuple[int, int]]]:
        """``{link: [(flow, position of the link in its path), ...]}`` (built on first use)."""
        if self._users is None:
            users: dict[int, list[tuple[int, int]]] = {}
            for f, p in enumerate(self.paths):
                for i, l in enumerate(p):
                    u = users.get(l)
                    if u is None:
                        users[l] = [(f, i)]
                    else:
                        u.append((f, i))
            self._users = users
        return self._users

    def tree(self, l: int) -> _Tree:
        """Prefix tree of link ``l`` (built once)."""
        t = self._trees.get(l)
        if t is None:
            users = self._users if self._users is not None else self.users
            t = self._trees[l] = _Tree(users[l], self.paths)
        return t

    @property
    def flat(self) -> bool:
        """True when every link's tree is flat: port fairness is then max-min fairness."""
        if not self.pair_links:
            return True
        users = self.users
        return all(self._branches_to_flows(users[l]) for l in self.pair_links)

    def _branches_to_flows(self, members: list[tuple[int, int]]) -> bool:
        """True when the first branching of a link's prefix tree (``members``: its users)
        has only flows as children, i.e. the link's tree is flat (without building it)."""
        paths = self.paths
        depth = 1
        while True:
            first = -1
            for f, pos in members:
                i = pos - depth
                if i < 0:
                    break                    # a flow starts here: the tree branches
                k = paths[f][i]
                if first < 0:
                    first = k
                elif k != first:
                    break
            else:
                depth += 1                   # all came through one previous link: go one deeper
                continue
            keys = [paths[f][pos - depth] for f, pos in members if pos >= depth]
            return len(set(keys)) == len(keys)
