"""Chakra ``GATHER``/``SCATTER`` as point-to-point fan-in/fan-out, and what a ``BARRIER`` moves.

netsim has no gather or scatter collective; their traffic is exact as
point-to-point transfers: ``GATHER`` — every other member of the ``pg_name``
group sends its share to the root; ``SCATTER`` — the root sends each other
member its share.  The root is the group's first member (Chakra names no
root, as for ``BROADCAST``/``REDUCE``).  ``comm_size`` is read as the full
buffer at the root (the gather's output, the scatter's input), as ASTRA-sim
reads it for all-gather; member k's share is ``comm_size·(k+1)//n −
comm_size·k//n`` bytes (n members), so the shares sum to ``comm_size``.  The
transfers of one gather (scatter) start independently — NCCL-style
``send``/``recv`` pairs, no tree.  The node on the root stands for all of
them: the root's next nodes wait for the whole fan.
"""
from __future__ import annotations

from .chakra_schema import COLL_TYPES

#: bytes a BARRIER all-reduces: PyTorch's NCCL process group implements ``barrier()`` as an all-reduce of a
#: one-element float32 tensor (ProcessGroupNCCL::barrier)
BARRIER_BYTES = 4
#: Chakra CollectiveCommType -> direction of the fan ("in": members → root, "out": root → members)
FAN = {COLL_TYPES["GATHER"]: "in", COLL_TYPES["SCATTER"]: "out"}


def share_bytes(size: int, k: int, n: int) -> int:
    """Member ``k``'s share of a ``size``-byte buffer split n ways (the shares sum to ``size``)."""
    return size * (k + 1) // n - size * k // n


def fan_ops(m, rank: int, node, a: dict, pg: str, seq: int, members: tuple, size: int, way: str) -> tuple:
    """The send ops of gather/scatter ``seq`` of group ``pg`` that ``rank``'s node stands for (made once).

    Parameters
    ----------
    m : netsim.importers.chakra._Merger
        The merger holding the op list.
    way : str
        ``"in"`` (gather) or ``"out"`` (scatter).
    """
    key = ("fan", pg, seq)
    name = "GATHER" if way == "in" else "SCATTER"
    got = m.pending.get(key)
    if got is None:
        root, n = members[0], len(members)
        idxs = []
        for k, peer in enumerate(members):
            if peer == root:
                continue
            src, dst = (peer, root) if way == "in" else (root, peer)
            idxs.append(m._new((node.id, rank), name=f"{node.name or pg}.{name.lower()}{seq}.{src}-{dst}",
                               kind=a.get("netsim.kind", "dp"), ranks=(src, dst), group=pg, collective="send",
                               size_bytes=share_bytes(size, k, n), spec=m._spec(a), sizes=None))
        got = (tuple(idxs), way, size)
        m.pending[key] = got
    idxs, first_way, first_size = got
    if (first_way, first_size) != (way, size):
        m._err(rank, node, f"collective {seq} of group {pg} differs between ranks", "attr comm_type/comm_size",
               f"{name} of {size} B", "the same collective on every member")
    if rank == members[0]:
        return idxs
    return tuple(i for i in idxs if rank in m.ops[i]["ranks"])
