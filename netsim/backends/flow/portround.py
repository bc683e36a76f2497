"""The round loop of the port-fair solver (:func:`.portfair.port_fair`).

Every round, each group of shared links (:meth:`.portplan.PortPlan.grouping`)
recomputes its offers from its flows' demands, a flow's demand at a link being
the least of its cap and its offers elsewhere; then every flow's rate becomes
the least of its cap and its offers. Rates are in the unit of the capacities.

Groups whose flows' demands are the same as in the last round keep their
offers (undamped) or their last undamped offers (damped), so a round mostly
costs a comparison per group once the rates settle.

Left out: convergence guarantees (the caller falls back to max-min when the
rates do not settle within ``max_rounds``).
"""
from __future__ import annotations

from math import isfinite

from .flatoffer import _flat_offer_three, flat_offer_list, flat_offer_two
from .portplan import Grouping
from .porttree import INF, tree_offer_list


def iterate(grouping: Grouping, strees: list, base: list[float], off: list[float], *, damping: float,
            max_rounds: int, rel_tol: float) -> tuple[list[float], int, list]:
    """Run the rounds until the rates settle.

    Parameters
    ----------
    grouping : Grouping
        ``PortPlan.grouping(capacity)`` (groups, their capacities and offer layout).
    strees : list
        ``PortPlan.strees``: prefix tree of every shared link (``None`` when flat).
    base : list of float
        Per flow: its cap and the capacity of its single-flow links, the least of them.
    off : list of float
        The starting offers, in the grouping's layout; updated in place.
    damping, max_rounds, rel_tol
        As in :func:`.portfair.port_fair`.

    Returns
    -------
    rates : list of float
        The rates of the last round.
    rounds : int
        Rounds run, ``-1`` when the rates did not settle within ``max_rounds``.
    last_order : list
        Per group, the positions of its flows by ascending demand (as :func:`.flatoffer.flat_offer_list`).
    """
    g = grouping   # by name: a Grouping is a record, never unpacked by position
    members, gcap, slots, gflows, owner = g.members, g.gcap, g.slots, g.gflows, g.owner
    pairs, triples, others = g.pairs, g.triples, g.others
    memo = _Memo(len(members), gflows)
    keep = 1.0 - damping
    dmin, dsec, best_g = best_two(base, slots, off, owner)
    rates = base
    for rounds in range(1, max_rounds + 1):
        damp = damping < 1.0 and rounds > 1
        _pairs(pairs, gcap, dmin, dsec, best_g, off, memo, damp, damping, keep)
        _triples(triples, gcap, dmin, dsec, best_g, off, memo, damp, damping, keep)
        _others(others, grouping, strees, dmin, dsec, best_g, off, memo, damp, damping, keep)
        new_rates, dsec, best_g = best_two(base, slots, off, owner)   # least of base and offers
        done = rounds > 1 and _settled(new_rates, rates, rel_tol)
        rates = dmin = new_rates
        if done:
            break
    else:
        rounds = -1
    return rates, rounds, memo.order


class _Memo:
    """Per group: the demands of the last round, their undamped offers and the order of those
    (as :func:`.flatoffer.flat_offer_list`); two- and three-flow groups keep them unrolled."""

    __slots__ = ("ds", "o", "order", "x", "y", "z", "a", "b")

    def __init__(self, n_groups: int, gflows: list):
        nan = float("nan")
        self.ds: list = [None] * n_groups
        self.o: list = [None] * n_groups
        self.order: list = [range(len(fl)) for fl in gflows]
        self.x = [nan] * n_groups       # two-flow groups: the demands, the offers
        self.y = [nan] * n_groups
        self.z = [nan] * n_groups       # (three-flow groups: the third demand)
        self.a = [0.0] * n_groups
        self.b = [0.0] * n_groups


def _pairs(pairs, gcap, dmin, dsec, best_g, off, memo: _Memo, damp: bool, damping: float, keep: float) -> None:
    """One round of the flat two-flow groups: new offers into ``off``."""
    last_x, last_y, last_a, last_b, last_order = memo.x, memo.y, memo.a, memo.b, memo.order
    for g, f0, f1, k in pairs:
        x = dsec[f0] if best_g[f0] == g else dmin[f0]
        y = dsec[f1] if best_g[f1] == g else dmin[f1]
        if x == last_x[g] and y == last_y[g]:
            if not damp:
                continue            # same demands as last round: same offers (already in off)
            a = last_a[g]
            b = last_b[g]
        else:
            last_x[g] = x
            last_y[g] = y
            a, b, swap = flat_offer_two(gcap[g], x, y)
            last_order[g] = (1, 0) if swap else (0, 1)
            last_a[g] = a
            last_b[g] = b
        if damp:
            a = damping * a + keep * off[k]
            b = damping * b + keep * off[k + 1]
        off[k] = a
        off[k + 1] = b


def _triples(triples, gcap, dmin, dsec, best_g, off, memo: _Memo, damp: bool, damping: float,
             keep: float) -> None:
    """One round of the flat three-flow groups: new offers into ``off``."""
    last_x, last_y, last_z, last_o, last_order = memo.x, memo.y, memo.z, memo.o, memo.order
    for g, f0, f1, f2, k in triples:
        x = dsec[f0] if best_g[f0] == g else dmin[f0]
        y = dsec[f1] if best_g[f1] == g else dmin[f1]
        z = dsec[f2] if best_g[f2] == g else dmin[f2]
        if x == last_x[g] and y == last_y[g] and z == last_z[g]:
            if not damp:
                continue
            a, b, c = last_o[g]
            i, j, m = last_order[g]
        else:
            last_x[g] = x
            last_y[g] = y
            last_z[g] = z
            o3, (i, j, m) = _flat_offer_three(gcap[g], [x, y, z])
            a, b, c = o3[i], o3[j], o3[m]
            last_o[g] = (a, b, c)
            last_order[g] = (i, j, m)
        i += k
        j += k
        m += k
        if damp:
            a = damping * a + keep * off[i]
            b = damping * b + keep * off[j]
            c = damping * c + keep * off[m]
        off[i] = a
        off[j] = b
        off[m] = c


def _others(others, grouping, strees, dmin, dsec, best_g, off, memo: _Memo, damp: bool, damping: float,
            keep: float) -> None:
    """One round of the other groups (flat of four flows or more, or a prefix tree)."""
    members, gcap, start, gflows = grouping.members, grouping.gcap, grouping.start, grouping.gflows
    last_ds, last_o, last_order = memo.ds, memo.o, memo.order
    for g in others:
        flows = gflows[g]
        ds = [dsec[f] if best_g[f] == g else dmin[f] for f in flows]
        if ds == last_ds[g]:
            if not damp:
                continue
            o = last_o[g]
        else:
            tree = strees[members[g][0]]
            if tree is None:
                o, last_order[g] = flat_offer_list(gcap[g], ds)
            else:
                o = tree_offer_list(tree, gcap[g], ds)     # (flows is tree.flows)
                last_order[g] = range(len(flows))
            last_ds[g] = ds
            last_o[g] = o
        k = start[g]
        if damp:
            o = [damping * v + keep * p for v, p in zip(o, off[k:k + len(o)])]
        off[k:k + len(o)] = o


def _settled(new_rates: list[float], rates: list[float], rel_tol: float) -> bool:
    """True when every rate moved by at most ``rel_tol`` (relative) since the last round."""
    if new_rates == rates:     # then the test below holds exactly where the rates are finite
        return rel_tol >= 0.0 and all(map(isfinite, rates))
    for a, b in zip(new_rates, rates):   # all(abs(a - b) <= rel_tol * max(abs(b), 1e-300)), unrolled
        t = abs(b)
        if 1e-300 > t:
            t = 1e-300
        if not abs(a - b) <= rel_tol * t:
            return False
    return True


def best_two(base: list[float], slots: list[list[int]], off: list[float],
             owner: list[int]) -> tuple[list[float], list[float], list[int]]:
    """Per flow: the least of its cap and its offers, the least of its cap and its offers
    but the least one, and the group of the least offer (-1: none)."""
    dmin = []
    dsec = []
    best_g = []
    for bf, sl in zip(base, slots):
        b = s2 = INF
        bk = -1
        for k in sl:
            a = off[k]
            if a < b:
                s2 = b
                b = a
                bk = k
            elif a < s2:
                s2 = a
        dmin.append(bf if bf < b else b)
        dsec.append(bf if bf < s2 else s2)
        best_g.append(owner[bk])
    return dmin, dsec, best_g
