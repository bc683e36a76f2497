"""SimAI/AICB pipeline parallelism (``pp`` > 1) rebuilt as explicit stage-to-stage transfers.

SimAI prices pipelining in closed form after the run (``Layer::report``:
bubble = (pp − 1)/(ga · vpp) of the iteration's compute, exposed PP traffic
2 · vpp · ga transfers of ``pp_comm`` bytes).  netsim instead runs the
schedule AICB's Megatron workloads describe, on explicit transfers:

* **Micro-batches.**  AICB writes each micro-batch's layer block ``ga``
  times, starting with an ``embedding_layer`` row, between *head* rows
  written once per iteration (``grad_gather``, ``grad_param_comm``, … the
  optimizer step's gradient collectives) and *tail* rows
  (``cross_entropy*``, ``optimizer*``).  When the ``embedding_layer`` rows
  are ``ga`` evenly spaced rows, they delimit the blocks; otherwise the rows
  must split into ``ga`` equal blocks (no head, no tail).
* **Schedule.**  Megatron-LM's: ``1f1b`` (``vpp`` = 1), or
  ``interleaved_1f1b`` with ``vpp`` model chunks per device (each block
  split into ``vpp`` contiguous chunks of ⌊L/vpp⌋ or ⌈L/vpp⌉ rows; chunk c of
  stage s is virtual stage c · pp + s) — the orders of
  :func:`netsim.workloads.schedules.stage_orders`.
* **Transfers.**  After a forward of virtual stage k < pp · vpp − 1 every rank
  sends ``pp_comm`` bytes to its peer (same TP and DP index) on the stage of
  virtual stage k + 1; after a backward of virtual stage k > 0, to the stage of
  k − 1.  The receiving pass waits for it.
* **Head and tail.**  Every stage runs the head rows' forward before its
  first micro-batch, the tail rows (forward, then backward) after its last,
  then the head rows' backward — so the optimizer's gradient collectives run
  last, as SimAI's reverse-order backward issues them.

Left out: SimAI's ``pp_overlap_ratio`` (the transfers simply take network
time), recomputation (SimAI's parser never marks a layer as initiating it).
"""
from __future__ import annotations

from ..errors import InputError
from ..workloads.schedules import stage_orders


def split_blocks(rows: list, ga: int, path: str) -> tuple[list, list, list]:
    """(head rows, ``ga`` micro-batch blocks, tail rows) of an AICB/SimAI pipeline workload."""
    starts = [k for k, r in enumerate(rows) if r["name"] == "embedding_layer"]
    if len(starts) == ga and ga > 1:
        step = starts[1] - starts[0]
        if all(b - a == step for a, b in zip(starts, starts[1:])) and starts[-1] + step <= len(rows):
            blocks = [rows[s:s + step] for s in starts]
            return rows[:starts[0]], blocks, rows[starts[-1] + step:]
    if len(rows) % ga:
        raise InputError(f"{len(rows)} rows do not split into ga = {ga} micro-batch blocks", source=path,
                         where="line 1, field ga", value=ga,
                         accepted=f"ga evenly spaced embedding_layer rows, or a divisor of the row count {len(rows)}")
    n = len(rows) // ga
    return [], [rows[j * n:(j + 1) * n] for j in range(ga)], []


def _chunks(block: list, v: int) -> list[list]:
    return [block[c * len(block) // v:(c + 1) * len(block) // v] for c in range(v)]


def build_pipeline(g, h: dict, rows: list, pl, path: str, fwd, bwd) -> None:
    """Emit the pipelined iteration into ``g`` (a :class:`~.simai_build._Gen`).

    Parameters
    ----------
    fwd, bwd : callable(ranks, row)
        Emit one row's forward (compute + fwd collective) / backward (ig, wg) on ``ranks``.
    """
    pp, v, ga = pl.pp, max(1, h["vpp"]), h["ga"]
    if h["pp_comm"] <= 0:
        raise InputError("pp > 1 needs the stage-to-stage message size", source=path, where="line 1, field pp_comm",
                         value=h["pp_comm"], accepted="pp_comm: <bytes> > 0")
    if v > 1 and ga % pp:
        raise InputError(f"interleaved 1F1B (vpp = {v}) needs ga divisible by pp = {pp}", source=path,
                         where="line 1, field ga", value=ga, accepted=f"a multiple of {pp} (or --workload-set vpp=1)")
    head, blocks, tail = split_blocks(rows, ga, path)
    if v > len(blocks[0]):
        raise InputError(f"vpp = {v} model chunks per stage, but a micro-batch block has {len(blocks[0])} rows",
                         source=path, where="line 1, field vpp", value=v,
                         accepted=f"1 … {len(blocks[0])} (or --workload-set vpp=N)")
    chunks = [_chunks(b, v) for b in blocks]
    orders = stage_orders("interleaved_1f1b" if v > 1 else "1f1b", pp, ga, v)
    ranks_of = [[r for r in range(pl.world_size) if pl.stage(r) == s] for s in range(pp)]
    peer = {}
    for r in range(pl.world_size):
        t, d, s = pl.coords[r]
        peer[r] = (pl.rank_at(t, d, (s - 1) % pp), pl.rank_at(t, d, (s + 1) % pp))
    sent: dict[tuple, dict] = {}
    last_vs = pp * v - 1

    def need(a, s):
        vs = a.chunk * pp + s
        if a.kind == "F":
            return ("F", a.micro_batch, vs - 1) if vs > 0 else None
        return ("B", a.micro_batch, vs + 1) if vs < last_vs else None

    def emit(a, s):
        vs, ranks = a.chunk * pp + s, ranks_of[s]
        key = need(a, s)
        if key is not None:
            for r in ranks:
                g.extra.setdefault(r, []).append(sent[key][r])
        part = chunks[a.micro_batch][a.chunk]
        for row in part if a.kind == "F" else reversed(part):
            (fwd if a.kind == "F" else bwd)(ranks, row)
        if (a.kind == "F" and vs < last_vs) or (a.kind == "B" and vs > 0):
            to = 1 if a.kind == "F" else 0
            name = f"{a.kind}{a.micro_batch}.v{vs}-v{vs + (1 if to else -1)}"
            g.loop("p2p")
            sent[(a.kind, a.micro_batch, vs)] = {peer[r][to]: g.p2p(r, peer[r][to], h["pp_comm"], name)
                                                 for r in ranks}

    for s in range(pp):
        for row in head:
            fwd(ranks_of[s], row)
    pos = [0] * pp
    while any(pos[s] < len(orders[s]) for s in range(pp)):
        moved = False
        for s in range(pp):
            while pos[s] < len(orders[s]) and (need(orders[s][pos[s]], s) in sent
                                               or need(orders[s][pos[s]], s) is None):
                emit(orders[s][pos[s]], s)
                pos[s] += 1
                moved = True
        if not moved:          # the schedules of netsim.workloads are deadlock-free; guard anyway
            raise InputError("pipeline schedule deadlocks", source=path, where="line 1, fields pp/vpp/ga",
                             value=(pp, v, ga), accepted="a deadlock-free schedule")
    for s in range(pp):
        for row in tail:
            fwd(ranks_of[s], row)
        for row in reversed(tail):
            bwd(ranks_of[s], row)
        for row in reversed(head):
            bwd(ranks_of[s], row)
