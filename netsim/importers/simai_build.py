"""Parsed SimAI/AICB rows → netsim op templates (the mapping :mod:`.simai` documents)."""
from __future__ import annotations

import dataclasses
import os

from ..errors import InputError
from ..workloads.placement import Placement
from ..workloads.schema import CollectiveSpec
from .job import ImportedJob, OpTemplate

PS_PER_NS = 1000
_SPEC = CollectiveSpec()
_new = object.__new__
#: OpTemplate's field defaults, for :meth:`_Gen.add`'s direct construction
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(OpTemplate)}


class _Gen:
    """Accumulates templates; ``cur[rank]`` = the op the rank's compute stream waits for."""

    def __init__(self, pl: Placement, world: int):
        self.pl, self.world = pl, world
        self.t: list[OpTemplate] = []
        self.cur: dict[int, int | None] = {r: None for r in range(world)}
        self.extra: dict[int, list] = {}
        self.chain: dict[str, int] = {}
        #: (first template index, loop kind) of each emission loop, for :mod:`.simai_classes`
        self.loops: list[tuple[int, str]] = []

    def loop(self, kind: str) -> None:
        """Mark the start of an emission loop: ``rank`` (per rank), ``coll`` (per group), ``upd`` (update
        delays per member of the ops just made), ``p2p`` (pipeline sends per sender)."""
        self.loops.append((len(self.t), kind))

    def add(self, deps, **f) -> int:
        """Append an :class:`OpTemplate` of fields ``f`` waiting for ``deps`` (indices; None dropped).

        The same template as ``OpTemplate(**f, deps=...)``, filled in directly: a frozen
        dataclass's ``__init__`` sets each field through ``object.__setattr__``, and a SimAI
        file of 9,216 GPUs makes ~10^8 of them (4.0 M for its 384-GPU slice).
        """
        t = _new(OpTemplate)
        fields = t.__dict__
        fields.update(_DEFAULTS)
        fields.update(f)
        fields["deps"] = tuple(sorted({d for d in deps if d is not None}))
        self.t.append(t)
        return len(self.t) - 1

    def deps(self, r: int) -> list:
        return [self.cur[r]] + self.extra.pop(r, [])

    def compute(self, r: int, name: str, ns: int, kind: str = "compute") -> None:
        if ns > 0:
            self.cur[r] = self.add(self.deps(r), name=name, kind=kind, ranks=(r,), duration_ps=ns * PS_PER_NS)

    def groups(self, kind: str, ranks) -> list[tuple[str, str, tuple]]:
        """(netsim kind, instance name, members) of the ``kind`` groups holding any of ``ranks``."""
        pk, nk, prefix = {"tp": ("tp", "tp", "tp"), "dp": ("dp", "dp", "dp"), "ep": ("ep", "ep", "ep"),
                          "dp_ep": ("edp", "dp", "edp")}[kind]
        seen = sorted({self.pl.group_of[pk][r] for r in ranks})
        return [(nk, f"{prefix}{g}", self.pl.groups[pk][g]) for g in seen]

    def collective(self, ranks, kind: str, coll: str, size: int, name: str, blocking: bool) -> list[int]:
        out = []
        self.loop("coll")
        for nk, gname, members in self.groups(kind, ranks):
            if len(members) < 2:
                continue
            deps = [d for m in members for d in (self.deps(m) if blocking else [self.cur[m]])]
            if not blocking:
                deps.append(self.chain.get(gname))
            op = self.add(deps, name=f"{gname}.{name}", kind=nk, ranks=tuple(members), group=gname,
                          collective=coll, size_bytes=size, spec=_SPEC)
            out.append(op)
            if blocking:
                for m in members:
                    self.cur[m] = op
            else:                       # the DP stream: in order, the compute stream does not wait
                self.chain[gname] = op
        return out

    def p2p(self, src: int, dst: int, size: int, name: str) -> int:
        """A pipeline transfer src → dst after src's current op; the receiver attaches it itself."""
        pipe = self.pl.group_of["pp"][src]
        return self.add([self.cur[src]], name=f"pp{pipe}.{name}", kind="pp", ranks=(src, dst), group=f"pp{pipe}",
                        collective="send", size_bytes=size, spec=_SPEC)

    def templates(self) -> list[OpTemplate]:
        return self.t


def _row_comm(g: _Gen, ranks, row, phase: str, blocking: bool, default_kind: str) -> list[int]:
    """The row's ``phase`` collective(s), each followed on every member by the row's ``update`` delay.

    SimAI's ``Layer`` sets ``fwd_update_time = input_grad_update_time = weight_grad_update_time`` (the row's
    ``update`` field) and counts each of the layer's collectives finished that long after its last byte
    (``*_Comm_Finished_After_Delay``): a blocking fwd/ig collective holds the rank's compute that much longer;
    after a wg collective the delay overlaps compute (the next iteration's layer waits for it).
    """
    ct = row[f"{phase}_comm"]
    if ct is None or row[f"{phase}_bytes"] == 0:
        return []
    coll, suffix = ct
    ops = g.collective(ranks, suffix or default_kind, coll, row[f"{phase}_bytes"],
                       f"{row['name']}.{phase}{row['i']}", blocking)
    if row["update"] > 0:
        g.loop("upd")
        for op in ops:
            for m in g.t[op].ranks:
                d = g.add([op], name=f"{row['name']}.update.{phase}{row['i']}", kind="optimizer", ranks=(m,),
                          duration_ps=row["update"] * PS_PER_NS)
                if blocking:
                    g.cur[m] = d
    return ops


def _stage_ranks(pl: Placement, s: int) -> list[int]:
    return [r for r in range(pl.world_size) if pl.stage(r) == s]


def build_transformer(h: dict, rows: list, pl: Placement, path: str) -> _Gen:
    """Every row forward, then backward in reverse (ig, wg per row); pp > 1: :mod:`.simai_pipeline`."""
    g = _Gen(pl, pl.world_size)
    for k, row in enumerate(rows):
        row["i"] = k

    def fwd(ranks, row):
        g.loop("rank")
        for r in ranks:
            g.compute(r, f"{row['name']}.fwd{row['i']}", row["fwd_compute"])
        _row_comm(g, ranks, row, "fwd", True, "tp")

    def bwd(ranks, row):
        g.loop("rank")
        for r in ranks:
            g.compute(r, f"{row['name']}.ig{row['i']}", row["ig_compute"])
        _row_comm(g, ranks, row, "ig", True, "tp")
        g.loop("rank")
        for r in ranks:
            g.compute(r, f"{row['name']}.wg{row['i']}", row["wg_compute"])
        _row_comm(g, ranks, row, "wg", False, "dp")

    if pl.pp > 1:
        from .simai_pipeline import build_pipeline
        build_pipeline(g, h, rows, pl, path, fwd, bwd)
        return g
    everyone = list(range(pl.world_size))
    for row in rows:
        fwd(everyone, row)
    for row in reversed(rows):
        bwd(everyone, row)
    return g


def build_micro(rows: list, pl: Placement) -> _Gen:
    """MICRO: each row's wg collective on all ranks, in file order."""
    g = _Gen(pl, pl.world_size)
    for k, row in enumerate(rows):
        row["i"] = k
        _row_comm(g, range(pl.world_size), row, "wg", True, "dp")
    return g


def _build(h: dict, rows: list, pl: Placement, path: str) -> _Gen:
    return build_micro(rows, pl) if h["policy"] == "MICRO" else build_transformer(h, rows, pl, path)


def _shape(path: str, h: dict, rows: list, world: int | None) -> tuple:
    """(world size, tp, pp, dp, ep, rows) of a parsed file, its sizes checked."""
    n = h["all_gpus"] or world
    if n is None:
        raise InputError("world size unknown", source=path, where="line 1, field all_gpus", value=None,
                         accepted="all_gpus: N, or a topology")
    if h["policy"] in ("MICRO", "DATA"):
        tp = pp = 1
        if h["policy"] == "DATA":       # SimAI involves no dimension in DATA's fwd/ig slots
            rows = [dict(r, fwd_comm=None, ig_comm=None) for r in rows]
    else:
        tp, pp = h["tp"], h["pp"]
    if n % (tp * pp):
        raise InputError(f"all_gpus = {n} is not a multiple of tp·pp = {tp * pp}", source=path,
                         where="line 1, field all_gpus", value=n, accepted="a multiple of model_parallel_NPU_group·pp")
    dp = n // (tp * pp)
    ep = h["ep"] if h["policy"] not in ("MICRO", "DATA") else 1
    if dp % ep:
        raise InputError(f"ep = {ep} does not divide dp = {dp}", source=path, where="line 1, field ep", value=ep,
                         accepted=f"a divisor of {dp}")
    return n, tp, pp, dp, ep, rows


def _placement(dp: int, tp: int, pp: int, ep: int, path: str) -> Placement:
    n = dp * tp * pp
    return Placement.build(dp, tp, pp, ("tp", "dp", "pp"), [f"rank{r}" for r in range(n)], source=path, ep=ep)


def class_job(path: str, h: dict, rows: list, world: int | None = None):
    """The :class:`~.simai_classes.ClassJob` of a parsed file (None when no smaller class job exists)."""
    from .simai_classes import ClassJob, class_dp
    n, tp, pp, dp, ep, rows = _shape(path, h, rows, world)
    dpc = class_dp(dp, ep)
    if dpc is None:
        return None
    g = _build(h, rows, _placement(dpc, tp, pp, ep, path), path)
    return ClassJob(g.templates(), g.loops, g.pl, _placement(dp, tp, pp, ep, path), dp // dpc)


def make_job(path: str, h: dict, rows: list, notes: list, world: int | None, gpu_map=None) -> ImportedJob:
    """The ImportedJob of a parsed SimAI file; ``world`` = the topology's GPU count when the file has no all_gpus."""
    n, tp, pp, dp, ep, rows = _shape(path, h, rows, world)
    pl = _placement(dp, tp, pp, ep, path)
    templates = _build(h, rows, pl, path).templates()
    notes = list(notes)
    if h["vpp"] > 1 and pp == 1:
        notes.append(f"vpp = {h['vpp']} without a pipeline (pp = 1): no effect")
    if pp > 1:
        notes.append("pipeline: " + (f"interleaved 1F1B, {h['vpp']} model chunks per stage" if h["vpp"] > 1
                                     else "1F1B") + f" over ga = {h['ga']} micro-batches, explicit pp_comm transfers")
    if h["checkpoints"] or h["checkpoint_initiates"]:
        notes.append("checkpoints parsed; no recomputation (SimAI's parser marks no layer as initiating it)")
    if h["policy"] == "MICRO" and len(rows) > 1:
        notes.append("MICRO: every row's collective is run (SimAI runs only the first)")
    groups = {k: pl.groups[k] for k in ("tp", "dp", "pp", "ep", "edp")}
    name = os.path.splitext(os.path.basename(path))[0]
    return ImportedJob(name=name, source=path, format="simai", world_size=n, templates=templates, groups=groups,
                       stage_of=tuple(pl.stage(r) for r in range(n)), gpu_map=gpu_map,
                       parallelism={"dp": dp, "tp": tp, "pp": pp}, notes=notes)
