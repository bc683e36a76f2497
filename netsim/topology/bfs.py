"""Hop-count tables for :class:`~.routing.Router`: a level-synchronous BFS in numpy.

Modelled: the distance, in links, from every node to one destination over
routes whose intermediate nodes may relay (``transit``); a node that may not
(a GPU or host) gets its distance but passes nothing on, except the
destination itself. Each BFS level is one vectorised gather over a CSR
adjacency, so a 50k-node fabric's table costs milliseconds, not a Python
loop over every link. Left out: weighted costs.
"""
from __future__ import annotations

from array import array

import numpy as np


def csr(adj) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)`` of an adjacency list ``adj[u] = (v, ...)``.

    >>> csr([(1,), (0, 2), (1,)])
    (array([0, 1, 3, 4]), array([1, 0, 2, 1]))
    """
    lengths = np.fromiter((len(a) for a in adj), dtype=np.int64, count=len(adj))
    indptr = np.zeros(len(adj) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    indices = np.fromiter((v for a in adj for v in a), dtype=np.int64, count=int(indptr[-1]))
    return indptr, indices


def hop_counts(dst: int, indptr: np.ndarray, indices: np.ndarray, transit: np.ndarray, unreached: int) -> array:
    """Hop count of every node to ``dst`` (``unreached`` where none), as an ``array('H')``.

    >>> ip, ix = csr([(1,), (0, 2), (1, 3), (2,)])          # a path 0-1-2-3; node 1 may not relay
    >>> list(hop_counts(0, ip, ix, np.array([True, False, True, True]), 0xFFFF))
    [0, 1, 65535, 65535]
    """
    dist = np.full(len(indptr) - 1, unreached, dtype=np.uint16)
    dist[dst] = 0
    frontier = np.array([dst], dtype=np.int64)
    level = 0
    while frontier.size:
        level += 1
        if level > 1:
            frontier = frontier[transit[frontier]]
        starts, counts = indptr[frontier], indptr[frontier + 1] - indptr[frontier]
        total = int(counts.sum())
        if total == 0:
            break
        offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
        nbrs = indices[offsets]
        dist[nbrs[dist[nbrs] == unreached]] = level
        frontier = np.flatnonzero(dist == level)
    out = array("H")
    out.frombytes(dist.tobytes())
    return out
