"""The ECMP key of a flow: the key of its connection, the same on every backend.

A flow's equal-cost path is :meth:`netsim.topology.Router.path` ``(src, dst,
key, seed)``. The key must not depend on anything a backend decides (flow ids
follow completion order, which differs by nanoseconds between backends), nor on
how the workload was written down (a workload's file name is ``tag.tag``
natively and ``"job"`` once imported from Chakra). It is therefore the key of
the flow's **connection**, as a RoCE fabric sees it:

* NCCL's IB/RoCE transport opens, per channel and peer, one connection of
  ``NCCL_IB_QPS_PER_CONNECTION`` queue pairs (default 1:
  ``NCCL_PARAM(IbQpsPerConn, "IB_QPS_PER_CONNECTION", 1)`` in
  ``src/transport/net_ib/connect.cc``), kept for the communicator's lifetime;
* NCCL moves a RoCE QP to RTR with ``grh.flow_label = 0`` (``ncclIbQpRtr``,
  same file), and with flow label 0 the Linux RDMA core derives the RoCEv2 UDP
  source port from the two QP numbers (``rdma_get_udp_sport(fl, lqpn, rqpn)``
  in ``include/rdma/ib_verbs.h``, used by the rxe, irdma, hns and mana drivers;
  mlx5 picks it in firmware, which we could not source): one source port per
  QP, so every chunk a channel sends to a peer hashes to one path.

So the key is the CRC-32 (0 .. 2**32 - 1) of ``src``, ``dst``, the cluster
``job`` (jobs have their own communicators and QPs), the communicator (the
tag's ``group``, e.g. ``dp3``, or its ``op`` when it has no group) and the
``channel`` (:attr:`netsim.records.FlowTag.channel`, set by the collectives
engine per connection ``(channel, src, dst)``, pipeline send/recv included;
-1 for a Python API send with no channel: one connection per pair and
communicator then), joined with the ASCII unit separator. No iteration, step, op counter or workload
label: a communicator's QPs persist across iterations, so a connection takes
the **same path every iteration**, and two connections that collide on a link
collide in every iteration (persistent ECMP collisions, a known effect of
static ECMP on training fabrics). Left out: several QPs per connection
(``NCCL_IB_QPS_PER_CONNECTION > 1`` spreads one channel's messages over
several source ports), QPs re-created between iterations, and the NIC's real
hash (the key only has to be a fixed function of the connection).

A flow of a flow file (``netsim flows``: its tag's ``row`` is set) or a
cluster run's background flow (each its own connection; its row in the
generated trace) is keyed by its row instead (from 0; for a file in start order that is its flow id, so its
paths are those of the releases that hashed flow ids). Either way the key is
written to ``fct.csv`` as ``path_key`` so that analysis re-derives the path the
backend used. Local copies (``src == dst``) are not routed and get no key
(:data:`NO_KEY`).

Memory: :class:`FlowKeys` caches the key of at most :data:`CONNECTION_CACHE`
connections (emptied when full, so bounded whatever the number of finished
flows); a run's flows reuse few connections (a ring all-reduce on ``n`` ranks
and ``c`` channels: ``n * c``).

>>> from netsim.records import FlowTag
>>> keys = FlowKeys()
>>> t0 = FlowTag(tag="w", iteration=0, op="dp0.allreduce", group="dp0", step=3, channel=1)
>>> t1 = FlowTag(tag="imported", iteration=5, op="dp0.allreduce.1", group="dp0", step=0, channel=1)
>>> keys.key("g0", "g1", t0) == keys.key("g0", "g1", t1) == flow_key("g0", "g1", t0), len(keys)
(True, 1)
"""
from __future__ import annotations

import zlib

from ..records import FlowTag

#: ``path_key`` of a flow that is not routed (a local copy), and of rows written before keys existed
NO_KEY = -1
_SEP = "\x1f"       # ASCII unit separator: not in node, op or group names
#: connections whose key :class:`FlowKeys` keeps (about 150 B each; emptied when full)
CONNECTION_CACHE = 1 << 16


def connection_of(src: str, dst: str, tag: FlowTag) -> tuple:
    """The connection ``(src, dst, job, communicator, channel)`` a flow from ``src`` to ``dst`` with
    ``tag`` is sent on; the communicator is the tag's ``group``, or its ``op`` when the group is empty."""
    return (src, dst, tag.job, tag.group or tag.op, tag.channel)


def connection_key(connection: tuple) -> int:
    """The ECMP key (CRC-32, 0 .. 2**32 - 1) of ``connection`` (as :func:`connection_of` gives it)."""
    return zlib.crc32(_SEP.join(map(str, connection)).encode())


def flow_key(src: str, dst: str, tag: FlowTag) -> int:
    """The ECMP key of a flow from ``src`` to ``dst`` with ``tag``: its row for a flow-file row, else
    the key of its connection."""
    return tag.row if tag.row >= 0 else connection_key(connection_of(src, dst, tag))


def route_key(path_key: int, flow_id: int) -> int:
    """The key to route a recorded flow (an ``fct.csv`` row) with: its ``path_key``, or for
    a row without one (``-1``: written before path keys existed, when every backend hashed
    the flow id) its ``flow_id``.

    >>> route_key(123, 7), route_key(NO_KEY, 7)
    (123, 7)
    """
    return path_key if path_key >= 0 else flow_id


class FlowKeys:
    """The connection keys of one run; :meth:`key` gives each sent flow its ECMP key.

    Every backend owns one and calls :meth:`key` once per routed flow. The key
    is a pure function of the flow (:func:`flow_key`); this object only caches
    it per connection, at most :data:`CONNECTION_CACHE` of them.
    """

    __slots__ = ("_keys",)

    def __init__(self):
        self._keys: dict[tuple, int] = {}       # connection -> its key

    def key(self, src: str, dst: str, tag: FlowTag) -> int:
        """The key of a flow from ``src`` to ``dst`` with ``tag`` (a flow-file row: its row)."""
        if tag.row >= 0:
            return tag.row
        conn = (src, dst, tag.job, tag.group or tag.op, tag.channel)     # connection_of, inlined (per flow)
        keys = self._keys
        k = keys.get(conn)
        if k is None:
            if len(keys) >= CONNECTION_CACHE:
                keys.clear()
            k = keys[conn] = connection_key(conn)
        return k

    def __len__(self) -> int:
        """Connections whose key is cached (at most :data:`CONNECTION_CACHE`)."""
        return len(self._keys)
