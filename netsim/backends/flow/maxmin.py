"""Max-min fair rate allocation (progressive filling / water-filling), vectorized.

Given links with capacities and flows that each cross a set of links (and may
carry a per-flow rate cap), the max-min fair allocation is the unique one in
which no flow can get more without taking from a flow that has no more than it.
Every flow is then *bottlenecked*: it sits at its cap, or crosses a saturated
link on which no flow gets more than it.

Algorithm. Classic progressive filling raises every unfrozen flow's rate
together and freezes flows when a link saturates: one iteration per distinct
rate level. Here each iteration freezes, at once, every link whose fair share
``remaining / unfrozen flows`` is no larger than the share seen by any flow
crossing it (a *local* bottleneck), and every capped flow whose cap is below
all its links' shares. Freezing a flow at a rate no larger than a link's share
can only raise that link's share, so local bottlenecks freeze at exactly the
level global progressive filling would give them; the result is identical and
the number of iterations is the depth of the bottleneck dependency chain, not
the number of distinct rates. Each iteration is a handful of
``numpy.ufunc.reduceat`` passes over the link×flow incidence (CSR both ways),
so the cost is O(iterations · nnz).

This is the flow backend's one max-min solver: components of every size
(a pure-Python filler for small components, since removed, gave the
same traces on the shipped examples and was 10x slower above a thousand
flows), the warm start of the port-fair iteration (:mod:`.portfair`) and its
fallback. :func:`link_index` is the local link numbering the solver stages
share (:class:`LinkIndex`: one per solver, keeping its last result).

Deliberately left out: weights (weighted max-min), multipath flows.

>>> maxmin([[0, 1], [0], [1]], [1.0, 1.0]).tolist()    # 3 flows on 2 links
[0.5, 0.5, 0.5]
>>> maxmin([[0, 1], [0], [1]], [1.0, 2.0]).tolist()
[0.5, 0.5, 1.5]
"""
from __future__ import annotations

from itertools import chain
from typing import Sequence

import numpy as np

#: relative tolerance when comparing fair shares (two links within it tie)
REL_TOL = 1e-9
INF = float("inf")
_TRUE = np.ones(1, dtype=bool)   # the first entry of a run (np.concatenate: cheaper than np.r_)


def maxmin_csr(flow_ptr: np.ndarray, flow_links: np.ndarray, capacity: np.ndarray,
               cap: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Max-min fair rates for flows given in CSR form.

    Parameters
    ----------
    flow_ptr : int array, shape (F+1,)
        Flow ``f`` crosses links ``flow_links[flow_ptr[f]:flow_ptr[f+1]]``;
        every flow must cross at least one link, and no link twice.
    flow_links : int array, shape (nnz,)
        Local link indices in ``[0, L)``.
    capacity : float array, shape (L,)
        Link capacities (any rate unit; the result is in the same unit).
    cap : float array, shape (F,), optional
        Per-flow rate caps (``inf`` = none).

    Returns
    -------
    rates : float array, shape (F,)
    iterations : int
        Number of freezing rounds (for cost reporting).
    """
    flow_ptr = np.asarray(flow_ptr, dtype=np.int64)
    links = np.asarray(flow_links, dtype=np.int64)
    rem = np.array(capacity, dtype=np.float64)
    F = len(flow_ptr) - 1
    L = len(rem)
    if F == 0:
        return np.zeros(0), 0
    counts = np.diff(flow_ptr)
    if counts.min() <= 0:
        raise ValueError("every flow must cross at least one link")
    fcap = np.full(F, np.inf) if cap is None else np.asarray(cap, dtype=np.float64)
    rate_out = np.zeros(F)
    ids = np.arange(F)                      # original index of each current flow
    nnz_flow = np.repeat(ids, counts)        # current flow index of each incidence entry
    n = np.bincount(links, minlength=L).astype(np.float64)
    order = np.argsort(links, kind="stable")  # link-major view, kept sorted when compacting
    lk_link = links[order]
    lk_flow = nnz_flow[order]
    share = np.empty(L)
    lmin = np.empty(L)
    iterations = 0
    while True:
        iterations += 1
        fstart = np.flatnonzero(np.concatenate((_TRUE, nnz_flow[1:] != nnz_flow[:-1])))
        lstart = np.flatnonzero(np.concatenate((_TRUE, lk_link[1:] != lk_link[:-1])))
        used = lk_link[lstart]
        np.maximum(rem, 0.0, out=rem)
        share.fill(np.inf)
        live = n > 0.5
        np.divide(rem, n, out=share, where=live)
        fmin = np.minimum.reduceat(share[links], fstart)
        ccap = fcap[ids]
        level = np.minimum(fmin, ccap)
        lmin.fill(np.inf)
        lmin[used] = np.minimum.reduceat(level[lk_flow], lstart)
        bott = live & (share <= lmin * (1.0 + REL_TOL))
        on_bott = np.logical_or.reduceat(bott[links], fstart)
        freeze = on_bott | (ccap <= fmin * (1.0 + REL_TOL))
        if not freeze.any():  # cannot happen; guards against an infinite loop
            raise RuntimeError("max-min solver made no progress")
        rate_out[ids[freeze]] = level[freeze]
        sel = freeze[nnz_flow]
        rem -= np.bincount(links[sel], weights=level[nnz_flow[sel]], minlength=L)
        n -= np.bincount(links[sel], minlength=L)
        if freeze.all():
            return rate_out, iterations
        # compact: drop frozen flows (the link-major view stays sorted)
        keep = ~freeze
        newidx = np.cumsum(keep) - 1
        sel = ~sel
        links = links[sel]
        nnz_flow = newidx[nnz_flow[sel]]
        lsel = keep[lk_flow]
        lk_link = lk_link[lsel]
        lk_flow = newidx[lk_flow[lsel]]
        ids = ids[keep]


def maxmin(paths: Sequence[Sequence[int]], capacity: Sequence[float],
           cap: Sequence[float] | None = None) -> np.ndarray:
    """Max-min fair rates for ``paths`` (lists of link indices) — convenience form."""
    lens = [len(p) for p in paths]
    flow_ptr = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    flow_links = np.fromiter((l for p in paths for l in p), dtype=np.int64, count=int(flow_ptr[-1]))
    return maxmin_csr(flow_ptr, flow_links, np.asarray(capacity, dtype=np.float64),
                      None if cap is None else np.asarray(cap, dtype=np.float64))[0]


def link_index(paths: Sequence[Sequence[int]]) -> tuple[list, dict, list, list]:
    """Local link numbering of ``paths`` (built anew; :class:`LinkIndex` keeps the last one).

    Returns
    -------
    links : list of int
        The links in order of first use (flows in order, each along its path).
    index : dict
        ``{link: position in links}``.
    lpaths : list of list of int
        Every flow's path in local indices.
    on : list of list of int
        The flows of every local link, in flow order.
    """
    links = list(dict.fromkeys(chain.from_iterable(paths)))   # first-use order
    index = dict(zip(links, range(len(links))))
    get = index.__getitem__
    lpaths = [list(map(get, p)) for p in paths]
    on: list[list[int]] = [[] for _ in links]
    for f, q in enumerate(lpaths):
        for j in q:
            on[j].append(f)
    return links, index, lpaths, on


class LinkIndex:
    """:func:`link_index` that keeps its last result, one per solver (instance state, no
    module global): the solver stages reading the same paths (link capacities, the port-fair
    problem, the head-of-line pass, :mod:`.hol`) do not rebuild it. Kept only when every
    path is a tuple (immutable); a result must therefore not be modified."""

    __slots__ = ("_key", "_out")

    def __init__(self):
        self._key: tuple | None = None
        self._out: tuple | None = None

    def __call__(self, paths: Sequence[Sequence[int]]) -> tuple[list, dict, list, list]:
        key = tuple(paths)
        if key == self._key:
            return self._out
        out = link_index(paths)
        if all([type(p) is tuple for p in paths]):
            self._key, self._out = key, out
        return out
