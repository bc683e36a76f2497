"""PFC head-of-line blocking: the ingress links that a held flow keeps paused.

A flow held at a shared link keeps the ingress link just before it paused part
of the time, and while paused that ingress carries nothing for any flow (one
FIFO per priority). :func:`hol_capacities` turns this into reduced capacities
for a port-fair solution (:mod:`.portfair`, from the round loop's own offers),
:func:`hol_capacities_flat` for a flat component solved by max-min (held flows
are then the max-min bottlenecked ones, and every link shares equally);
:func:`may_block` is the cheap precondition. Capacities and rates are in any
one rate unit (the flow backend uses bytes/ps).

Left out: pauses that spread further upstream than one hop (one pass, not a
fixed point: iterating it did not change the one case measured, the mixed-NIC
cluster of docs/flow-backend.md), pause timing (a pause is a duty cycle, not events).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from .maxmin import link_index
from .portplan import port_plan
from .portproblem import PortProblem
from .porttree import INF, tree_allocation


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



def hol_capacities(paths: Sequence[Sequence[int]], capacity: Mapping[int, float], rates: Sequence[float],
                   state: list, problem: PortProblem | None = None) -> dict[int, float]:
    """Reduced capacities of ingress links paused by PFC (head-of-line blocking), after a
    port-fair solve.

    A flow held at a shared link ``l`` (its rate is what ``l`` offers it) keeps
    the ingress ``k`` just before ``l`` paused part of the time; while paused,
    ``k`` carries nothing, for any flow (one FIFO per priority). If ``k`` would
    share its capacity as ``s_f`` among its flows (port-fair, all wanting
    everything), the held flow gets ``rate_f = d·s_f``: ``k`` is on a fraction
    ``d`` of the time, so every flow on ``k`` is limited to ``d·s_f``.
    Returns ``{k: d·C_k}`` for the paused links (empty when none).

    ``state`` is what :func:`.portfair.port_fair` left in its ``state`` list (a
    :class:`~.portfair.RoundState`: the grouping and the offers of the last round;
    empty: no shared link); the flows of a group of links are tested once for all its
    links. ``problem``: the :class:`PortProblem` of ``paths``, if already built.
    """
    if not state:
        return {}
    problem = problem or PortProblem(paths)
    grouping, off, _ = state[0]
    members, start, gflows = grouping.members, grouping.start, grouping.gflows
    shared = port_plan(problem).shared
    held: dict[int, list[int]] = {}
    lim = [r * (1 + 1e-6) for r in rates]
    for g, m in enumerate(members):
        k = start[g]
        flows = gflows[g]
        hf = [f for f, o in zip(flows, off[k:k + len(flows)]) if o <= lim[f]]
        if not hf:
            continue
        for j in m:
            l = shared[j]
            for f in hf:
                _hold(held, paths[f], l, f)
    return _paused(held, problem, capacity, rates)


def _hold(held: dict[int, list[int]], path: Sequence[int], l: int, f: int) -> None:
    """Record flow ``f``, held at link ``l`` of its ``path``, under the link just before ``l``
    (the ingress a pause would stop; nothing when ``l`` is its first hop)."""
    i = path.index(l)
    if i >= 1:
        h = held.get(path[i - 1])
        if h is None:
            held[path[i - 1]] = [f]
        else:
            h.append(f)


def _paused(held: dict[int, list[int]], problem: PortProblem, capacity: Mapping[int, float],
            rates: Sequence[float]) -> dict[int, float]:
    """The paused links of a port-fair solution from ``held``: ``{ingress link: flows held
    just after it}`` (in any order, repeats allowed)."""
    out: dict[int, float] = {}
    if not held:
        return out
    index, on, _, _ = problem.incidence()
    plan = port_plan(problem)
    for k, flows in held.items():
        u = on[index[k]]
        if len(u) < 2:
            continue
        j = plan.index[k]
        tree = plan.strees[j]
        c = capacity[k]
        if tree is None:                # flat: water-filling of demands all INF, in child order
            share = {}
            left = c
            n = len(u)
            for f in plan.sflows[j]:
                a = left / n
                share[f] = a
                left -= a
                n -= 1
        else:
            share = dict(zip(tree.flows, tree_allocation(tree, c, [INF] * len(tree.flows))))
        d = min([rates[f] / share[f] for f in flows if share[f] > 0])
        # a victim: a flow on k that gets more than the paused link would let through
        if d < 1.0 - 1e-9 and any([rates[f] > d * share[f] * (1 + 1e-9) for f in u]):
            out[k] = c * d
    return out


def hol_capacities_flat(paths: Sequence[Sequence[int]], capacity: Mapping[int, float],
                        rates: Sequence[float], index_of=link_index) -> dict[int, float]:
    """:func:`hol_capacities` for a flat component solved by max-min.

    There a flow is held at link ``l`` when ``l`` is saturated and no flow on
    ``l`` gets more (the max-min bottleneck condition), and every link shares
    equally among its flows, so no port-fair offers are needed. ``index_of``: the solver's
    :class:`~.maxmin.LinkIndex` (by default the numbering is built anew).
    """
    links, index, lpaths, on = index_of(paths)      # usually kept from the solver's earlier stages
    held: dict[int, list[int]] = {}
    get = rates.__getitem__
    for l, u in zip(links, on):
        if len(u) < 2 or sum(map(get, u)) < capacity[l] * (1 - 1e-9):
            continue
        r = list(map(get, u))
        lim = max(r) * (1 - 1e-9)
        for f, x in zip(u, r):
            if x >= lim:
                _hold(held, paths[f], l, f)
    out: dict[int, float] = {}
    for k, flows in held.items():
        u = on[index[k]]
        if len(u) < 2:
            continue
        share = capacity[k] / len(u)
        d = min([rates[f] for f in flows]) / share
        if d < 1.0 - 1e-9:
            lim = d * share * (1 + 1e-9)
            if any([rates[f] > lim for f in u]):
                out[k] = capacity[k] * d
    return out
