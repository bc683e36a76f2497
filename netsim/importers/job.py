"""An imported job: the runtime's operation graph built from another tool's file.

An importer turns a foreign workload (Chakra ET, SimAI/AICB) into one
iteration of :class:`netsim.workloads.ops.Op` records plus the rank → GPU
placement; :class:`ImportedJob` is what ``run_training`` runs instead of a
netsim workload, so every backend, trace and what-if applies unchanged.

Iterations: the file describes one iteration.  Iteration k+1 repeats it, and
an op of rank r with no dependency on rank r inside the iteration waits for
rank r's last ops of iteration k (as netsim's own builder makes a rank's next
iteration wait for its optimizer step).  Left out: anything netsim's
synthesised workloads know and a trace does not (model size, batch, memory
need): the summary reports those fields as ``None``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError
from ..workloads.ops import Op
from ..workloads.schema import CollectiveSpec


@dataclass(frozen=True)
class OpTemplate:
    """One op of the imported iteration (deps: indices into the job's template list, in any order)."""

    name: str
    kind: str
    ranks: tuple
    group: str = ""
    collective: str = ""
    duration_ps: int = 0
    size_bytes: int = 0
    spec: CollectiveSpec = CollectiveSpec()
    sizes: tuple | None = None
    deps: tuple = ()


class TemplateBuilder:
    """``build(iteration)`` for an imported job: fresh :class:`Op` objects from the templates."""

    def __init__(self, templates: list[OpTemplate], world_size: int):
        self.templates = templates
        self.world_size = world_size
        self._last: dict[int, list] = {}
        on_rank: dict[int, list[int]] = {}
        for i, t in enumerate(templates):
            for r in t.ranks:
                on_rank.setdefault(r, []).append(i)
        has_succ_on = set()
        self._roots = []
        for i, t in enumerate(templates):
            for d in t.deps:
                for r in set(t.ranks) & set(templates[d].ranks):
                    has_succ_on.add((d, r))
            self._roots.append([r for r in t.ranks if not any(r in templates[d].ranks for d in t.deps)])
        self._sinks = {r: [i for i in idx if (i, r) not in has_succ_on] for r, idx in on_rank.items()}

    def rank_params(self, rank: int) -> int:
        """Parameters per rank are not known from a trace: 0."""
        return 0

    def build(self, it: int) -> list[Op]:
        """The ops of iteration ``it``; their roots wait for the previous iteration's last ops per rank."""
        new = Op.of
        ops = [new(t.name, t.kind, t.ranks, it, t.group, t.collective, t.duration_ps, t.size_bytes, t.spec,
                   [list(row) for row in t.sizes] if t.sizes is not None else None) for t in self.templates]
        for op, t, roots in zip(ops, self.templates, self._roots):
            op.deps = [ops[d] for d in t.deps] + [p for r in roots for p in self._last.get(r, ())]
        self._last = {r: [ops[i] for i in idx] for r, idx in self._sinks.items()}
        return ops


@dataclass(frozen=True)
class ImportedPlacement:
    """Rank ↔ GPU for an imported job, with the groups its collectives use."""

    gpu_of: tuple
    groups: dict
    stage_of: tuple
    dp: int = 1
    tp: int = 1
    pp: int = 1

    @property
    def world_size(self) -> int:
        return len(self.gpu_of)

    def stage(self, rank: int) -> int:
        """Pipeline stage of ``rank`` (0 when the format does not say)."""
        return self.stage_of[rank]


@dataclass(frozen=True)
class ImportedJob:
    """A foreign workload mapped onto netsim's op graph.

    Attributes
    ----------
    name, source, format : str
        Job name, the file it came from, the importer (``chakra``, ``simai``, ``aicb-csv``).
    world_size : int
        Ranks.
    templates : list of OpTemplate
        One iteration.
    groups : dict
        Group kind → tuple of rank tuples (for summaries and hierarchical collectives).
    stage_of : tuple of int
        Pipeline stage of each rank (empty: inferred from the op graph, :mod:`netsim.importers.stages`).
    gpu_map : tuple of str | None
        Rank → GPU node names (a mapping file); ``None``: the topology's GPUs in order.
    parallelism : dict
        ``dp``/``tp``/``pp`` when the format states them, else 1.
    notes : list of str
        What the importer could not map (reported in the summary).
    """

    name: str
    source: str
    format: str
    world_size: int
    templates: list
    groups: dict = field(default_factory=dict)
    stage_of: tuple = ()
    gpu_map: tuple | None = None
    parallelism: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    whatif = None          # run_training reads these of any workload: an imported job has neither
    collectives = {}  # noqa: RUF012 (class attribute, not a field)

    def place(self, graph) -> ImportedPlacement:
        """Ranks onto the topology's GPUs (in order, or the mapping file's names); its hosts if it has no GPU."""
        from ..topology import gpus
        from ..topology.query import hosts
        # an HPCC topology.txt (as ASTRA-sim's ns-3 backend ships them) has hosts, no GPUs: the hosts are the NPUs
        names = list(gpus(graph)) or list(hosts(graph))
        if self.gpu_map is not None:
            missing = [g for g in self.gpu_map if g not in graph]
            if missing:
                raise InputError("GPU not in the topology", source=self.source, where="rank mapping",
                                 value=missing[0], accepted=f"one of {names[:8]}…")
            if len(self.gpu_map) != self.world_size or len(set(self.gpu_map)) != len(self.gpu_map):
                raise InputError(f"needs {self.world_size} distinct GPU names, one per rank", source=self.source,
                                 where="rank mapping", value=len(self.gpu_map),
                                 accepted=f"{self.world_size} distinct names")
            chosen = tuple(self.gpu_map)
        else:
            if len(names) < self.world_size:
                raise InputError(f"the job has {self.world_size} ranks but the topology has {len(names)} GPUs",
                                 source=self.source, where="world size", value=len(names),
                                 accepted=f"a topology with at least {self.world_size} GPUs")
            chosen = tuple(names[:self.world_size])
        if self.stage_of:
            stage_of = self.stage_of
        else:        # the format does not say (Chakra): from the op graph, as the summary's bubble needs
            from .stages import infer_stages
            stage_of = infer_stages(self.templates, self.world_size)
        par = self.parallelism
        groups = {k: () for k in ("tp", "dp", "pp", "ep", "edp")} | dict(self.groups)
        return ImportedPlacement(chosen, groups, tuple(stage_of), dp=par.get("dp", 1),
                                 tp=par.get("tp", 1), pp=par.get("pp", 1))

    def builder(self) -> TemplateBuilder:
        return TemplateBuilder(self.templates, self.world_size)
