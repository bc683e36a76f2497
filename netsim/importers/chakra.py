"""Chakra execution traces (per-rank ``NAME.<rank>.et``) → an :class:`ImportedJob`.

Each rank's file is a length-delimited stream (:mod:`.etstream`):
``GlobalMetadata`` then ``Node`` messages (:mod:`.chakra_schema`).  The
per-rank DAGs (``data_deps`` and ``ctrl_deps``) are merged into netsim's one
graph: a compute node is an op of its rank; the k-th collective of a
``pg_name`` on every member rank is *one* op (members from the
communicator-group JSON, default all ranks; every member must have it, with the
same type and size); a ``COMM_SEND_NODE`` on src and the matching
``COMM_RECV_NODE`` on dst (same src, dst, ``comm_tag``, in order) are one
``send`` op.  An op waits for the union of its nodes' dependencies.

Sizes: ``comm_size`` is taken as ASTRA-sim consumes it, the collective's full
buffer (ASTRA-sim's ring splits ``comm_size`` into one chunk per member): the
all-reduce buffer, the all-gather *output*, the reduce-scatter *input* — the
nccl-tests size netsim's ops use, so no conversion.  A rank runs its compute
nodes one at a time, in dependency order (ties: node id), as ASTRA-sim's
per-NPU compute resource does — unless every file's GlobalMetadata has
``netsim.explicit_streams`` (netsim wrote it: its dependencies already are
the streams); communication overlaps compute.  Compute time:
``duration_micros`` (µs), or ``netsim.duration_ps`` when netsim wrote the file,
or attr ``num_ops`` (FLOPs) / ``peak_flops`` when the duration is 0.
``MEM_LOAD_NODE``/``MEM_STORE_NODE`` are local compute-stream ops of their
duration; ``METADATA_NODE`` is a pass-through.  Group kind (for summaries):
``netsim.kind`` when present, else ``ep`` for all-to-all, ``pp`` for
send/recv, ``dp`` for other collectives.  ``BROADCAST`` and ``REDUCE`` are
rooted at the group's first member (Chakra names no root).
``REDUCE_SCATTER_BLOCK`` (equal blocks) is a reduce-scatter; ``BARRIER`` an
all-reduce of :data:`~.chakra_fan.BARRIER_BYTES`; ``GATHER``/``SCATTER`` are
point-to-point fan-in/fan-out at the root (:mod:`.chakra_fan`).  Left out:
storage, batch and checkpoint nodes (an error naming the node id and type),
tensor shapes.
"""
from __future__ import annotations

import os
import re

from ..errors import InputError
from ..workloads.schema import CollectiveSpec
from .chakra_io import attrs, load_groups, read_et, trace_files
from .chakra_schema import COLL_TYPES, NODE_TYPES
from .chakra_fan import BARRIER_BYTES, FAN as _FAN, fan_ops
from .chakra_write import EXPLICIT_STREAMS_ATTR
from .job import ImportedJob, OpTemplate

PS_PER_US = 10**6
_TYPE_NAME = {v: k for k, v in NODE_TYPES.items()}
_COLL = {COLL_TYPES["ALL_REDUCE"]: "allreduce", COLL_TYPES["ALL_GATHER"]: "allgather",
         COLL_TYPES["REDUCE_SCATTER"]: "reducescatter", COLL_TYPES["ALL_TO_ALL"]: "alltoall",
         COLL_TYPES["BROADCAST"]: "broadcast", COLL_TYPES["REDUCE"]: "reduce",
         COLL_TYPES["REDUCE_SCATTER_BLOCK"]: "reducescatter", COLL_TYPES["BARRIER"]: "allreduce"}
_COLL_NAME = {v: k for k, v in COLL_TYPES.items()}
_PASS = {NODE_TYPES["METADATA_NODE"]}
_LOCAL = {NODE_TYPES["COMP_NODE"], NODE_TYPES["MEM_LOAD_NODE"], NODE_TYPES["MEM_STORE_NODE"]}
_COMM = {NODE_TYPES["COMM_COLL_NODE"], NODE_TYPES["COMM_SEND_NODE"], NODE_TYPES["COMM_RECV_NODE"]}


class _Merger:
    """Builds the global op list from the per-rank node lists."""

    def __init__(self, files, groups, peak_flops):
        self.files, self.groups, self.peak = files, groups, peak_flops
        self.explicit_streams = True       # cleared by any rank whose metadata lacks netsim.explicit_streams
        self.world = len(files)
        self.ops: list[dict] = []          # {tmpl fields, "deps": set of op idx, "key": sort key, "members": {}}
        self.op_of: list[dict] = [dict() for _ in files]   # rank -> node id -> op idx (or list for pass-through)
        self.coll_seq: dict[tuple, int] = {}
        self.pending: dict[tuple, int] = {}

    def _err(self, rank, node, msg, field, value, accepted):
        raise InputError(msg, source=self.files[rank], where=f"node {node.id} ({node.name!r}), {field}",
                         value=value, accepted=accepted)

    def _new(self, key, **fields) -> int:
        self.ops.append(dict(fields, deps=set(), key=key, members=set()))
        return len(self.ops) - 1

    def _duration_ps(self, rank, node, a) -> int:
        if "netsim.duration_ps" in a:
            return int(a["netsim.duration_ps"])
        if node.duration_micros or "num_ops" not in a:
            return node.duration_micros * PS_PER_US
        if self.peak is None:
            self._err(rank, node, "compute given in FLOPs but no GPU peak", "attr num_ops", a["num_ops"],
                      "duration_micros, or peak_flops (--workload-set peak_flops=…)")
        return round(float(a["num_ops"]) / self.peak * 1e12)

    def _spec(self, a) -> CollectiveSpec:
        chunk = a.get("netsim.chunk_bytes")
        lat = a.get("netsim.sw_latency", "off")
        if "netsim.sw_latency.launch_ns" in a:     # a latency given as numbers (netsim wrote it)
            from ..collectives.protocol import SwLatency
            lat = SwLatency(*(float(a[f"netsim.sw_latency.{k}"]) for k in ("launch_ns", "step_ns", "step_inter_ns")))
        return CollectiveSpec(algorithm=a.get("netsim.algorithm", "ring"), channels=int(a.get("netsim.channels", 1)),
                              chunk_bytes=None if chunk is None else int(chunk),
                              protocol=str(a.get("netsim.protocol", "simple")), sw_latency=lat)

    def _collective(self, rank, node, a) -> int:
        ctype = a.get("comm_type")
        if ctype not in _COLL and ctype not in _FAN:
            self._err(rank, node, "collective netsim cannot model", "attr comm_type",
                      _COLL_NAME.get(ctype, ctype), ", ".join(_COLL_NAME[c] for c in sorted(set(_COLL) | set(_FAN))))
        pg = str(a.get("pg_name", "")) or "world"
        members = self.groups.get(pg, tuple(range(self.world)))
        if pg not in self.groups and self.groups and pg != "world":
            self._err(rank, node, "process group not in the communicator-group file", "attr pg_name", pg,
                      f"one of {sorted(self.groups)}")
        if rank not in members:
            self._err(rank, node, f"rank {rank} is not a member of its group", "attr pg_name", pg,
                      f"a group holding rank {rank}")
        size = int(a.get("comm_size", -1))
        if size < 0:
            self._err(rank, node, "missing or negative", "attr comm_size", size, "bytes >= 0")
        seq = self.coll_seq.get((pg, rank), 0)
        self.coll_seq[(pg, rank)] = seq + 1
        if ctype in _FAN:
            return fan_ops(self, rank, node, a, pg, seq, members, size, _FAN[ctype])
        coll = _COLL[ctype]
        if ctype == COLL_TYPES["BARRIER"]:
            size = BARRIER_BYTES
        idx = self.pending.get(("coll", pg, seq))
        if idx is None:
            sizes = a.get("netsim.sizes")
            n = len(members)
            mat = tuple(tuple(sizes[i * n:(i + 1) * n]) for i in range(n)) if sizes else None
            kind = a.get("netsim.kind") or ("ep" if coll == "alltoall" else "dp")
            idx = self._new((node.id, rank), name=node.name or f"{pg}.{coll}{seq}", kind=kind, ranks=members,
                            group=pg, collective=coll, size_bytes=size, spec=self._spec(a), sizes=mat)
            self.pending[("coll", pg, seq)] = idx
        op = self.ops[idx]
        if (op["collective"], op["size_bytes"]) != (coll, size):
            self._err(rank, node, f"collective {seq} of group {pg} differs between ranks "
                      f"({op['collective']} of {op['size_bytes']} B elsewhere)", "attr comm_type/comm_size",
                      f"{coll} of {size} B", "the same collective on every member")
        return (idx,)

    def _p2p(self, rank, node, a) -> int:
        send = node.type == NODE_TYPES["COMM_SEND_NODE"]
        peer = a.get("comm_dst" if send else "comm_src")
        if not isinstance(peer, int) or not 0 <= peer < self.world or peer == rank:
            self._err(rank, node, "bad peer rank", "attr comm_dst" if send else "attr comm_src", peer,
                      f"a rank 0..{self.world - 1} other than {rank}")
        src, dst = (rank, peer) if send else (peer, rank)
        size = int(a.get("comm_size", -1))
        if size < 0:
            self._err(rank, node, "missing or negative", "attr comm_size", size, "bytes >= 0")
        tag = a.get("comm_tag", 0)
        base = ("p2p", src, dst, tag, send)
        seq = self.coll_seq.get(base, 0)
        self.coll_seq[base] = seq + 1
        key = ("p2p", src, dst, tag, seq)
        idx = self.pending.get(key)
        if idx is None:
            idx = self._new((node.id, rank), name=node.name or f"p2p{src}-{dst}.{tag}", kind=a.get("netsim.kind", "pp"),
                            ranks=(src, dst), group=str(a.get("pg_name", "")) or f"p2p{src}-{dst}",
                            collective="send", size_bytes=size, spec=self._spec(a), sizes=None)
            self.pending[key] = idx
        elif self.ops[idx]["size_bytes"] != size:
            self._err(rank, node, "send and receive sizes differ", "attr comm_size", size,
                      f"{self.ops[idx]['size_bytes']} as on the peer")
        return (idx,)

    def add_rank(self, rank: int, nodes) -> None:
        ids, deps_of, node_of = {}, {}, {}
        for node in nodes:
            a = attrs(node)
            if node.id in node_of:
                self._err(rank, node, "duplicate node id", "id", node.id, "ids unique within a file")
            node_of[node.id] = node
            deps_of[node.id] = list(node.data_deps) + list(node.ctrl_deps)
            if node.type in _PASS:
                ids[node.id] = None
                continue
            if node.type in _LOCAL:
                kind = a.get("netsim.kind", "compute")
                idx = (self._new((node.id, rank), name=node.name, kind=kind, ranks=(rank,),
                                 duration_ps=self._duration_ps(rank, node, a)),)
            elif node.type == NODE_TYPES["COMM_COLL_NODE"]:
                idx = self._collective(rank, node, a)
            elif node.type in _COMM:
                idx = self._p2p(rank, node, a)
            else:
                self._err(rank, node, "node type netsim cannot model", "type",
                          _TYPE_NAME.get(node.type, node.type), "COMP, COMM_COLL, COMM_SEND, COMM_RECV, MEM, METADATA")
            for i in idx:
                self.ops[i]["members"].add(rank)
            ids[node.id] = idx          # the op(s) this node is on its rank (a gather's root: every send)
        resolved: dict[int, set] = {}

        def ops_behind(nid: int, via, trail=()) -> set:
            """The ops node ``nid`` stands for (itself, or through metadata nodes the ops they wait for)."""
            if nid not in node_of:
                self._err(rank, via, "dependency on a node not in the file", "data_deps/ctrl_deps", nid,
                          "ids of nodes of the same file")
            if ids[nid] is not None:
                return set(ids[nid])
            if nid not in resolved:
                if nid in trail:
                    self._err(rank, node_of[nid], "dependency cycle", "data_deps/ctrl_deps", nid, "an acyclic trace")
                resolved[nid] = set().union(*[ops_behind(d, node_of[nid], trail + (nid,)) for d in deps_of[nid]])
            return resolved[nid]

        for nid, idx in ids.items():
            for i in idx or ():
                for d in deps_of[nid]:
                    self.ops[i]["deps"] |= ops_behind(d, node_of[nid])

    def templates(self) -> list[OpTemplate]:
        """Check completeness and order the ops topologically (ties: first node id)."""
        for op in self.ops:
            missing = sorted(set(op["ranks"]) - op["members"])
            if missing:
                raise InputError(f"{op['collective'] or 'op'} {op['name']!r} of group {op['group']} never "
                                 f"appears on rank(s) {missing}", source=self.files[missing[0]], where="nodes",
                                 value=op["name"], accepted="the collective on every member of its group")
        n = len(self.ops)
        order = sorted(range(n), key=lambda i: self.ops[i]["key"])
        pos = {i: k for k, i in enumerate(order)}
        topo = self._topological_order()          # also checks for cycles
        if not self.explicit_streams:
            self._serialize_compute(topo)
        out = []
        for i in order:
            op = self.ops[i]
            fields = {k: v for k, v in op.items() if k not in ("deps", "key", "members")}
            out.append(OpTemplate(deps=tuple(sorted(pos[d] for d in op["deps"] if d != i)), **fields))
        return out

    def _topological_order(self) -> list[int]:
        """Kahn's algorithm, ties broken by first node id; a cycle across ranks is an error."""
        import heapq
        n = len(self.ops)
        succs = [[] for _ in range(n)]
        indeg = [0] * n
        for i, op in enumerate(self.ops):
            for d in op["deps"] - {i}:
                succs[d].append(i)
                indeg[i] += 1
        heap = [(self.ops[i]["key"], i) for i in range(n) if indeg[i] == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            _, i = heapq.heappop(heap)
            order.append(i)
            for s in succs[i]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    heapq.heappush(heap, (self.ops[s]["key"], s))
        if len(order) < n:
            stuck = next(op for i, op in enumerate(self.ops) if indeg[i] > 0)
            raise InputError("dependency cycle across ranks", source=self.files[min(stuck["members"])],
                             where=f"op {stuck['name']!r}", value=sorted(stuck["members"]),
                             accepted="an acyclic execution trace")
        return order

    def _serialize_compute(self, order: list[int]) -> None:
        """One compute at a time per rank (ASTRA-sim's per-NPU compute resource), in dependency order."""
        last: dict[int, int] = {}
        for i in order:
            op = self.ops[i]
            if op.get("collective"):
                continue
            r = op["ranks"][0]
            if r in last:
                op["deps"].add(last[r])
            last[r] = i


def load_chakra(path: str, *, comm_groups: str | None = None, gpu_map=None, peak_flops: float | None = None,
                name: str | None = None) -> ImportedJob:
    """Import the per-rank Chakra traces at ``path`` (folder or prefix).

    Parameters
    ----------
    path : str
    comm_groups : str, optional
        ASTRA-sim communicator-group JSON; default: ``comm_group.json`` beside the traces if present, else
        every ``pg_name`` spans all ranks.
    gpu_map : sequence of str, optional
        Rank → GPU node name; default the topology's GPUs in order.
    peak_flops : float, optional
        FLOP/s for COMP nodes given as ``num_ops`` only.
    """
    files = trace_files(path)
    if comm_groups is None:
        beside = os.path.join(os.path.dirname(files[0]), "comm_group.json")
        comm_groups = beside if os.path.exists(beside) else None
    groups = load_groups(comm_groups, len(files))
    m = _Merger(files, groups, peak_flops)
    for r, f in enumerate(files):
        meta, nodes = read_et(f)
        m.explicit_streams &= bool(attrs(meta).get(EXPLICIT_STREAMS_ATTR))
        m.add_rank(r, nodes)
    templates = m.templates()
    by_kind: dict[str, list] = {}
    for t in templates:
        if t.collective and t.ranks not in by_kind.setdefault(t.kind, []):
            by_kind[t.kind].append(t.ranks)
    base = name or re.sub(r"\.\d+\.et$", "", os.path.basename(files[0]))
    return ImportedJob(name=base, source=path, format="chakra", world_size=len(files), templates=templates,
                       groups={k: tuple(v) for k, v in by_kind.items()},
                       gpu_map=tuple(gpu_map) if gpu_map is not None else None)
