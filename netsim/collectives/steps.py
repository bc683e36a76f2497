"""What the collective algorithms share besides :class:`~.engine.Run`: results, even splits, chunks, lockstep.

* :class:`CollectiveResult` — the value of a finished collective's process;
* :func:`split_even` and :func:`pieces` — how a buffer is cut into segments and chunks
  (integer bytes, nothing lost or invented);
* :func:`lockstep` — a pairwise exchange where each rank waits for its own partner only.

Left out: nothing of the model; these are pure helpers (no backend, no clock).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

@dataclass(frozen=True)
class CollectiveResult:
    """Value of a finished collective's process.

    Times are integer ps on the backend's clock (``env.now``); ``flows`` and
    ``bytes_sent`` count what was handed to ``backend.send`` (wire bytes of the
    protocol); ``algorithm`` and ``protocol`` are the ones that ran (after
    ``auto`` and fallbacks).
    """

    kind: str
    algorithm: str
    n: int
    size_bytes: int
    start_ps: int
    end_ps: int
    flows: int
    bytes_sent: int
    protocol: str = "simple"

    @property
    def time_s(self) -> float:
        """Duration in seconds."""
        return (self.end_ps - self.start_ps) / 1e12


def split_even(total: int, parts: int) -> list[int]:
    """Split ``total`` bytes into ``parts`` integers differing by at most one (larger first).

    >>> split_even(10, 4)
    [3, 3, 2, 2]
    """
    q, r = divmod(int(total), parts)
    return [q + 1 if i < r else q for i in range(parts)]


def pieces(nbytes: int, chunk_bytes: int | None) -> list[int]:
    """Cut ``nbytes`` into chunks of ``chunk_bytes`` (last one shorter); ``[]`` for 0.

    >>> pieces(10, 4), pieces(8, None), pieces(0, 4)
    ([4, 4, 2], [8], [])
    """
    if nbytes <= 0:
        return []
    if not chunk_bytes or nbytes <= chunk_bytes:
        return [nbytes]
    full, rest = divmod(nbytes, chunk_bytes)
    return [chunk_bytes] * full + ([rest] if rest else [])


def lockstep(need: list[list[int]], first: int, last: int,
             post: Callable[[int, int, Callable[[int], Callable]], None],
             on_rank_done: Callable[[int], None]) -> None:
    """Drive ranks through steps ``first .. last-1`` of a pairwise exchange, each at its own pace.

    Rank ``r`` enters step ``k`` by calling ``post(r, k, fin)``, which sends its step-``k``
    pieces to its partner ``p`` with completion callback ``fin(p)``. ``need[r][k]`` counts the
    pieces rank ``r`` must see finish in step ``k`` (its sends and its receipts); when they have,
    it enters the next step with pieces (steps with none are skipped), and after the last it
    calls ``on_rank_done(r)``. So a rank waits for its own partner only, never for a global barrier.
    """
    cur = [0] * len(need)

    def enter(r: int, k: int) -> None:
        while k < last and need[r][k] == 0:
            k += 1
        cur[r] = k
        if k >= last:
            on_rank_done(r)
            return
        post(r, k, lambda partner: finish(r, partner, k))

    def finish(r: int, partner: int, k: int):
        def cb(_rec):
            for who in (r, partner):
                need[who][k] -= 1
                if need[who][k] == 0 and cur[who] == k:
                    enter(who, k + 1)
        return cb

    for r in range(len(need)):
        enter(r, first)


def _noop(_=None) -> None:
    return None
