"""Validation of the pipeline-schedule fields of a workload's ``parallelism`` section.

``schedule`` (1f1b, gpipe, interleaved_1f1b, zb_h1, custom), ``virtual_stages``
(model chunks per device; > 1 only with ``interleaved_1f1b`` or ``custom``)
and ``schedule_actions`` (``custom`` only, checked by :mod:`.schedule_check`).
Every problem is one :class:`~netsim.errors.WorkloadError` line naming the
field, the value and what is accepted.
"""
from __future__ import annotations

from .fields import Fields
from .schedule_check import ScheduleError, check_orders, parse_actions


def pipeline_schedule(f: Fields, par: dict, schedule: str, model, pp: int, m: int, moe: bool):
    """Validate the schedule fields; return (virtual_stages, per-stage actions of ``custom`` or ``None``)."""
    v = f.pos_int(par, "parallelism.virtual_stages", default=1)
    if v > 1 and schedule not in ("interleaved_1f1b", "custom"):
        f.fail("parallelism.virtual_stages", f"virtual stages need an interleaved schedule, not {schedule}", v,
               "1, or schedule: interleaved_1f1b / custom")
    if schedule == "interleaved_1f1b":
        if v < 2:
            f.fail("parallelism.virtual_stages", "interleaved_1f1b needs at least 2 model chunks per device", v,
                   "an integer >= 2")
        if pp < 2:
            f.fail("parallelism.pp", "interleaved_1f1b needs a pipeline", pp, "pp >= 2")
        if m % pp:
            f.fail("parallelism.schedule", f"interleaved_1f1b needs the micro-batches per iteration (m = {m}) "
                   f"divisible by pp = {pp}", schedule,
                   "a training.global_batch / (micro_batch·dp) that is a multiple of pp, or schedule: 1f1b")
    if v > 1:
        if par.get("partition", "even") not in (None, "even"):
            f.fail("parallelism.partition", "virtual stages need an even partition", par.get("partition"),
                   "even (or virtual_stages: 1)")
        if model.layers % (pp * v):
            f.fail("parallelism.virtual_stages", f"model layers ({model.layers}) not divisible by pp·v = "
                   f"{pp}·{v}", v, f"a v with pp·v dividing {model.layers}")
    actions = par.get("schedule_actions")
    if actions is not None and schedule != "custom":
        f.fail("parallelism.schedule_actions", f"only read with schedule: custom (schedule is {schedule})",
               "[...]", "schedule: custom, or drop schedule_actions")
    if schedule == "custom":
        if actions is None:
            f.fail("parallelism.schedule_actions", "schedule: custom needs the per-stage action lists", None,
                   f"{pp} lists such as 'F0 F1 B0 B1'")
        try:
            orders = parse_actions(actions, pp, m, v)
            check_orders(orders, pp, m, v)
        except ScheduleError as exc:
            f.fail("parallelism.schedule_actions", str(exc), _short(actions),
                   f"per stage every F/B (and W) of micro-batches 0..{m - 1}"
                   + (f", chunks 0..{v - 1}" if v > 1 else "") + " once, in an order that cannot deadlock")
        actions = tuple(tuple(o) for o in orders)
    split = schedule == "zb_h1" or (actions is not None and any(a.kind == "W" for o in actions for a in o))
    if split and moe:
        f.fail("parallelism.schedule", "split backward (W passes) is not modelled for MoE models", schedule,
               "1f1b, gpipe or interleaved_1f1b with model.moe")
    return v, actions


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."
