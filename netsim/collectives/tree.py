"""Tree algorithms: double binary tree all-reduce, pipelined binary tree broadcast / reduce.

Modelled:

* a binary tree in heap order over positions ``0..n-1`` (parent of ``p`` is
  ``(p-1)//2``), depth ``D = floor(log2 n)``;
* all-reduce uses a **double binary tree** (NCCL 2.4+): tree A puts rank
  ``r`` at position ``r``, tree B at position ``n-1-r``, so the interior
  ranks of A are the leaves of B and vice versa; each tree carries half of
  each channel's buffer. Per chunk: reduce up (a rank sends to its parent
  once all its children's chunk arrived), then broadcast down from the root.
  Every rank sends about ``2 S`` bytes in all, hence ``T ~ 2 log2(n) a + 2 S/B``
  once pipelined;
* pipelining needs ``chunk_bytes``: with ``None`` each half buffer moves
  whole, level by level;
* step tags: a reduce flow from a rank at depth ``d`` is step ``D - d``, a
  broadcast flow from depth ``d`` is step ``D + d`` (steps ``0 .. 2D-1``);
* broadcast / reduce use one binary tree rooted at ``nodes[root]``
  (position ``(r - root) mod n``).

Left out: NCCL's in-order tree shape (ours is heap order: same depth, same
leaf/interior split) and its intra-node chain.
"""
from __future__ import annotations

from .engine import Run
from .steps import split_even


def _depth(p: int) -> int:
    return (p + 1).bit_length() - 1


def _children(p: int, n: int) -> list[int]:
    return [c for c in (2 * p + 1, 2 * p + 2) if c < n]


def allreduce(run: Run, nodes, size_bytes, channels):
    """Double-binary-tree all-reduce."""
    n = len(nodes)
    D = _depth(n - 1)
    maps = [list(range(n)), [n - 1 - r for r in range(n)]]  # position -> rank for trees A, B
    jobs = []
    for ch, part in enumerate(split_even(size_bytes, channels)):
        for t, half in enumerate(split_even(part, 2)):
            for c in run.pieces(half):
                jobs.append((2 * ch + t, maps[t], c))
    done, tick = run.counter(len(jobs) * (n - 1))

    for conn_ch, pos2rank, nbytes in jobs:
        _reduce_then_broadcast(run, nodes, D, conn_ch, pos2rank, nbytes, tick)
    yield done


def broadcast(run: Run, nodes, size_bytes, channels, root=0):
    """Pipelined binary-tree broadcast from ``nodes[root]``."""
    n = len(nodes)
    pos2rank = [(root + p) % n for p in range(n)]
    jobs = [(ch, c) for ch, part in enumerate(split_even(size_bytes, channels)) for c in run.pieces(part)]
    done, tick = run.counter(len(jobs) * (n - 1))

    def down(ch: int, p: int, nbytes: int) -> None:
        for c in _children(p, n):
            def arrived(_rec, c=c):
                tick()
                down(ch, c, nbytes)
            run.send(ch, nodes[pos2rank[p]], nodes[pos2rank[c]], nbytes, _depth(p), arrived)

    for ch, nbytes in jobs:
        down(ch, 0, nbytes)
    yield done


def reduce(run: Run, nodes, size_bytes, channels, root=0):
    """Pipelined binary-tree reduce to ``nodes[root]``."""
    n = len(nodes)
    D = _depth(n - 1)
    pos2rank = [(root + p) % n for p in range(n)]
    jobs = [(ch, c) for ch, part in enumerate(split_even(size_bytes, channels)) for c in run.pieces(part)]
    done, tick = run.counter(len(jobs))
    for ch, nbytes in jobs:
        _reduce_up(run, nodes, D, ch, pos2rank, nbytes, tick, None)
    yield done


def _reduce_up(run: Run, nodes, D: int, ch: int, pos2rank: list[int], nbytes: int, tick, at_root) -> None:
    """Start one chunk's reduction up the tree; ``at_root()`` (or ``tick()``) when the root has it."""
    n = len(nodes)
    pending = [len(_children(p, n)) for p in range(n)]

    def up(p: int) -> None:
        if p == 0:
            (at_root or tick)()
            return
        q = (p - 1) // 2

        def arrived(_rec):
            pending[q] -= 1
            if pending[q] == 0:
                up(q)
        run.send(ch, nodes[pos2rank[p]], nodes[pos2rank[q]], nbytes, D - _depth(p), arrived)

    for p in range(n):
        if pending[p] == 0:
            up(p)


def _reduce_then_broadcast(run: Run, nodes, D: int, ch: int, pos2rank: list[int], nbytes: int, tick) -> None:
    """One chunk of a tree all-reduce: up to the root, then down; ``tick()`` per non-root receipt."""
    n = len(nodes)

    def down(p: int) -> None:
        for c in _children(p, n):
            def arrived(_rec, c=c):
                tick()
                down(c)
            run.send(ch, nodes[pos2rank[p]], nodes[pos2rank[c]], nbytes, D + _depth(p), arrived)

    _reduce_up(run, nodes, D, ch, pos2rank, nbytes, tick, lambda: down(0))
