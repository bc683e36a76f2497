"""User-written pipeline schedules: parsing and validation before anything is simulated.

``parallelism.schedule_actions`` lists, per pipeline stage, the passes that
stage runs in order: ``F<j>`` (forward of micro-batch j), ``B<j>`` (backward,
the input-gradient part when W passes are used) and ``W<j>`` (weight
gradient), each optionally with ``c<k>`` for model chunk k when
``virtual_stages`` > 1 (chunk k of stage d is virtual stage k·p + d).  A
schedule is accepted only when

* every stage runs F and B (and W, if any stage uses W) of every micro-batch
  of every chunk exactly once, B after F and W after B;
* the cross-stage dependencies (F of virtual stage u after F of u−1, B of u
  after B of u+1) can be met: the stages are advanced in program order and
  a schedule where no stage can advance before all are done deadlocks — an
  error naming each stuck stage's next action, not a hang of the simulator.

>>> check_orders(parse_actions(["F0 F1 B0 B1", "F0 B0 F1 B1"], 2, 2, 1), 2, 2, 1)
>>> check_orders(parse_actions(["F0 B0 F1 B1", "F1 B1 F0 B0"], 2, 2, 1), 2, 2, 1)
Traceback (most recent call last):
...
netsim.workloads.schedule_check.ScheduleError: deadlock: stage 0 waits at B0 (needs B0 of stage 1), stage 1 waits at F1 (needs F1 of stage 0)
"""
from __future__ import annotations

import re

from .schedules import Action

_ACTION = re.compile(r"^([FBW])(\d+)(?:c(\d+))?$")


class ScheduleError(ValueError):
    """An invalid user schedule; the message says what and where (the schema adds the file and field)."""


def parse_actions(spec, stages: int, micro_batches: int, virtual_stages: int) -> list[list[Action]]:
    """``schedule_actions`` (a list of ``stages`` strings or lists of strings) → actions per stage."""
    if not isinstance(spec, list) or len(spec) != stages:
        raise ScheduleError(f"must be a list of {stages} per-stage action lists (one per pipeline stage)")
    out = []
    for s, row in enumerate(spec):
        items = row.split() if isinstance(row, str) else row
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise ScheduleError(f"stage {s}: must be a string such as 'F0 F1 B0 B1' or a list of such actions")
        acts = []
        for x in items:
            mt = _ACTION.match(x)
            if mt is None:
                raise ScheduleError(f"stage {s}: bad action {x!r} (F/B/W, micro-batch, optional c<chunk>, e.g. B3c1)")
            a = Action(mt[1], int(mt[2]), int(mt[3] or 0))
            if a.micro_batch >= micro_batches or a.chunk >= virtual_stages:
                raise ScheduleError(f"stage {s}: action {x} is out of range (micro-batches 0..{micro_batches - 1}, "
                                    f"chunks 0..{virtual_stages - 1})")
            acts.append(a)
        out.append(acts)
    return out


def _check_stage(s: int, order: list[Action], micro_batches: int, virtual_stages: int, split: bool) -> None:
    kinds = "FBW" if split else "FB"
    seen: dict[Action, int] = {}
    for i, a in enumerate(order):
        if a in seen:
            raise ScheduleError(f"stage {s}: {a.label()} appears twice")
        seen[a] = i
    for c in range(virtual_stages):
        for j in range(micro_batches):
            for k in kinds:
                if Action(k, j, c) not in seen:
                    raise ScheduleError(f"stage {s}: {Action(k, j, c).label()} is missing "
                                        f"(every {'/'.join(kinds)} of every micro-batch exactly once)")
            for first, then in zip(kinds, kinds[1:]):
                if seen[Action(then, j, c)] < seen[Action(first, j, c)]:
                    raise ScheduleError(f"stage {s}: {Action(then, j, c).label()} comes before "
                                        f"{Action(first, j, c).label()}")


def dependency(a: Action, stage: int, stages: int, virtual_stages: int) -> tuple[int, Action] | None:
    """The (stage, action) that ``a`` of ``stage`` waits for, ``None`` for the first forward."""
    vs, last = a.chunk * stages + stage, stages * virtual_stages - 1
    if a.kind == "F":
        return None if vs == 0 else ((vs - 1) % stages, Action("F", a.micro_batch, (vs - 1) // stages))
    if a.kind == "B":
        if vs == last:
            return stage, Action("F", a.micro_batch, a.chunk)
        return (vs + 1) % stages, Action("B", a.micro_batch, (vs + 1) // stages)
    return stage, Action("B", a.micro_batch, a.chunk)


def check_orders(orders: list[list[Action]], stages: int, micro_batches: int, virtual_stages: int) -> None:
    """Raise :class:`ScheduleError` unless ``orders`` is a complete, deadlock-free schedule."""
    split = any(a.kind == "W" for o in orders for a in o)
    for s, o in enumerate(orders):
        _check_stage(s, o, micro_batches, virtual_stages, split)
    done: set[tuple[int, Action]] = set()
    pos = [0] * stages
    progress = True
    while progress:
        progress = False
        for s in range(stages):
            while pos[s] < len(orders[s]):
                a = orders[s][pos[s]]
                dep = dependency(a, s, stages, virtual_stages)
                if dep is not None and dep not in done:
                    break
                done.add((s, a))
                pos[s] += 1
                progress = True
    stuck = [s for s in range(stages) if pos[s] < len(orders[s])]
    if stuck:
        parts = []
        for s in stuck:
            a = orders[s][pos[s]]
            ds, da = dependency(a, s, stages, virtual_stages)
            parts.append(f"stage {s} waits at {a.label()} (needs {da.label()} of stage {ds})")
        raise ScheduleError("deadlock: " + ", ".join(parts))
