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
vectorized solver instead. The trees and the water-filling on them are in
:mod:`.porttree`; a :class:`~.porttree.PortProblem` holds them for one
component so that the flatness test, both solves (before and after head-of-
line blocking) and :func:`hol_capacities` share them.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from .maxmin import maxmin_small
from .porttree import (INF, PortProblem, _allocate, _node_demands, _offered, _Tree,  # noqa: F401 (re-exported)
                       _waterfill, flat_offers, tree_offers)


def is_flat(paths: Sequence[Sequence[int]]) -> bool:
    """True when port fairness reduces to max-min fairness on these paths.

    At every link, follow the prefix tree down while it has a single child
    (all flows arrived through the same previous link, the same link before
    that, ...); the first node with several children must have only flows as
    children. Then every fairness decision is between single flows.
    """
    return PortProblem(paths).flat


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


def port_fair(paths: Sequence[Sequence[int]], capacity: Mapping[int, float] | Sequence[float],
              cap: Sequence[float], *, max_rounds: int = 300, rel_tol: float = 1e-7,
              damping: float = 0.7, offers: dict | None = None, warm: bool = True,
              problem: PortProblem | None = None) -> tuple[list[float], int]:
    """Ingress-port-fair rates of flows on ``paths`` (link ids into ``capacity``).

    Returns ``(rates, rounds)``; ``rounds = -1`` when the iteration did not
    settle within ``max_rounds`` (the caller should fall back to max-min).
    ``problem``: the :class:`PortProblem` of ``paths``, if already built.

    >>> r, _ = port_fair([[0, 2], [1, 2], [1, 2]], [10.0, 10.0, 10.0], [INF] * 3)  # 2 ports into link 2
    >>> [round(x, 6) for x in r]
    [5.0, 2.5, 2.5]
    >>> r, _ = port_fair([[0, 1], [0], [1]], [1.0, 2.0], [INF] * 3)               # flat: max-min
    >>> [round(x, 6) for x in r]
    [0.5, 0.5, 1.5]
    """
    F = len(paths)
    problem = problem or PortProblem(paths)
    users = problem.users
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
            shared.append((l, problem.tree(l)))
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
    last: dict[int, tuple[list[float], dict[int, float]]] = {}   # per link: demands, undamped offers
    for rounds in range(1, max_rounds + 1):
        best, best_l, second = _best_two(F, flow_links, off)
        new_off = {}
        for l, tree in shared:
            flows = tree.flat_flows or tree.flows
            ds = []
            for f in flows:
                other = second[f] if best_l[f] == l else best[f]
                ds.append(base[f] if base[f] < other else other)
            seen = last.get(l)
            if seen is not None and seen[0] == ds:
                o = seen[1]              # same demands as last round: same offers
            else:
                o = (flat_offers(capacity[l], flows, ds) if tree.flat_flows is not None
                     else tree_offers(tree, capacity[l], dict(zip(flows, ds))))
                last[l] = (ds, o)
            if rounds > 1 and damping < 1.0:
                prev = off[l]
                o = {f: damping * v + (1.0 - damping) * prev[f] for f, v in o.items()}
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


def _best_two(F: int, flow_links: list[list[int]], off: dict) -> tuple[list, list, list]:
    """Per flow: the least offer over its shared links, that link, and the second least offer."""
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
    return best, best_l, second


def port_fair_auto(paths, capacity, cap, *, offers: dict | None = None, fast_rounds: int = 50,
                   problem: PortProblem | None = None):
    """:func:`port_fair`, first undamped (converges in a few rounds on the path trees of real
    topologies: ~3x fewer rounds on components from a 256-GPU training step), then, if that
    does not settle within ``fast_rounds``, with the default damping. Same fixed point and
    tolerance either way.
    """
    trial: dict | None = {} if offers is not None else None
    problem = problem or PortProblem(paths)
    rates, rounds = port_fair(paths, capacity, cap, damping=1.0, max_rounds=fast_rounds, offers=trial,
                              problem=problem)
    if rounds >= 0:
        if offers is not None:
            offers.update(trial)
        return rates, rounds
    return port_fair(paths, capacity, cap, offers=offers, problem=problem)


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
                   offers: dict[int, dict[int, float]], problem: PortProblem | None = None) -> dict[int, float]:
    """Reduced capacities of ingress links paused by PFC (head-of-line blocking).

    A flow held at a shared link ``l`` (its rate is what ``l`` offers it) keeps
    the ingress ``k`` just before ``l`` paused part of the time; while paused,
    ``k`` carries nothing, for any flow (one FIFO per priority). If ``k`` would
    share its capacity as ``s_f`` among its flows (port-fair, all wanting
    everything), the held flow gets ``rate_f = d·s_f``: ``k`` is on a fraction
    ``d`` of the time, so every flow on ``k`` is limited to ``d·s_f``.
    Returns ``{k: d·C_k}`` for the paused links (empty when none).
    ``problem``: the :class:`PortProblem` of ``paths``, if already built.
    """
    problem = problem or PortProblem(paths)
    users = problem.users
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
        tree = problem.tree(k)
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
