"""Ingress-port fairness: how a lossless (PFC / credit) FIFO network shares a link.

In a lossless network an output queue that fills pauses the *ingress ports*
feeding it (PFC XOFF per ingress port and priority, or credit backpressure on
NVLink/PCIe). Each paused ingress resumes when its own share of the queue has
drained, so a congested output is shared equally among its **ingress ports**,
not among flows; each ingress port's share is then shared among *its* ingress
ports one switch upstream, and so on back to the senders. A flow alone on an
ingress port gets as much as a whole group of flows arriving together on
another port — the well-known PFC "parking lot" unfairness. The packet backend
shows exactly this (incast through two spines: the flows on the less loaded
spine finish first).

Model. At a link ``l``, the flows are arranged in a tree by their path prefix:
children of ``l`` are the distinct previous links of its flows, their
children the links before those, down to the flows (a flow whose first hop is
``l`` is a leaf of the root). The link's capacity is split max-min among the
children by their demand, recursively (hierarchical max-min with demands).
A flow's demand at ``l`` is what its other links and its cap allow it; its rate
is the least of what its links *offer* it (the allocation it would get at a
link if it wanted everything there, the others keeping their demands). The
fixed point is found by repeated rounds in which every link recomputes its
offers from the previous round's offers elsewhere (as distributed max-min
algorithms do), damped (new = 0.7·new + 0.3·old) because the undamped map is
anti-monotone and can settle into a 2-cycle. It converges in tens of rounds on
random cases (checked against exact max-min wherever the trees are flat); if it
does not within ``max_rounds`` the caller falls back to max-min.

When no two flows of a link share their previous link (each tree is flat),
this is exactly max-min fairness, and :func:`is_flat` lets the caller use the
vectorized solver instead.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from .maxmin import maxmin_small

INF = math.inf


def is_flat(paths: Sequence[Sequence[int]]) -> bool:
    """True when port fairness reduces to max-min fairness on these paths.

    At every link, follow the prefix tree down while it has a single child
    (all flows arrived through the same previous link, the same link before
    that, ...); the first node with several children must have only flows as
    children. Then every fairness decision is between single flows.
    """
    seen = set()
    for p in paths:  # quick test: no two flows enter any link from the same previous link
        for i in range(1, len(p)):
            key = (p[i - 1], p[i])
            if key in seen:
                break
            seen.add(key)
        else:
            continue
        break
    else:
        return True
    users: dict[int, list[tuple[int, int]]] = {}
    for f, p in enumerate(paths):
        for i, l in enumerate(p):
            users.setdefault(l, []).append((f, i))
    for u in users.values():
        if len(u) < 2:
            continue
        depth = 1
        members = u
        while True:
            groups: dict = {}
            for f, pos in members:
                key = paths[f][pos - depth] if pos - depth >= 0 else ("leaf", f)
                groups.setdefault(key, []).append((f, pos))
            if len(groups) == 1:
                members = next(iter(groups.values()))
                if len(members) < 2 or all(pos - depth < 0 for _, pos in members):
                    break
                depth += 1
                continue
            if any(len(g) > 1 for g in groups.values()):
                return False
            break
    return True


def may_block(paths: Sequence[Sequence[int]]) -> bool:
    """True when some link carries flows that leave it by different next links.

    Only then can a pause of that link (for one flow held downstream) block
    another flow: the precondition of head-of-line blocking.
    """
    nxt: dict[int, object] = {}
    for p in paths:
        for i, k in enumerate(p):
            succ = p[i + 1] if i + 1 < len(p) else None
            prev = nxt.setdefault(k, succ)
            if prev != succ:
                return True
    return False


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
    """The path-prefix tree of one link.

    ``kids[node]`` lists a node's children: ``("n", node)`` or ``("f", flow)``;
    ``route[flow]`` is the list of ``(node, child position)`` from the root.
    """

    __slots__ = ("paths", "kids", "route", "flows")

    def __init__(self, users: list[tuple[int, int]], paths):
        self.paths = paths
        self.kids: list[list[tuple[str, int]]] = []
        self.route: dict[int, list[tuple[int, int]]] = {}
        self.flows = [f for f, _ in users]
        self._build(users, 0, [])

    def _build(self, members, depth, prefix) -> int:
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
        mine = dem[x] if kind == "f" else nd[x]
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
        budget = left / k
    return budget


def port_fair(paths: Sequence[Sequence[int]], capacity: Mapping[int, float] | Sequence[float],
              cap: Sequence[float], *, max_rounds: int = 300, rel_tol: float = 1e-7,
              damping: float = 0.7, offers: dict | None = None, warm: bool = True) -> tuple[list[float], int]:
    """Ingress-port-fair rates of flows on ``paths`` (link ids into ``capacity``).

    Returns ``(rates, rounds)``; ``rounds = -1`` when the iteration did not
    settle within ``max_rounds`` (the caller should fall back to max-min).

    >>> r, _ = port_fair([[0, 2], [1, 2], [1, 2]], [10.0, 10.0, 10.0], [INF] * 3)  # 2 ports into link 2
    >>> [round(x, 6) for x in r]
    [5.0, 2.5, 2.5]
    >>> r, _ = port_fair([[0, 1], [0], [1]], [1.0, 2.0], [INF] * 3)               # flat: max-min
    >>> [round(x, 6) for x in r]
    [0.5, 0.5, 1.5]
    """
    F = len(paths)
    users: dict[int, list[tuple[int, int]]] = {}
    for f, p in enumerate(paths):
        for i, l in enumerate(p):
            users.setdefault(l, []).append((f, i))
    base = list(cap)
    shared: list[tuple[int, _Tree]] = []
    for l in sorted(users):
        u = users[l]
        if len(u) == 1:
            f = u[0][0]
            c = capacity[l]
            if c < base[f]:
                base[f] = c
        else:
            shared.append((l, _Tree(u, paths)))
    if not shared:
        return base, 0
    if warm:  # start from the max-min rates: port fairness is usually a small correction of them
        r0 = maxmin_small(list(paths), capacity, list(cap))
        off: dict[int, dict[int, float]] = {l: {f: r0[f] for f in t.flows} for l, t in shared}
    else:
        off = {l: {f: INF for f in t.flows} for l, t in shared}
    flow_links: list[list[int]] = [[] for _ in range(F)]
    for l, t in shared:
        for f in t.flows:
            flow_links[f].append(l)
    rates = base[:]
    for rounds in range(1, max_rounds + 1):
        best = [INF] * F
        best_l = [-1] * F
        second = [INF] * F
        for f in range(F):
            for l in flow_links[f]:
                a = off[l][f]
                if a < best[f]:
                    second[f] = best[f]
                    best[f], best_l[f] = a, l
                elif a < second[f]:
                    second[f] = a
        new_off = {}
        for l, tree in shared:
            dem = {}
            for f in tree.flows:
                other = second[f] if best_l[f] == l else best[f]
                dem[f] = base[f] if base[f] < other else other
            nd = _node_demands(tree, dem)
            c = capacity[l]
            alloc = _allocate(tree, c, dem, nd)
            o = {}
            srt: dict = {}
            for f in tree.flows:
                a = alloc[f]
                # a flow held by its demand here may be offered more: ask the tree
                o[f] = _offered(tree, c, dem, nd, f, srt) if a >= dem[f] * (1 - 1e-12) else a
            if rounds > 1 and damping < 1.0:
                prev = off[l]
                for f, v in o.items():
                    o[f] = damping * v + (1.0 - damping) * prev[f]
            new_off[l] = o
        off = new_off
        new_rates = [min([base[f]] + [off[l][f] for l in flow_links[f]]) for f in range(F)]
        done = all(abs(a - b) <= rel_tol * max(abs(b), 1e-300) for a, b in zip(new_rates, rates))
        rates = new_rates
        if done and rounds > 1:
            break
    else:
        rounds = -1
    rates = _feasible(rates, users, capacity)
    if offers is not None:
        offers.update(off)
    return rates, rounds


def port_fair_auto(paths, capacity, cap, *, offers: dict | None = None, fast_rounds: int = 50):
    """:func:`port_fair`, first undamped (converges in a few rounds on the path trees of real
    topologies: ~3x fewer rounds on components from a 256-GPU training step), then, if that
    does not settle within ``fast_rounds``, with the default damping. Same fixed point and
    tolerance either way.
    """
    trial: dict | None = {} if offers is not None else None
    rates, rounds = port_fair(paths, capacity, cap, damping=1.0, max_rounds=fast_rounds, offers=trial)
    if rounds >= 0:
        if offers is not None:
            offers.update(trial)
        return rates, rounds
    return port_fair(paths, capacity, cap, offers=offers)


def _feasible(rates: list[float], users, capacity) -> list[float]:
    """Scale down the flows of any link loaded above capacity (convergence tolerance)."""
    for l, u in users.items():
        load = sum(rates[f] for f, _ in u)
        c = capacity[l]
        if load > c:
            k = c / load
            for f, _ in u:
                rates[f] *= k
    return rates


def hol_capacities(paths: Sequence[Sequence[int]], capacity: Mapping[int, float], rates: Sequence[float],
                   offers: dict[int, dict[int, float]]) -> dict[int, float]:
    """Reduced capacities of ingress links paused by PFC (head-of-line blocking).

    A flow held at a shared link ``l`` (its rate is what ``l`` offers it) keeps
    the ingress ``k`` just before ``l`` paused part of the time; while paused,
    ``k`` carries nothing, for any flow (one FIFO per priority). If ``k`` would
    share its capacity as ``s_f`` among its flows (port-fair, all wanting
    everything), the held flow gets ``rate_f = d·s_f``: ``k`` is on a fraction
    ``d`` of the time, so every flow on ``k`` is limited to ``d·s_f``.
    Returns ``{k: d·C_k}`` for the paused links (empty when none).
    """
    users: dict[int, list[tuple[int, int]]] = {}
    for f, p in enumerate(paths):
        for i, l in enumerate(p):
            users.setdefault(l, []).append((f, i))
    held: dict[int, list[int]] = {}
    for l, per_flow in offers.items():
        for f, o in per_flow.items():
            if o <= rates[f] * (1 + 1e-6):
                i = list(paths[f]).index(l)
                if i >= 1:
                    held.setdefault(paths[f][i - 1], []).append(f)
    out: dict[int, float] = {}
    for k, flows in held.items():
        u = users[k]
        if len(u) < 2:
            continue
        tree = _Tree(u, paths)
        dem = {f: INF for f, _ in u}
        share = _allocate(tree, capacity[k], dem, _node_demands(tree, dem))
        d = min(rates[f] / share[f] for f in flows if share[f] > 0)
        # a victim: a flow on k that gets more than the paused link would let through
        if d < 1.0 - 1e-9 and any(rates[f] > d * share[f] * (1 + 1e-9) for f, _ in u):
            out[k] = capacity[k] * d
    return out


def hol_capacities_flat(paths: Sequence[Sequence[int]], capacity: Mapping[int, float],
                        rates: Sequence[float]) -> dict[int, float]:
    """:func:`hol_capacities` for a flat component solved by max-min.

    There a flow is held at link ``l`` when ``l`` is saturated and no flow on
    ``l`` gets more (the max-min bottleneck condition), and every link shares
    equally among its flows, so no port-fair offers are needed.
    """
    users: dict[int, list[int]] = {}
    for f, p in enumerate(paths):
        for l in p:
            users.setdefault(l, []).append(f)
    held: dict[int, list[int]] = {}
    for l, u in users.items():
        if len(u) < 2:
            continue
        load = sum(rates[f] for f in u)
        if load < capacity[l] * (1 - 1e-9):
            continue
        top = max(rates[f] for f in u)
        for f in u:
            if rates[f] >= top * (1 - 1e-9):
                i = list(paths[f]).index(l)
                if i >= 1:
                    held.setdefault(paths[f][i - 1], []).append(f)
    out: dict[int, float] = {}
    for k, flows in held.items():
        u = users[k]
        if len(u) < 2:
            continue
        share = capacity[k] / len(u)
        d = min(rates[f] for f in flows) / share
        if d < 1.0 - 1e-9 and any(rates[f] > d * share * (1 + 1e-9) for f in u):
            out[k] = capacity[k] * d
    return out
