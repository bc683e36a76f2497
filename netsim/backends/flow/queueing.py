"""Queueing delay of a fluid DCQCN flow's last byte: the wait the FIFO queues still owe it.

The fair-share solve credits a flow's bytes as delivered at its share of the
links, as if they crossed every switch at once. The fluid FIFO queues of
:mod:`.fifo` hold the same bytes in arrival order: a short flow that joins a
standing queue (DCQCN keeps one between Kmin and Kmax on a saturated egress,
400 KB–1.6 MB at 100 Gb/s with the ``hpcc`` preset) is served only after the
bytes ahead of it, as in the packet backend, while the solve finishes it at
once. A flow therefore completes when both are done: its fluid completion,
plus what :func:`fifo_wait_ps` says its last byte still has to wait there.

What is modelled, at the instant of the fluid completion (the FIFO
integrated to now):

* the queue that holds the flow's most upstream bytes: the bytes up to and
  including the flow's last segment, served at the link's capacity;
* every queue downstream of it on the flow's path: its standing queue at that
  instant, served at the link's capacity (the last byte joins its tail).

Left out: how the downstream queues change before the last byte reaches them
(their occupancy now stands for it), PFC pauses of a queue during the wait,
bytes the reaction point has not injected yet (the model's count of them is
not kept while it is at rest; the solve caps delivery near ``R_C``, so little
is left unsent at a fluid completion),
non-DCQCN traffic (it has no FIFO), propagation (already in the latency term).
A flow whose bytes the FIFO has already served owes nothing: a flow that runs
alone, or whose share kept pace with its queues, is unchanged.
"""
from __future__ import annotations

from .fifo import FifoNet, FifoQueue


def fifo_wait_ps(net: FifoNet, fid: int) -> float:
    """Time (ps) until flow ``fid``'s last byte leaves the last FIFO queue of its path.

    Parameters
    ----------
    net : FifoNet
        The fluid FIFO queues, integrated to now; ``fid`` still attached.
    fid : int
        The flow.

    Returns
    -------
    float
        The wait, ≥ 0; 0 when no queue of its path holds its bytes.
    """
    hops = net.nxt.get(fid)
    if hops is None:
        return 0.0
    queues, cap = net.queues, net.cap
    path = []                       # the flow's queue links, in path order
    l = hops[-1][0]
    while l is not None:
        path.append(l)
        l = hops[l][0]
    wait, first = 0.0, None         # first: index of the most upstream queue holding its bytes
    for i, l in enumerate(path):
        pos = _last_position(queues[l], fid)
        if pos > 0.0:
            wait, first = pos / cap[l], i
            break
    if first is None:
        return 0.0
    start = first + 1
    for l in path[start:]:
        qu = queues[l]
        wait += (qu.q + sum(qu.arrivals.values())) / cap[l]
    return wait


def _last_position(qu: FifoQueue, fid: int) -> float:
    """Bytes of queue ``qu`` up to and including flow ``fid``'s last bytes (0: none queued).

    This step's arrivals (not yet a segment) are behind every segment."""
    if qu.arrivals.get(fid, 0.0) > 0.0:
        return qu.q + sum(qu.arrivals.values())
    pos = 0.0
    last = 0.0
    for tot, comp in qu.segs:
        pos += tot
        if comp.get(fid, 0.0) > 0.0:
            last = pos
    return last
