"""Per-rank Chakra ET files from one iteration of netsim ops (``netsim export chakra``).

Rank r's file ``NAME.r.et`` holds the ops rank r takes part in, in netsim's
op order, with node id = the op's index in the iteration (so a collective has
the same id on every member):

============================  =================================================
netsim op                     Chakra node
============================  =================================================
compute / optimizer           ``COMP_NODE``, ``duration_micros`` (rounded)
allreduce/allgather/...       ``COMM_COLL_NODE``; attrs ``comm_type``,
                              ``comm_size`` (nccl-tests size: all-gather and
                              reduce-scatter the full buffer), ``pg_name``
send (src → dst)              ``COMM_SEND_NODE`` on src, ``COMM_RECV_NODE`` on
                              dst; attrs ``comm_src``, ``comm_dst``,
                              ``comm_tag``, ``comm_size``
============================  =================================================

``data_deps`` are the op's dependencies that rank r also takes part in.
netsim-only detail rides in attrs named ``netsim.*`` (exact ``duration_ps``,
the op kind, collective algorithm/channels/chunk size, the MoE all-to-all
matrix) that other tools ignore.  Beside the traces, ``comm_group.json`` maps
each ``pg_name`` to its ranks in ring order (ASTRA-sim's communicator-group
file).  GlobalMetadata attr ``netsim.explicit_streams`` tells netsim's importer
that the dependencies are complete: netsim ops of one rank that run side by
side (a SimAI ``update`` delay beside the next layer's compute) stay side by
side on re-import.  ASTRA-sim ignores the attr and runs a rank's COMP nodes one
at a time.  Left out: tensor shapes (``inputs``/``outputs``) and FLOP counts.
"""
from __future__ import annotations

import json
import os

from .chakra_schema import COLL_TYPES, NODE_TYPES, GlobalMetadata, Node
from .etstream import join_messages

PS_PER_US = 10**6
#: netsim collective name -> Chakra CollectiveCommType name
COLL_OF = {"allreduce": "ALL_REDUCE", "allgather": "ALL_GATHER", "reducescatter": "REDUCE_SCATTER",
           "alltoall": "ALL_TO_ALL", "broadcast": "BROADCAST", "reduce": "REDUCE"}
SCHEMA_VERSION = "0.0.4"
#: GlobalMetadata attr: every stream order is a dependency already (netsim's op graph), so the importer must
#: not serialise the rank's COMP nodes again (a SimAI ``update`` delay overlaps compute: it is no COMP work)
EXPLICIT_STREAMS_ATTR = "netsim.explicit_streams"


def _sw_attrs(n, spec) -> None:
    """NCCL protocol and software latency of the op (netsim's own attrs; defaults are not written)."""
    if spec.protocol != "simple":
        _attr(n, "netsim.protocol", string_val=spec.protocol)
    lat = spec.sw_latency
    if isinstance(lat, str):
        if lat != "off":
            _attr(n, "netsim.sw_latency", string_val=lat)
    else:
        for field in ("launch_ns", "step_ns", "step_inter_ns"):
            n.attr.add(name=f"netsim.sw_latency.{field}").double_val = float(getattr(lat, field))


def _attr(node, name: str, **value) -> None:
    node.attr.add(name=name, **value)


def _node(op, idx: int, rank: int, index_of: dict):
    n = Node(id=idx, name=op.name)
    n.data_deps.extend(sorted({index_of[id(d)] for d in op.deps if id(d) in index_of and rank in d.ranks}))
    _attr(n, "netsim.kind", string_val=op.kind)
    if op.kind in ("compute", "optimizer"):
        n.type = NODE_TYPES["COMP_NODE"]
        n.duration_micros = round(op.duration_ps / PS_PER_US)
        _attr(n, "netsim.duration_ps", int64_val=op.duration_ps)
        return n
    if op.collective == "send":
        src, dst = op.ranks
        n.type = NODE_TYPES["COMM_SEND_NODE" if rank == src else "COMM_RECV_NODE"]
        _attr(n, "comm_src", int32_val=src)
        _attr(n, "comm_dst", int32_val=dst)
        _attr(n, "comm_tag", int32_val=idx)
    else:
        n.type = NODE_TYPES["COMM_COLL_NODE"]
        _attr(n, "comm_type", int64_val=COLL_TYPES[COLL_OF[op.collective]])
    _attr(n, "comm_size", int64_val=op.size_bytes)
    _attr(n, "pg_name", string_val=op.group)
    spec = op.spec
    if spec is not None:
        _attr(n, "netsim.algorithm", string_val=spec.algorithm)
        _attr(n, "netsim.channels", int64_val=spec.channels)
        if spec.chunk_bytes is not None:
            _attr(n, "netsim.chunk_bytes", int64_val=spec.chunk_bytes)
        _sw_attrs(n, spec)
    if op.sizes is not None:
        flat = [int(v) for row in op.sizes for v in row]
        n.attr.add(name="netsim.sizes").int64_list.values.extend(flat)
    return n


def write_chakra(ops, world_size: int, out_dir: str, name: str) -> list[str]:
    """Write ``NAME.<rank>.et`` for each rank and ``comm_group.json``; returns the paths written.

    Parameters
    ----------
    ops : list of netsim.workloads.ops.Op
        One iteration, in dependency order.
    world_size : int
    out_dir, name : str
        Folder and file-name prefix.
    """
    os.makedirs(out_dir, exist_ok=True)
    index_of = {id(op): i for i, op in enumerate(ops)}
    per_rank: list[list] = [[] for _ in range(world_size)]
    groups: dict[str, list] = {}
    for i, op in enumerate(ops):
        if op.group and op.collective != "send":
            groups.setdefault(op.group, list(op.ranks))
        for r in op.ranks:
            per_rank[r].append(_node(op, i, r, index_of))
    paths = []
    for r, nodes in enumerate(per_rank):
        meta = GlobalMetadata(version=SCHEMA_VERSION)
        meta.attr.add(name="netsim.rank", int64_val=r)
        meta.attr.add(name="netsim.world_size", int64_val=world_size)
        meta.attr.add(name=EXPLICIT_STREAMS_ATTR, bool_val=True)
        path = os.path.join(out_dir, f"{name}.{r}.et")
        with open(path, "wb") as f:
            f.write(join_messages([meta.SerializeToString()] + [n.SerializeToString() for n in nodes]))
        paths.append(path)
    gpath = os.path.join(out_dir, "comm_group.json")
    with open(gpath, "w") as f:
        json.dump(groups, f, indent=1, sort_keys=True)
        f.write("\n")
    return paths + [gpath]


def workload_ops(workload, graph=None, *, overrides=None, workload_format=None, seed: int = 0):
    """(name, world size, iteration-0 ops) of any workload netsim runs: a netsim YAML or an imported job.

    Without ``graph``, ranks are placed on placeholder GPU names (``rank0`` …): a netsim workload's op
    graph depends on the topology only through ``placement.nic: nic_aware``, ``placement.gpus`` and
    ``partition: balanced``, which then need ``graph``.
    """
    from ..errors import InputError
    from ..runtime.job import make_builder
    from ..workloads import load_workload, place
    from ..workloads.placement import resolve_partition
    from . import detect_job
    job = detect_job(workload, workload_format, overrides=overrides, graph=graph)
    if job is not None:
        return job.name, job.world_size, job.builder().build(0)
    wl = load_workload(workload, overrides=overrides)
    if graph is None:
        need = [f for f, on in (("placement.nic: nic_aware", wl.nic == "nic_aware"),
                                ("placement.gpus", wl.gpus is not None),
                                ("partition: balanced", wl.partition in ("balanced", "speed_balanced"))) if on]
        if need:
            raise InputError("the op graph depends on the topology", source=wl.source, where=f"field {need[0]}",
                             value=need[0], accepted="--topology TOPOLOGY")
        pl = place(wl, gpu_names=[f"rank{r}" for r in range(wl.world_size)])
    else:
        pl = place(wl, graph)
        wl = resolve_partition(wl, pl, graph)
    return wl.name, pl.world_size, make_builder(wl, pl, seed).build(0)
