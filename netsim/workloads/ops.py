"""Operations of the per-iteration graph.

An :class:`Op` is a node of a DAG: a compute kernel of one rank (``kind``
``compute`` or ``optimizer``, a duration), a collective of a group of ranks
(``kind`` ``tp``/``dp``/``ep``, or ``pp`` for point-to-point), with the ops it
waits for.  A collective is *one* op shared by its ranks: it starts when every
participant has reached it, as NCCL's would.  Streams are expressed as
dependencies (each op waits for the previous op of its stream), so the
executor needs nothing but the DAG.

Ops carry rank numbers only; the runtime maps ranks to GPU nodes.
"""
from __future__ import annotations

COMM_KINDS = ("tp", "pp", "dp", "ep")
_new = object.__new__
#: picoseconds per second (op durations are integer ps)
PS_PER_S = 10**12


class Op:
    """One operation.

    Attributes
    ----------
    name : str
        Unique within the iteration (collectives: one name for all ranks).
    kind : str
        ``compute``, ``optimizer``, ``tp``, ``pp``, ``dp`` or ``ep``.
    group : str
        Group instance, e.g. ``tp3`` (the 4th TP group); ``""`` for compute.
    collective : str
        ``allreduce``, ``allgather``, ``reducescatter``, ``alltoall``,
        ``send`` (point to point src→dst), or ``""`` for compute.
    ranks : tuple of int
        Participants in ring order (``send``: (src, dst); compute: (rank,)).
    iteration : int
    duration_ps : int
        Compute time (compute/optimizer ops).
    size_bytes : int
        Collective size in nccl-tests convention (all-reduce: the buffer per
        rank; all-gather/reduce-scatter: the full buffer; send: the message).
    spec : CollectiveSpec | None
        Algorithm, channels, chunk size for collectives.
    sizes : list | None
        Per-destination sizes for uneven all-to-all (MoE), else ``None``.
    deps : list of Op
        Ops that must finish before this one starts.
    """

    __slots__ = ("name", "kind", "group", "collective", "ranks", "iteration", "duration_ps", "size_bytes",
                 "spec", "sizes", "deps", "succs", "pending", "start_ps", "end_ps", "seq", "delay_ps")

    def __init__(self, name: str, kind: str, ranks: tuple, iteration: int, *, group: str = "",
                 collective: str = "", duration_ps: int = 0, size_bytes: int = 0, spec=None, sizes=None,
                 deps=None):
        self.name, self.kind, self.group, self.collective = name, kind, group, collective
        self.ranks, self.iteration = ranks, iteration
        self.duration_ps, self.size_bytes, self.spec, self.sizes = duration_ps, size_bytes, spec, sizes
        self.deps = [d for d in deps if d is not None] if deps else []
        self.succs: list | tuple = ()    # the executor's: ops waiting for this one (a list once it has any)
        self.pending = 0
        self.start_ps = -1
        self.end_ps = -1
        self.seq = -1
        self.delay_ps = 0   # extra latency (what-if injection)

    @classmethod
    def compute(cls, name: str, rank: int, iteration: int, duration_ps: int, deps: list) -> "Op":
        """A compute op of ``rank`` waiting for ``deps`` (a fresh list without ``None``; kept, not copied).

        The same op as ``Op(name, "compute", (rank,), iteration, duration_ps=..., deps=deps)``
        without keyword handling: the op-graph builder makes millions of these (8.4 M for one
        step of a 175 B model on 8,192 GPUs).
        """
        op = _new(cls)
        op.name, op.kind, op.group, op.collective = name, "compute", "", ""
        op.ranks, op.iteration = (rank,), iteration
        op.duration_ps, op.size_bytes, op.spec, op.sizes = duration_ps, 0, None, None
        op.deps, op.succs = deps, ()
        op.pending, op.start_ps, op.end_ps, op.seq, op.delay_ps = 0, -1, -1, -1, 0
        return op

    @classmethod
    def of(cls, name: str, kind: str, ranks: tuple, iteration: int, group: str, collective: str,
           duration_ps: int, size_bytes: int, spec, sizes) -> "Op":
        """``Op(name, kind, ranks, iteration, group=..., ..., sizes=...)`` without dependencies, positional and
        without keyword handling (imported jobs build one per template per iteration; their ``deps`` are set after).
        """
        op = _new(cls)
        op.name, op.kind, op.group, op.collective = name, kind, group, collective
        op.ranks, op.iteration = ranks, iteration
        op.duration_ps, op.size_bytes, op.spec, op.sizes = duration_ps, size_bytes, spec, sizes
        op.deps, op.succs = [], ()
        op.pending, op.start_ps, op.end_ps, op.seq, op.delay_ps = 0, -1, -1, -1, 0
        return op

    @property
    def is_comm(self) -> bool:
        return self.kind in COMM_KINDS

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Op({self.name!r}, {self.kind}, ranks={self.ranks}, it={self.iteration})"
