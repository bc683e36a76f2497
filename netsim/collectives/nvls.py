"""NVLS: all-reduce, reduce-scatter and all-gather reduced and replicated inside an NVSwitch.

Modelled as NCCL's NVLS kernels move data (NCCL 2.17+, ``src/device/all_reduce.h``,
the ``NCCL_ALGO_NVLS`` case: ``multimem.ld_reduce`` then ``multimem.st``), on an
NVSwitch with ``nvls: true`` that every rank links to:

* **reduce-scatter through the switch**: the buffer is cut into ``n`` shards
  of ``S/n``; for every shard ``j`` each GPU ``i != j`` sends its part of shard
  ``j`` to the switch; when all ``n - 1`` parts of a chunk have arrived (the
  reduction is a join) the switch delivers *one* reduced chunk to GPU ``j`` —
  so a GPU's downlink carries ``S/n`` in this phase, its uplink ``S(n-1)/n``;
* **all-gather by multicast**: GPU ``j`` sends each chunk of its shard once to
  the switch (``S/n`` up), which replicates it to the ``n - 1`` others
  (``S(n-1)/n`` down per GPU);
* all-reduce = both, chunk by chunk (a reduced chunk is multicast as soon as
  it reaches its GPU), so each GPU's link carries ``S`` up and ``S`` down
  against the ring's ``2S(n-1)/n`` each way: :func:`closed_form_time_s`;
* chunks: the caller's ``chunk_bytes``, else NCCL's NVLS chunk
  (:data:`NVLS_PARAMS` ``nvls_chunk_bytes``); chunks of all shards are posted
  interleaved, the multicast phase on its own connections (channel offset).

Transfers end or start at the switch through
:meth:`netsim.backends.base.Backend.send_in_network` (backends declaring the
``in_network`` capability: analytic, flow and packet, where the NVSwitch
terminates and acknowledges the flows up and originates those down,
:mod:`netsim.backends.packet.innetwork`); a backend without it refuses NVLS
with a one-line error. Left out: the reduction's compute time in the switch,
the switch's multicast fan-out limits, NVLS-tree and CollNet/SHARP (still an
error on every backend), and NVLS buffer registration.
"""
from __future__ import annotations

from itertools import zip_longest

from ..backends.base import IN_ORDER
from ..errors import InputError
from ..params import Param, ParamTable
from .engine import Run
from .steps import split_even

NVLS_PARAMS = ParamTable("nvls", [
    Param("nvls_chunk_bytes", 128 * 1024, "size",
          "bytes of one NVLS chunk (the unit the switch reduces and multicasts) when the caller gives no "
          "chunk_bytes", "NCCL src/transport/nvls.cc: NCCL_PARAM(NvlsChunkSize, \"NVLS_CHUNKSIZE\", 128*1024)",
          minimum=1),
])
#: collectives NVLS runs (NCCL's tuning model allows NVLS for exactly these)
NVLS_KINDS = ("allreduce", "reducescatter", "allgather")


class InNetworkPort:
    """The backend seen by an NVLS :class:`~.engine.Run` (a :class:`~.engine.Port`): every ``send`` is
    ``send_in_network``; no batch path (``send_batch`` is ``None``: the chunks go one by one)."""

    send_batch = None

    def __init__(self, backend):
        self.env = backend.env
        self.graph = backend.graph
        self.name = backend.name
        self.send = backend.send_in_network
        self.capabilities = backend.capabilities
        if IN_ORDER in self.capabilities:       # the backend keeps a connection's chunks in post order
            fifo = backend.send_in_order
            self.send_in_order = lambda conn, src, dst, nbytes, tag: fifo(conn, src, dst, nbytes, tag,
                                                                          in_network=True)


def nvls_switch(graph, nodes: list[str]) -> str:
    """The NVSwitch with ``nvls: true`` every rank of ``nodes`` links to (first by name), else InputError."""
    if graph is not None:
        common = None
        for x in nodes:
            nvs = {y for y in graph.neighbors(x) if graph.nodes[y].get("kind") == "nvswitch"
                   and graph.nodes[y].get("nvls") is True}
            common = nvs if common is None else common & nvs
        if common:
            return sorted(common)[0]
    raise InputError("nvls needs every rank linked to one NVSwitch with nvls: true", where="collective algorithm",
                     value="nvls", accepted="ranks of one NVSwitch server whose nvswitch node has nvls: true, "
                     "or algorithm ring/tree")


def check_kind(kind: str) -> None:
    """InputError unless NVLS runs ``kind``."""
    if kind not in NVLS_KINDS:
        raise InputError(f"nvls does not run {kind}", where="collective algorithm", value="nvls",
                         accepted=f"nvls for {', '.join(NVLS_KINDS)}; ring or tree otherwise")


def _chunks(run: Run, shard_sizes: list[int], channels: int) -> list[tuple[int, int, int]]:
    """``(channel, shard, nbytes)`` of every chunk, interleaved across shards (chunk 0 of each, then 1 ...)."""
    per_shard = []
    for j, seg in enumerate(shard_sizes):
        per_shard.append([(ch, j, nb) for ch, part in enumerate(split_even(seg, channels))
                          for nb in run.pieces(part)])
    return [c for row in zip_longest(*per_shard) for c in row if c is not None]


def _reduce(run: Run, nodes, switch, ch, j, nbytes, step, then) -> None:
    """GPUs ``i != j`` send a chunk of shard ``j`` up; when all arrived the switch sends the sum to ``j``."""
    n = len(nodes)
    left = [n - 1]

    def arrived(_rec):
        left[0] -= 1
        if left[0] == 0:
            run.send(ch, switch, nodes[j], nbytes, step + 1, then)
    for i in range(n):
        if i != j:
            run.send(ch, nodes[i], switch, nbytes, step, arrived)


def _multicast(run: Run, nodes, switch, ch, j, nbytes, step, tick) -> None:
    """GPU ``j`` sends a chunk up once; the switch replicates it to every other GPU."""
    def up(_rec):
        for k in range(len(nodes)):
            if k != j:
                run.send(ch, switch, nodes[k], nbytes, step + 1, tick)
    run.send(ch, nodes[j], switch, nbytes, step, up)


def run_nvls(run: Run, kind: str, nodes: list[str], size_bytes: int, channels: int, switch: str):
    """NVLS ``kind`` of ``size_bytes`` (nccl-tests convention) on ``nodes`` through ``switch``; a generator."""
    n = len(nodes)
    jobs = _chunks(run, split_even(size_bytes, n), channels)
    fan = 1 if kind == "reducescatter" else n - 1
    done, tick = run.counter(len(jobs) * fan)
    mc = channels                          # the multicast phase's connections: channels mc .. 2*mc-1
    for ch, j, nb in jobs:
        if kind == "allgather":
            _multicast(run, nodes, switch, ch + mc, j, nb, 0, tick)
        elif kind == "reducescatter":
            _reduce(run, nodes, switch, ch, j, nb, 0, tick)
        else:
            _reduce(run, nodes, switch, ch, j, nb, 0,
                    lambda _r, ch=ch, j=j, nb=nb: _multicast(run, nodes, switch, ch + mc, j, nb, 2, tick))
    yield done


def link_bytes(kind: str, n: int, size_bytes: int) -> tuple[float, float]:
    """Bytes one GPU's link carries (up, down) in NVLS ``kind`` of ``size_bytes`` (even shards)."""
    shard = size_bytes / n
    if kind == "reducescatter":
        return (n - 1) * shard, shard
    if kind == "allgather":
        return shard, (n - 1) * shard
    return float(size_bytes), float(size_bytes)


def closed_form_time_s(kind: str, n: int, size_bytes: int, rate_bps: float) -> float:
    """Bandwidth term of NVLS ``kind``: the busier direction of a GPU's link at ``rate_bps``, seconds.

    Chunked NVLS is link-bound: its time tends to this as chunks get small
    against the buffer (pipeline fill and per-hop latency are left out).
    """
    return max(link_bytes(kind, n, size_bytes)) * 8 / rate_bps
