"""AICB's physical workload CSV (``*_workload.csv``) → an :class:`ImportedJob`.

AICB writes one row per operation of one rank's training step, columns
``comm_type, comm_group, comm_group_size, msg_size, stage, dst, src,
additional, _elapsed_time, algbw, busbw, count`` (its ``LogItem`` fields, in
that order; enums written either as ``all_reduce`` or ``CommType.all_reduce``,
missing values as ``None`` or ``-1``), after a ``[rank0 ~ rankN]`` line in
AICB's physical model workloads (N + 1 = the ranks; without it, ranks = the
topology's GPUs).  AICB's micro tests have no ``comm_group_size`` column:
their ``dp_group`` is then every rank.  TP and DP sizes = the ``comm_group_size``
of the ``tp_group`` / ``dp_group`` rows, PP = ranks / (TP·DP).

Mapping: AICB's file is the init rows, an ``epoch_end`` row, then per
iteration its rows and an ``epoch_end`` row (its ``WorkloadGenerator``; its
log analysis counts the rows before the first ``epoch_end`` as ``init``).
The init rows are skipped, the first iteration's rows (a file without
``epoch_end``: all rows) become, in file order, one collective per instance of
the row's group (``tp_group``, ``dp_group``, ``ep_group``, ``ep_dp_group``,
``all_nodes``), ``count`` times, each waiting for its members' previous op
(AICB replays them one after another).  ``msg_size`` is bytes, the nccl-tests
size.  Left out (reported in ``import_notes``): ``computation`` rows,
``barrier`` (moves no data).  ``isend``/``irecv`` on ``pp_group`` and
``embedding_group`` rows are errors (the CSV does not say which way a
pipeline message goes; use the SimAI ``.txt``, which has ``pp_comm``).
"""
from __future__ import annotations

import csv
import io
import math
import os

from ..errors import InputError
from .sniff import looks_aicb_csv, split_ranks_line as _split_ranks_line  # noqa: F401 (looks_aicb_csv: re-exported)

HEADER = ("comm_type", "comm_group", "comm_group_size", "msg_size")
_COLL = {"all_reduce": "allreduce", "all_gather": "allgather", "all_gather_into_tensor": "allgather",
         "reduce_scatter": "reducescatter", "reduce_scatter_tensor": "reducescatter", "all_to_all": "alltoall",
         "broadcast": "broadcast", "reduce": "reduce"}
_SKIP = {"computation", "barrier"}
_GROUP = {"tp_group": "tp", "dp_group": "dp", "ep_group": "ep", "ep_dp_group": "edp", "all_nodes": "all"}



def _enum(v: str) -> str:
    v = (v or "").strip()
    return v.split(".", 1)[1] if v.startswith(("CommType.", "CommGroup.")) else v


def _number(v: str, path: str, where: str) -> int:
    try:
        x = float(v)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or x < 0 or x != int(x):
        raise InputError("not a non-negative whole number", source=path, where=where, value=v,
                         accepted="bytes / a count, e.g. 1048576 or 1048576.0")
    return int(x)


def _key(r: dict) -> tuple:
    return tuple(_enum(r.get(c) or "") for c in ("comm_type", "comm_group", "comm_group_size", "msg_size", "count"))


def _rows(path: str) -> tuple[list[dict], list[str], int | None]:
    """The rows of one training iteration, as AICB splits its file, and the notes on what was left out.

    AICB's generator writes the init rows, an ``epoch_end`` row, then per iteration its rows and an
    ``epoch_end`` row; its log analysis (``Log.add_comm_log``/``analyze``) counts the rows before the first
    ``epoch_end`` as ``init`` and each later run of rows as one ``train`` iteration.  netsim imports the first
    iteration (and repeats it); a file without any ``epoch_end`` is one iteration.
    """
    with open(path, encoding="utf-8", newline="") as f:
        text, world = _split_ranks_line(f.read().lstrip("\ufeff"))
    first_line = 2 if world is None else 3
    rows = [dict(r, line=n) for n, r in enumerate(csv.DictReader(io.StringIO(text)), start=first_line)]
    ends = [k for k, r in enumerate(rows) if _enum(r["comm_type"]) == "epoch_end"]
    if not ends:
        return rows, ["no epoch_end row: every row is one iteration"], world
    bounds = ends + [len(rows)]
    segments = [rows[a + 1:b] for a, b in zip(bounds, bounds[1:])]
    closed = [seg for seg, b in zip(segments, bounds[1:]) if b < len(rows)]
    notes = [f"{ends[0]} init rows before the first epoch_end skipped (AICB's init stage)"] if ends[0] else []
    tail = segments[-1] if len(segments) > len(closed) else []
    iterations = [seg for seg in closed if seg] or ([tail] if tail else [])
    if not iterations:
        raise InputError("no training iteration after the init rows", source=path,
                         where=f"line {rows[ends[0]]['line']}, field comm_type", value="epoch_end",
                         accepted="rows of one iteration after the first epoch_end (AICB's layout)")
    first = iterations[0]
    if tail and any(closed):
        notes.append(f"{len(tail)} rows after the last epoch_end skipped (an iteration without its epoch_end, "
                     f"from line {tail[0]['line']})")
    if len(iterations) > 1:
        keys = [[_key(r) for r in it if _enum(r["comm_type"]) not in _SKIP] for it in iterations]
        same = all(k == keys[0] for k in keys[1:])
        notes.append(f"{len(iterations) - 1} more iterations in the file not imported: netsim repeats the first"
                     + ("" if same else " (they differ from it)"))
    return first, notes, world


def load_aicb_csv(path: str, *, world: int | None, gpu_map=None) -> ImportedJob:
    """Import AICB's workload CSV on ``world`` ranks (the topology's GPU count)."""
    try:
        rows, notes, file_world = _rows(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", source=path, where="file", value=None,
                         accepted="an AICB workload CSV") from None
    if file_world is not None:
        world = file_world              # the ``[rank0 ~ rankN]`` line: the job's ranks, whatever the topology
    if world is None:
        raise InputError("world size unknown", source=path, where="ranks", value=None, accepted="a topology")
    sizes, ops, skipped = {}, [], {}
    for r in rows:
        ct, grp = _enum(r["comm_type"]), _enum(r["comm_group"])
        where = f"line {r['line']}"
        if ct in _SKIP:
            skipped[ct] = skipped.get(ct, 0) + 1
            continue
        if ct not in _COLL:
            raise InputError("communication type netsim cannot import from the CSV", source=path,
                             where=f"{where}, field comm_type", value=r["comm_type"],
                             accepted=", ".join(sorted(_COLL)) + " (pipeline sends: use the SimAI .txt)")
        if grp not in _GROUP:
            raise InputError("communication group netsim cannot import from the CSV", source=path,
                             where=f"{where}, field comm_group", value=r["comm_group"], accepted=", ".join(_GROUP))
        if r.get("comm_group_size") in (None, "", "None", "-1"):    # AICB's micro tests have no such column
            n = None
        else:
            n = _number(r["comm_group_size"], path, f"{where}, field comm_group_size")
        if n is not None and grp in ("tp_group", "dp_group", "ep_group"):
            if sizes.setdefault(grp, n) != n:
                raise InputError(f"{grp} size differs from an earlier row ({sizes[grp]})", source=path,
                                 where=f"{where}, field comm_group_size", value=n, accepted=str(sizes[grp]))
        count = _number(r.get("count") or "1", path, f"{where}, field count") if r.get("count") not in ("", "None",
                                                                                                      None) else 1
        ops.append((ct, grp, _number(r["msg_size"], path, f"{where}, field msg_size"), count, r["line"]))
    notes += [f"{n} {ct} rows not modelled" for ct, n in sorted(skipped.items())]
    return _job(path, ops, sizes, world, notes, gpu_map)


def _job(path, ops, sizes, world, notes, gpu_map) -> ImportedJob:
    from ..workloads.placement import Placement     # here: netsim run asks looks_aicb_csv of every workload
    from ..workloads.schema import CollectiveSpec
    from .job import ImportedJob, OpTemplate
    tp = sizes.get("tp_group", 1)
    dp = sizes.get("dp_group", world // tp if "dp_group" not in sizes and world % tp == 0 else 1)
    ep = sizes.get("ep_group", 1)
    if world % (tp * dp) or dp % ep:
        raise InputError(f"group sizes tp = {tp}, dp = {dp}, ep = {ep} do not fit {world} ranks", source=path,
                         where="field comm_group_size", value=world, accepted="tp·dp dividing the GPU count, ep | dp")
    pp = world // (tp * dp)
    pl = Placement.build(dp, tp, pp, ("tp", "dp", "pp"), [f"rank{r}" for r in range(world)], source=path, ep=ep)
    last: dict[int, int] = {}
    templates = []
    spec = CollectiveSpec()
    for k, (ct, grp, size, count, line) in enumerate(ops):
        kind = _GROUP[grp]
        instances = [tuple(range(world))] if kind == "all" else pl.groups[kind]
        nk = {"edp": "dp", "all": "dp"}.get(kind, kind)
        for rep in range(count):
            for gi, members in enumerate(instances):
                if len(members) < 2:
                    continue
                gname = "all" if kind == "all" else f"{kind}{gi}"
                deps = tuple(sorted({last[m] for m in members if m in last}))
                templates.append(OpTemplate(f"{gname}.{ct}.l{line}.{rep}", nk, tuple(members), group=gname,
                                            collective=_COLL[ct], size_bytes=size, spec=spec, deps=deps))
                for m in members:
                    last[m] = len(templates) - 1
    groups = {k: pl.groups[k] for k in ("tp", "dp", "pp", "ep", "edp")}
    return ImportedJob(name=os.path.splitext(os.path.basename(path))[0], source=path, format="aicb-csv",
                       world_size=world, templates=templates, groups=groups,
                       stage_of=tuple(pl.stage(r) for r in range(world)), gpu_map=gpu_map,
                       parallelism={"dp": dp, "tp": tp, "pp": pp}, notes=notes)
