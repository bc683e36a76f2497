"""All-to-all (direct or pairwise) and point-to-point send/recv.

Modelled:

* the matrix ``sizes[i][j]`` = bytes rank ``i`` sends to rank ``j`` (the
  diagonal stays local and is not sent); uniform all-to-all splits each
  rank's ``S``-byte send buffer into ``n`` equal blocks (nccl-tests
  convention), so each rank sends ``(n-1)/n * S``;
* ``direct`` (what NCCL does with grouped ncclSend/ncclRecv): every rank posts
  all its sends at once, to peers ``r+1, r+2, ..., r+n-1`` in that order; the
  flow to peer ``r+k`` is tagged step ``k``;
* ``pairwise``: ``n-1`` rounds; in round ``k`` rank ``r`` sends to ``r+k``
  and receives from ``r-k``, and starts round ``k+1`` once both are done
  (MPI's pairwise exchange);
* ``channels`` split each message into that many parallel parts, and
  ``chunk_bytes`` cuts the parts into chunks.

Left out: receiver buffer limits; memory copies of the local block.
"""
from __future__ import annotations

from .engine import Run
from .steps import lockstep, split_even


def uniform_matrix(n: int, size_bytes: int) -> list[list[int]]:
    """The nccl-tests all-to-all matrix: each rank's ``S`` split into ``n`` equal blocks.

    >>> uniform_matrix(2, 10)
    [[5, 5], [5, 5]]
    """
    row = split_even(size_bytes, n)
    return [list(row) for _ in range(n)]


def _parts(run: Run, nbytes: int, channels: int) -> list[tuple[int, int]]:
    return [(ch, c) for ch, part in enumerate(split_even(nbytes, channels)) for c in run.pieces(part)]


def direct(run: Run, nodes, sizes, channels):
    """All sends posted at once; finishes when every byte has arrived."""
    n = len(nodes)
    jobs = []
    for r in range(n):
        for k in range(1, n):
            p = (r + k) % n
            for ch, c in _parts(run, sizes[r][p], channels):
                jobs.append((ch, r, p, c, k))
    done, tick = run.counter(len(jobs))
    for ch, r, p, c, k in jobs:
        run.send(ch, nodes[r], nodes[p], c, k, tick)
    yield done


def pairwise(run: Run, nodes, sizes, channels):
    """``n-1`` rounds of exchange with peers at distance ``k``."""
    n = len(nodes)
    # need[r][k]: chunks rank r must see finish in round k (its sends + its receipts)
    parts = {(r, k): _parts(run, sizes[r][(r + k) % n], channels) for r in range(n) for k in range(1, n)}
    need = [[0] * n for _ in range(n)]
    for (r, k), ps in parts.items():
        need[r][k] += len(ps)
        need[(r + k) % n][k] += len(ps)
    done, tick = run.counter(n)

    def post(r: int, k: int, fin) -> None:
        p = (r + k) % n
        for ch, c in parts[(r, k)]:
            run.send(ch, nodes[r], nodes[p], c, k, fin(p))

    lockstep(need, 1, n, post, lambda _r: tick())
    yield done


def sendrecv(run: Run, nodes, size_bytes, channels):
    """One message ``nodes[0] -> nodes[1]`` (step 0)."""
    jobs = _parts(run, size_bytes, channels)
    done, tick = run.counter(len(jobs))
    for ch, c in jobs:
        run.send(ch, nodes[0], nodes[1], c, 0, tick)
    yield done
