"""Closed-form alpha-beta costs of collectives and the nccl-tests bandwidth definitions.

``a`` is the latency of one algorithm step (one message on one path: path
propagation + store-and-forward + software latency), ``B`` the bandwidth of
the path in bit/s, ``S`` the per-rank buffer in bytes (nccl-tests size
convention, see :mod:`netsim.collectives`). With ``b = 8 S / B`` seconds:

===============  ==================  ===========================================
kind             algorithm           time
===============  ==================  ===========================================
allreduce        ring                ``2(n-1) a + 2(n-1)/n b``
allreduce        tree                ``2 log2(n) a + 2 b`` (pipelined limit)
allreduce        halving_doubling    ``2 log2(n) a + 2(n-1)/n b`` (n = 2^k);
                                     otherwise, p = 2^floor(log2 n):
                                     ``2 log2(p) a + 2(p-1)/p b + 2(a + b)``
reducescatter,   ring                ``(n-1) a + (n-1)/n b``
allgather        halving_doubling    ``log2(n) a + (n-1)/n b`` (n = 2^k, else ring)
broadcast,       ring (chain)        ``(n-1) a + (n-2) c + b`` with ``c`` the
reduce                               chunk's time (``c = b`` unchunked)
alltoall         direct              ``a + (n-1)/n b``
alltoall         pairwise            ``(n-1) a + (n-1)/n b``
sendrecv         direct              ``a + b``
===============  ==================  ===========================================

Bus bandwidth (nccl-tests, doc/PERFORMANCE.md): ``algbw = S / T`` and
``busbw = algbw * factor`` with factor ``2(n-1)/n`` for all-reduce,
``(n-1)/n`` for reduce-scatter, all-gather and all-to-all, 1 for broadcast,
reduce and send/recv. Here both are in **bit/s**.

>>> round(closed_form_time_s("allreduce", "ring", 8, 10**9, 8e11, 1e-6), 9)
0.017514
>>> round(bus_bandwidth("allreduce", 8, 10**9, 0.0175) / 8e11, 9)
1.0
"""
from __future__ import annotations

import math

from ..errors import InputError

_BUS_FACTOR = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}

CLOSED_FORMS = {
    "allreduce": ("ring", "tree", "halving_doubling"),
    "reducescatter": ("ring", "halving_doubling"),
    "allgather": ("ring", "halving_doubling"),
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "alltoall": ("direct", "pairwise", "ring"),
    "sendrecv": ("direct", "ring"),
}


def closed_form_time_s(kind: str, algorithm: str, n: int, size_bytes: int, bandwidth_bps: float,
                       latency_s: float, *, chunk_bytes: int | None = None) -> float:
    """Alpha-beta time of a collective, seconds (table in the module docstring).

    Parameters
    ----------
    kind, algorithm : str
        As for :func:`netsim.collectives.run_collective` (``ring`` means
        ``direct`` for alltoall and sendrecv).
    n : int
        Ranks.
    size_bytes : int
        Per-rank buffer ``S``, bytes (nccl-tests convention).
    bandwidth_bps : float
        Path bandwidth ``B``, bit/s.
    latency_s : float
        Per-step latency ``a``, s.
    chunk_bytes : int, optional
        Only for broadcast/reduce chains: the pipelining chunk.
    """
    if kind not in CLOSED_FORMS or algorithm not in CLOSED_FORMS[kind]:
        accepted = "; ".join(f"{k}: {', '.join(v)}" for k, v in CLOSED_FORMS.items())
        raise InputError("no closed form for this collective/algorithm", value=f"{kind}/{algorithm}",
                         accepted=accepted)
    if n <= 1 or size_bytes <= 0:
        return 0.0
    a = float(latency_s)
    b = 8.0 * size_bytes / bandwidth_bps
    if kind == "allreduce":
        if algorithm == "ring":
            return 2 * (n - 1) * a + 2 * (n - 1) / n * b
        if algorithm == "tree":
            return 2 * math.log2(n) * a + 2 * b
        p = 1 << (n.bit_length() - 1)
        t = 2 * math.log2(p) * a + 2 * (p - 1) / p * b
        return t if p == n else t + 2 * (a + b)
    if kind in ("reducescatter", "allgather"):
        if algorithm == "halving_doubling" and n & (n - 1) == 0:
            return math.log2(n) * a + (n - 1) / n * b
        return (n - 1) * a + (n - 1) / n * b
    if kind in ("broadcast", "reduce"):
        c = b if not chunk_bytes or chunk_bytes >= size_bytes else 8.0 * chunk_bytes / bandwidth_bps
        return (n - 1) * a + (n - 2) * c + b
    if kind == "alltoall":
        if algorithm == "pairwise":
            return (n - 1) * a + (n - 1) / n * b
        return a + (n - 1) / n * b
    return a + b  # sendrecv


def bus_factor(kind: str, n: int) -> float:
    """nccl-tests' busbw/algbw factor for ``kind`` on ``n`` ranks."""
    if kind not in _BUS_FACTOR:
        raise InputError("unknown collective", value=kind, accepted=", ".join(_BUS_FACTOR))
    return _BUS_FACTOR[kind](n)


def algorithm_bandwidth(size_bytes: int, time_s: float) -> float:
    """nccl-tests algbw = S / T, in bit/s."""
    return 8.0 * size_bytes / time_s if time_s > 0 else float("inf")


def bus_bandwidth(kind: str, n: int, size_bytes: int, time_s: float) -> float:
    """nccl-tests busbw = algbw * factor(kind, n), in bit/s (compare with a link's rate)."""
    return algorithm_bandwidth(size_bytes, time_s) * bus_factor(kind, n)
