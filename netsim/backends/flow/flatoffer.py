"""Offers of a link whose prefix tree is flat: all its flows are children of the root.

Then the link splits its capacity max-min among the flows by their demands
(:func:`.porttree.split_one_link`), and a flow held by its demand is offered the
water level it would get if it asked for everything (:func:`.porttree._level`):
the same arithmetic as :func:`.porttree.tree_offer_list`, without the tree. Two
and three flows, the usual cases, are worked out without sorting (the same
operations in the same order, so the same bits). Rates are in the unit of the
capacity given. Left out: nothing of the tree case; a non-flat tree goes to
:func:`.porttree.tree_offer_list`.
"""
from __future__ import annotations

from .porttree import _KEEP, INF, _level


def flat_offer_list(budget: float, ds: list[float]) -> tuple[list[float], list[int]]:
    """Offers of a flat tree by child position (``ds``: the demands in child order):
    ``(offers, order)``, ``order`` being the positions by ascending demand."""
    n = len(ds)
    if n == 2:
        a, b, swap = flat_offer_two(budget, ds[0], ds[1])
        return ([a, b], [1, 0]) if swap else ([a, b], [0, 1])
    if n == 3:
        return _flat_offer_three(budget, ds)
    order = sorted(range(n), key=ds.__getitem__)
    srt = [ds[i] for i in order]
    o = [0.0] * n
    levels: dict[float, float] = {}
    left = budget
    k = n
    for i in order:
        d = ds[i]
        share = left / k
        a = d if d < share else share
        left -= a
        k -= 1
        if a >= d * _KEEP:
            a = levels.get(d)
            if a is None:
                a = levels[d] = _level(budget, srt, d)
        o[i] = a
    return o, order


def flat_offer_two(budget: float, x: float, y: float) -> tuple[float, float, bool]:
    """:func:`flat_offer_list` for two flows of demands ``x``, ``y``, worked out: their offers
    ``(a, b)`` in child order and whether ``y < x`` (then ``order`` is ``[1, 0]``)."""
    swap = y < x
    if swap:
        x, y = y, x
    h = budget / 2
    a = x if x < h else h
    left = budget - a
    if a >= x * _KEEP:      # _level(budget, [x, y], x)
        a = h if y >= h else budget - y
    b = y if y < left else left
    if b >= y * _KEEP:      # _level(budget, [x, y], y)
        if y == x:
            b = h if y >= h else budget - y
        else:
            b = h if x >= h else budget - x
    return (b, a, True) if swap else (a, b, False)


def _flat_offer_three(budget: float, ds: list[float]) -> tuple[list[float], list[int]]:
    """:func:`flat_offer_list` for three flows: the same operations, unrolled.

    The stable insertion sort gives the order ``sorted`` gives; a demand-held
    flow reuses the level of an equal demand met before it, as the general case.
    """
    i, j, k = 0, 1, 2
    x, y, z = ds
    if y < x:
        x, y = y, x
        i, j = j, i
    if z < y:
        y, z = z, y
        j, k = k, j
        if y < x:
            x, y = y, x
            i, j = j, i
    share = budget / 3
    a = x if x < share else share
    left = budget - a
    held_x = a >= x * _KEEP
    if held_x:
        a = _level3(budget, x, y, z, x)
    share = left / 2
    b = y if y < share else share
    left -= b
    if b >= y * _KEEP:
        b = a if y == x and held_x else _level3(budget, x, y, z, y)
        held_y = True
    else:
        held_y = False
    c = z if z < left else left          # share = left / 1
    if c >= z * _KEEP:
        if z == y and held_y:
            c = b
        elif z == x and held_x:
            c = a
        else:
            c = _level3(budget, x, y, z, z)
    o = [0.0, 0.0, 0.0]
    o[i] = a
    o[j] = b
    o[k] = c
    return o, [i, j, k]


def _level3(budget: float, x: float, y: float, z: float, mine: float) -> float:
    """:func:`_level` for three ascending demands ``x <= y <= z`` (``mine`` one of them):
    the same operations in the same order, without sorting or building lists."""
    k = 3
    left = budget
    skipped = False
    for d in (x, y):
        if d == INF:
            return left / k
        if not skipped and d == mine:
            skipped = True
            continue
        if d >= left / k:
            return left / k
        left -= d
        k -= 1
    if z == INF or (not skipped and z == mine) or z >= left / k:
        return left / k
    left -= z
    k -= 1
    return left / k
