"""Ring algorithms: all-reduce, reduce-scatter, all-gather, and chain broadcast / reduce.

Modelled (as NCCL's ring kernels do):

* ranks ``nodes[0] -> nodes[1] -> ... -> nodes[n-1] -> nodes[0]``; every
  channel uses the same ring order and carries its own ``1/channels`` share of
  every segment on its own connections (NCCL's channels inside one NVSwitch
  server are parallel rings of the same order);
* the buffer is cut into ``n`` segments (sizes differing by at most a byte),
  each segment into ``channels`` parts; segment ``s`` of an
  all-reduce starts at rank ``s`` and travels ``2(n-1)`` hops — the first
  ``n-1`` reduce it (reduce-scatter), the last ``n-1`` copy it (all-gather).
  Hop ``h`` is algorithm step ``h``: at step ``k`` rank ``r`` sends segment
  ``(r-k) mod n``. A rank forwards a chunk at step ``k+1`` only after it
  received that chunk at step ``k`` (data dependency);
* chunks: a segment is cut into ``chunk_bytes`` pieces, each travelling the
  ring on its own, so steps overlap (pipelining);
* broadcast / reduce: a chain along the ring from the root (broadcast) or
  ending at the root (reduce), chunks pipelined.

Left out: the reduction's compute time, NCCL's LL/LL128 protocols (flag
overheads) and the FIFO slot back-pressure of a receiver.
"""
from __future__ import annotations

from .engine import Run
from .steps import split_even


class _Chunk:
    """One chunk going round the ring: its channel, bytes, the rank it is at and its hop (one object
    per chunk; its bound :meth:`arrived` is each hop's completion callback, no closure per hop)."""

    __slots__ = ("chains", "ch", "rank", "h", "nbytes")

    def __init__(self, chains: "_Chains", ch: int, rank: int, nbytes: int):
        self.chains, self.ch, self.rank, self.h, self.nbytes = chains, ch, rank, 0, nbytes

    def send(self) -> None:
        """Send this chunk's hop ``h`` from its rank to the next."""
        c = self.chains
        rank = self.rank
        nxt = self.rank = (rank + 1) % c.n
        c.run.send(self.ch, c.nodes[rank], c.nodes[nxt], self.nbytes, c.step_offset + self.h, self.arrived)

    def arrived(self, _rec) -> None:
        """Hop ``h`` arrived: forward the chunk (data dependency), or count it done after the last hop."""
        h = self.h + 1
        if h < self.chains.hops:
            self.h = h
            self.send()
        else:
            self.chains.tick()


class _Chains:
    """What the chunks of one :func:`_chains` call share."""

    __slots__ = ("run", "nodes", "n", "hops", "step_offset", "tick")

    def __init__(self, run: Run, nodes: list[str], hops: int, step_offset: int, tick):
        self.run, self.nodes, self.n, self.hops, self.step_offset, self.tick = \
            run, nodes, len(nodes), hops, step_offset, tick


def _chains(run: Run, nodes: list[str], size_bytes: int, channels: int, hops: int, start_offset: int,
            step_offset: int = 0, origins: list[int] | None = None):
    """Send every chunk of every segment ``hops`` hops round the ring; generator finishing when done.

    Segment ``s`` starts at rank ``(s + start_offset) mod n``. ``origins`` lists
    which segments to send (default all ``n``); a chain of one rank for
    broadcast/reduce passes ``origins=[0]`` with one "segment" = the buffer.
    """
    n = len(nodes)
    jobs = []
    segs = split_even(size_bytes, n) if origins is None else [size_bytes]
    seg_ids = range(n) if origins is None else origins
    for seg_bytes, s in zip(segs, seg_ids):
        for ch, part in enumerate(split_even(seg_bytes, channels)):
            for nbytes in run.pieces(part):
                jobs.append((ch, (s + start_offset) % n, nbytes))
    done, tick = run.counter(len(jobs))
    chains = _Chains(run, nodes, hops, step_offset, tick)
    opened = run.open_batch()           # the first wave: one send_batch call
    for ch, start, nbytes in jobs:
        _Chunk(chains, ch, start, nbytes).send()
    if opened:
        run.close_batch()
    yield done


def allreduce(run: Run, nodes, size_bytes, channels, step_offset=0):
    """Ring all-reduce: ``2(n-1)`` steps, each rank sends ``2(n-1)/n * S`` bytes."""
    n = len(nodes)
    yield from _chains(run, nodes, size_bytes, channels, 2 * (n - 1), 0, step_offset)


def reducescatter(run: Run, nodes, size_bytes, channels, step_offset=0):
    """Ring reduce-scatter of an ``S``-byte input: segment ``s`` ends, reduced, at rank ``s``."""
    n = len(nodes)
    yield from _chains(run, nodes, size_bytes, channels, n - 1, 1, step_offset)


def allgather(run: Run, nodes, size_bytes, channels, step_offset=0):
    """Ring all-gather of an ``S``-byte output: segment ``s`` starts at rank ``s``."""
    n = len(nodes)
    yield from _chains(run, nodes, size_bytes, channels, n - 1, 0, step_offset)


def broadcast(run: Run, nodes, size_bytes, channels, root=0):
    """Pipelined chain broadcast from ``nodes[root]`` round the ring (``n-1`` hops per chunk)."""
    n = len(nodes)
    yield from _chains(run, nodes, size_bytes, channels, n - 1, root, 0, origins=[0])


def reduce(run: Run, nodes, size_bytes, channels, root=0):
    """Pipelined chain reduce ending at ``nodes[root]`` (starts at ``root+1``)."""
    n = len(nodes)
    yield from _chains(run, nodes, size_bytes, channels, n - 1, root + 1, 0, origins=[0])
