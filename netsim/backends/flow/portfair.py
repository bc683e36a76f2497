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
:mod:`.porttree`; a :class:`~.portproblem.PortProblem` holds them for one
component so that the flatness test, both solves (before and after head-of-
line blocking) and :func:`hol_capacities` share them. Head-of-line blocking
(:func:`hol_capacities`, :func:`hol_capacities_flat`, :func:`may_block`) is in
:mod:`.hol` and re-exported here; the rounds themselves are in :mod:`.portround`,
the index structures they run on in :mod:`.portplan`.

Left out: per-priority queues (all lossless flows share one FIFO), weights,
pause timing (shares are long-run averages), buffer sizes.
"""
from __future__ import annotations

from typing import Mapping, NamedTuple, Sequence

from .hol import hol_capacities, hol_capacities_flat, may_block  # noqa: F401 (re-exported)
from .maxmin import maxmin
from .portplan import Grouping, port_plan
from .portproblem import PortProblem
from .portround import iterate
from .porttree import INF, _Tree, split_one_link  # noqa: F401 (re-exported)


class RoundState(NamedTuple):
    """What the last round of :func:`port_fair` leaves for the head-of-line pass (:mod:`.hol`)."""

    grouping: Grouping   #: the groups of shared links and the offers' layout
    offers: list         #: the offers of the last round, in the grouping's layout
    order: list          #: per group: the positions of its flows by ascending demand


def is_flat(paths: Sequence[Sequence[int]]) -> bool:
    """True when port fairness reduces to max-min fairness on these paths.

    At every link, follow the prefix tree down while it has a single child
    (all flows arrived through the same previous link, the same link before
    that, ...); the first node with several children must have only flows as
    children. Then every fairness decision is between single flows.
    """
    return PortProblem(paths).flat


def port_fair(paths: Sequence[Sequence[int]], capacity: Mapping[int, float] | Sequence[float],
              cap: Sequence[float], *, max_rounds: int = 300, rel_tol: float = 1e-7,
              damping: float = 0.7, warm: bool = True,
              problem: PortProblem | None = None, state: list | None = None) -> tuple[list[float], int]:
    """Ingress-port-fair rates of flows on ``paths`` (link ids into ``capacity``).

    Returns ``(rates, rounds)``; ``rounds = -1`` when the iteration did not
    settle within ``max_rounds`` (the caller should fall back to max-min).
    ``problem``: the :class:`PortProblem` of ``paths``, if already built. ``state``, if given, is
    set to ``[RoundState]`` of the last round (left empty when no link is shared), for
    :func:`.hol.hol_capacities`.

    >>> r, _ = port_fair([[0, 2], [1, 2], [1, 2]], [10.0, 10.0, 10.0], [INF] * 3)  # 2 ports into link 2
    >>> [round(x, 6) for x in r]
    [5.0, 2.5, 2.5]
    >>> r, _ = port_fair([[0, 1], [0], [1]], [1.0, 2.0], [INF] * 3)               # flat: max-min
    >>> [round(x, 6) for x in r]
    [0.5, 0.5, 1.5]
    """
    problem = problem or PortProblem(paths)
    plan = port_plan(problem)
    base = list(cap)
    for l, f in plan.single:
        c = capacity[l]
        if c < base[f]:
            base[f] = c
    if not plan.shared:
        return base, 0
    grouping = plan.grouping(capacity)
    gflows, owner = grouping.gflows, grouping.owner
    if warm:  # start from the max-min rates: port fairness is usually a small correction of them
        r0 = maxmin(plan.lpaths, list(map(capacity.__getitem__, plan.links)), base).tolist()
        off = [r0[f] for fl in gflows for f in fl]
    else:
        off = [INF] * (len(owner) - 1)
    rates, rounds, last_order = iterate(grouping, plan.strees, base, off, damping=damping,
                                        max_rounds=max_rounds, rel_tol=rel_tol)
    get = rates.__getitem__
    loads: dict | None = {}       # per set of flows, while no rate has been scaled
    for (l, fl), s in zip(plan.multi, plan.msets):   # _feasible (a lone flow is within its link)
        if loads is None:
            load = sum(map(get, fl))
        else:
            load = loads.get(s)
            if load is None:
                load = loads[s] = sum(map(get, fl))
        c = capacity[l]
        if load > c:
            loads = None
            k = c / load
            for f in fl:
                rates[f] *= k
    if state is not None:
        state[:] = [RoundState(grouping, off, last_order)]
    return rates, rounds


def port_fair_auto(paths, capacity, cap, *, fast_rounds: int = 50,
                   problem: PortProblem | None = None, state: list | None = None):
    """:func:`port_fair`, first undamped (converges in a few rounds on the path trees of real
    topologies: ~3x fewer rounds on components from a 256-GPU training step), then, if that
    does not settle within ``fast_rounds``, with the default damping. Same fixed point and
    tolerance either way. ``state``: as in :func:`port_fair`, from the solve returned.
    """
    problem = problem or PortProblem(paths)
    rates, rounds = port_fair(paths, capacity, cap, damping=1.0, max_rounds=fast_rounds,
                              problem=problem, state=state)
    if rounds >= 0:
        return rates, rounds
    return port_fair(paths, capacity, cap, problem=problem, state=state)


