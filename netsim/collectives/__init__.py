"""Collective communication written once against the Backend seam.

Collectives never see packets: they call ``backend.send(src, dst, size_bytes,
tag)`` and wait on SimPy events of ``backend.env``, so the same all-reduce runs
on the packet, flow and analytic backends.

API
---
``run_collective(backend, kind, nodes, size_bytes, *, algorithm="ring",
channels=1, chunk_bytes=None, tag=EMPTY_TAG, root=0, sizes=None,
node_groups=None, window=None, protocol="simple", sw_latency="off") -> simpy.Process``
— starts now; the process's value is a :class:`CollectiveResult` (kind,
algorithm actually used, n, size_bytes, start_ps, end_ps, flows, bytes_sent,
protocol, ``time_s``).

``collective(...)`` — same arguments, a generator: ``res = yield from
collective(backend, "allreduce", ranks, S, tag=tag)`` inside a SimPy process.

* ``kind``: ``allreduce``, ``reducescatter``, ``allgather``, ``broadcast``,
  ``reduce``, ``alltoall``, ``sendrecv`` (``nodes=[src, dst]``).
* ``nodes``: rank order (rank ``i`` = ``nodes[i]``), distinct graph nodes.
* ``size_bytes`` (nccl-tests convention): the per-rank buffer ``S`` —
  all-reduce ``S`` in and out; all-gather ``S`` = total output per rank;
  reduce-scatter ``S`` = input per rank; broadcast/reduce ``S``; all-to-all
  ``S`` = per-rank send buffer split evenly over the ``n`` ranks (or
  ``sizes[i][j]`` bytes from rank i to j, an n x n matrix, for MoE traffic).
* ``algorithm``: allreduce ``ring | tree | halving_doubling | hierarchical``;
  reducescatter/allgather ``ring | halving_doubling``; broadcast/reduce
  ``ring | tree``; alltoall ``direct | pairwise``; sendrecv ``direct``. The
  default ``"ring"`` means ``direct`` for alltoall and sendrecv.
  ``halving_doubling`` reduce-scatter/all-gather on a non-power-of-two ``n``
  falls back to ``ring`` (the result's ``algorithm`` says so); all-reduce
  uses the MPICH fold (see :mod:`.halving_doubling`).
* ``channels``: the buffer is split over that many parallel channels, each
  with its own connections (ring: same ring order; tree: a double binary
  tree per channel).
* ``chunk_bytes``: a step's data is cut into chunks that move through the
  algorithm independently (pipelining); ``None`` sends each step whole.
* ``tag``: the caller's :class:`~netsim.records.FlowTag`; every flow gets a
  copy with ``collective=kind`` and ``step`` = the algorithm step.
* ``root``: index into ``nodes`` (broadcast, reduce).
* ``node_groups``: for ``hierarchical``, the ranks of each server in
  local-index order (default: grouped by the graph's ``server`` attribute, else by
  scale-up domain, :mod:`netsim.topology.domains`).
* ``window``: chunks in flight per connection (default
  ``COLLECTIVE_PARAMS['connection_window_chunks']`` = 2).

``n == 1`` or zero bytes completes immediately with no flow. Unknown kind or
algorithm, bad sizes, etc. raise :class:`~netsim.errors.InputError` naming
what is accepted.

Closed forms: :func:`closed_form_time_s` and :func:`bus_bandwidth` (nccl-tests
algbw/busbw) in :mod:`.cost`.

* ``protocol``: ``simple`` (default), ``ll``, ``ll128`` (their wire bytes) or
  ``auto``; ``sw_latency``: ``"off"`` (default), ``"nccl"`` or a
  :class:`SwLatency` — software latency once per call and per step, applied
  here on every backend (:mod:`.protocol`); ``algorithm="auto"``: NCCL's
  tuning model (:mod:`.tuning`) chooses algorithm and protocol.

``algorithm="nvls"`` (all-reduce, reduce-scatter, all-gather on ranks of one
NVSwitch with ``nvls: true``): reduced and multicast in the switch
(:mod:`.nvls`) on the backends declaring ``in_network`` (analytic, flow, packet:
there the switch terminates, acknowledges and originates the transport flows,
:mod:`netsim.backends.packet.innetwork`).

``algorithm="collnet"`` (all-reduce on ranks of several servers whose NICs'
rail switches have ``sharp: true``): intra-server ring phases around an
all-reduce reduced in the rail switch (:mod:`.collnet`), same backends.

Left out everywhere: reduction compute time.

Example
-------
>>> import networkx as nx, simpy
>>> from netsim.backends.base import create_backend
>>> g = nx.Graph()
>>> g.add_node("sw", kind="switch")
>>> for i in range(4):
...     g.add_node(f"h{i}", kind="host")
...     g.add_edge(f"h{i}", "sw", rate_bps=8e9, delay_ns=0, kind="ethernet")
>>> be = create_backend("analytic", g, params={"header_bytes": 0})
>>> p = run_collective(be, "allreduce", ["h0", "h1", "h2", "h3"], 4_000_000)
>>> be.env.run()
>>> round(p.value.time_s * 1e3, 6)  # ms: 2(n-1)/n*S/B = 6 ms, + 2(n-1) steps x 1.5 us store-and-forward
6.009
"""
from __future__ import annotations

from .api import ALGORITHMS, KINDS, collective, run_collective
from .cost import algorithm_bandwidth, bus_bandwidth, bus_factor, closed_form_time_s
from .engine import COLLECTIVE_PARAMS
from .steps import CollectiveResult, pieces, split_even
from .protocol import TUNING_PARAMS, SwLatency

__all__ = ["ALGORITHMS", "KINDS", "COLLECTIVE_PARAMS", "CollectiveResult", "collective", "run_collective",
           "closed_form_time_s", "bus_bandwidth", "bus_factor", "algorithm_bandwidth", "pieces", "split_even",
           "SwLatency", "TUNING_PARAMS"]
