"""Recursive halving / doubling (Rabenseifner): all-reduce, reduce-scatter, all-gather.

Modelled:

* reduce-scatter by recursive **halving**: ``L = log2 p`` steps; at step
  ``i`` rank ``r`` exchanges with ``r XOR p/2^(i+1)`` half of the region it
  still owns (the lower half goes to the partner when ``r``'s bit is set, the
  upper half otherwise), so after ``L`` steps rank ``r`` owns region ``r``;
  bytes per rank ``S/2 + S/4 + ... = (p-1)/p * S``;
* all-gather by recursive **doubling**, the mirror image (distances 1, 2,
  ..., p/2), regions growing back;
* all-reduce = the two: ``2 log2(p)`` steps, ``T = 2 log2(p) a + 2 (p-1)/p S/B``;
* a rank enters step ``i+1`` when its step-``i`` send has been delivered
  *and* its partner's step-``i`` data has arrived (sendrecv semantics); a
  step's data is cut into chunks queued on the connection;
* **non-power-of-two n** (all-reduce; the MPICH fallback): with ``p`` the
  largest power of two <= n and ``q = n - p``, ranks ``0,2,..,2q-2`` first
  send their whole buffer to the next odd rank (step 0), the ``p`` survivors
  run halving-doubling (steps 1..2L), and the odd ranks send the result back
  (step 2L+1): ``T = 2 log2(p) a + 2 (p-1)/p S/B + 2 (a + S/B)``.
  Reduce-scatter and all-gather with a non-power-of-two ``n`` fall back to
  the ring algorithm (the result says ``algorithm="ring"``).

Left out: reduction compute time.
"""
from __future__ import annotations

from .engine import Run
from .steps import lockstep, split_even


def is_pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _regions(rank: int, p: int, size_bytes: int) -> list[tuple[int, int]]:
    """Byte range ``rank`` owns after each halving step: ``[(0,S), after step 0, ...]``."""
    lo, hi = 0, size_bytes
    out = [(lo, hi)]
    dist = p >> 1
    while dist:
        mid = lo + (hi - lo) // 2
        lo, hi = (mid, hi) if rank & dist else (lo, mid)
        out.append((lo, hi))
        dist >>= 1
    return out


def _exchange(run: Run, nodes, group: list[int], size_bytes: int, channels: int, phases: str,
              step_offset: int, on_rank_done) -> None:
    """Run halving (``"h"``), doubling (``"d"``) or both (``"hd"``) among ``group`` (power of two).

    ``group[g]`` is the index into ``nodes`` of group member ``g``;
    ``on_rank_done(g)`` is called when member ``g`` has finished its last step.
    """
    p = len(group)
    L = p.bit_length() - 1
    plan: list[list[tuple[int, int, int]]] = []  # per member: [(partner, nbytes, step)]
    for g in range(p):
        steps = []
        regs = []
        for ch, part in enumerate(split_even(size_bytes, channels)):
            regs.append(_regions(g, p, part))
        k = 0
        if "h" in phases:
            for i in range(L):
                sent = sum((r[i][1] - r[i][0]) - (r[i + 1][1] - r[i + 1][0]) for r in regs)
                steps.append((g ^ (p >> (i + 1)), sent, k))
                k += 1
        if "d" in phases:
            for i in range(L):
                cur = L - i  # region index currently owned
                size = sum(r[cur][1] - r[cur][0] for r in regs)
                steps.append((g ^ (1 << i), size, k))
                k += 1
        plan.append(steps)
    nsteps = len(plan[0]) if plan else 0
    pcs = [[run.pieces(nb) for (_, nb, _) in plan[g]] for g in range(p)]
    need = [[len(pcs[g][k]) + len(pcs[plan[g][k][0]][k]) for k in range(nsteps)] for g in range(p)]

    def post(g: int, k: int, fin) -> None:
        partner = plan[g][k][0]
        for c in pcs[g][k]:
            run.send(0, nodes[group[g]], nodes[group[partner]], c, step_offset + k, fin(partner))

    lockstep(need, 0, nsteps, post, on_rank_done)


def _run_pow2(run: Run, nodes, size_bytes, channels, phases: str):
    n = len(nodes)
    done, tick = run.counter(n)
    _exchange(run, nodes, list(range(n)), size_bytes, channels, phases, 0, lambda g: tick())
    yield done


def reducescatter(run: Run, nodes, size_bytes, channels):
    """Recursive-halving reduce-scatter (``n`` a power of two)."""
    yield from _run_pow2(run, nodes, size_bytes, channels, "h")


def allgather(run: Run, nodes, size_bytes, channels):
    """Recursive-doubling all-gather (``n`` a power of two)."""
    yield from _run_pow2(run, nodes, size_bytes, channels, "d")


def allreduce(run: Run, nodes, size_bytes, channels):
    """Halving-doubling all-reduce, with the MPICH fold for non-power-of-two ``n``."""
    n = len(nodes)
    if is_pow2(n):
        yield from _run_pow2(run, nodes, size_bytes, channels, "hd")
        return
    p = 1 << (n.bit_length() - 1)
    q = n - p
    L = p.bit_length() - 1
    group = [2 * i + 1 for i in range(q)] + list(range(2 * q, n))
    done, tick = run.counter(n)
    post_step = 1 + 2 * L

    def member_done(g: int) -> None:
        r = group[g]
        tick()
        if r < 2 * q:  # odd partner of a folded even rank: send the result back
            jobs = [c for part in split_even(size_bytes, channels) for c in run.pieces(part)]
            left = [len(jobs)]

            def back(_rec):
                left[0] -= 1
                if left[0] == 0:
                    tick()
            for c in jobs:
                run.send(0, nodes[r], nodes[r - 1], c, post_step, back)
            if not jobs:
                tick()

    if q:
        jobs = [c for part in split_even(size_bytes, channels) for c in run.pieces(part)]
        folded = [0]

        def pre_done(_rec):
            folded[0] += 1
            if folded[0] == q * len(jobs):
                _exchange(run, nodes, group, size_bytes, channels, "hd", 1, member_done)
        for i in range(q):
            for c in jobs:
                run.send(0, nodes[2 * i], nodes[2 * i + 1], c, 0, pre_done)
        if not jobs:
            _exchange(run, nodes, group, size_bytes, channels, "hd", 1, member_done)
    yield done
