"""Pipeline schedules: the order in which a stage runs its forward/backward passes.

* ``gpipe`` (Huang et al. 2019): all m forwards, then all m backwards; a stage
  holds up to m micro-batches' activations.
* ``1f1b`` (PipeDream-flush, Narayanan et al. 2021): stage s (0-based) of p
  runs min(p−s−1, m) warm-up forwards, then alternates one forward and one
  backward, then drains the remaining backwards; at most p−s ≤ p micro-batches
  are in flight.  Bubble (p−1)·(T_F+T_B).
* ``interleaved_1f1b`` (Narayanan et al. SC'21 §2.2, as Megatron-LM's
  ``forward_backward_pipelining_with_interleaving`` orders it): every device
  holds v model chunks; chunk c of device d is virtual stage c·p + d.  The
  k-th forward of a device runs chunk (k div p) mod v of micro-batch
  (k div pv)·p + k mod p, the k-th backward chunk v−1−(k div p) mod v of the
  same micro-batch formula; device d runs min(2(p−d−1) + (v−1)p, mv) warm-up
  forwards (all mv when m = p), then one forward / one backward, then the
  remaining backwards.  Needs m divisible by p.  Bubble (p−1)·(T_F+T_B)/v.
* ``zb_h1`` (Qi et al., ICLR'24 "Zero Bubble Pipeline Parallelism" §3.1): the
  backward splits into B (input gradient) and W (weight gradient); F and B
  keep 1F1B's order and stage s delays its W passes by s backwards, so W
  passes fill the 1F1B cool-down bubbles (:func:`zb_h1`).  Between F and B
  a stage holds p−s micro-batches, as in 1F1B; between F and W at most p.
  Bubble (p−1)·(T_F+T_B−T_W) when T_F = T_B = T_W (the paper's assumption;
  otherwise a lower bound).
* ``custom``: per-stage action lists written by the user
  (:mod:`.schedule_check` parses and validates them).

A schedule is a list of :class:`Action` per device.  Left out: ZB-H2 / ZB-V,
and schedules searched automatically for given times.

>>> schedule("1f1b", stage=0, stages=3, micro_batches=4)
[('F', 0), ('F', 1), ('F', 2), ('B', 0), ('F', 3), ('B', 1), ('B', 2), ('B', 3)]
>>> max_in_flight(schedule("gpipe", 0, 3, 4))
4
>>> " ".join(a.label() for a in interleaved_1f1b(1, stages=2, micro_batches=2, virtual_stages=2))
'F0 F1 F0c1 F1c1 B0c1 B1c1 B0 B1'
"""
from __future__ import annotations

from typing import NamedTuple

W_LAG = 2
SCHEDULES = ("1f1b", "gpipe", "interleaved_1f1b", "zb_h1", "custom")


class Action(NamedTuple):
    """One pass of one stage: ``kind`` F (forward), B (backward, or input gradient
    when split) or W (weight gradient), of micro-batch ``micro_batch`` on model
    chunk ``chunk`` (0 without interleaving)."""

    kind: str
    micro_batch: int
    chunk: int = 0

    def label(self) -> str:
        """The action as written in ``parallelism.schedule_actions``, e.g. ``F3`` or ``B2c1``."""
        return f"{self.kind}{self.micro_batch}" + (f"c{self.chunk}" if self.chunk else "")


def schedule(name: str, stage: int, stages: int, micro_batches: int) -> list[tuple[str, int]]:
    """The (pass, micro-batch) sequence of one stage for ``1f1b``/``gpipe``; pass is ``"F"`` or ``"B"``."""
    m = micro_batches
    if name == "gpipe":
        return [("F", j) for j in range(m)] + [("B", j) for j in range(m)]
    if name == "1f1b":
        warm = min(stages - stage - 1, m)
        out = [("F", j) for j in range(warm)]
        for i in range(m - warm):
            out += [("F", warm + i), ("B", i)]
        out += [("B", j) for j in range(m - warm, m)]
        return out
    raise ValueError(f"unknown schedule {name!r}")


def interleaved_1f1b(stage: int, stages: int, micro_batches: int, virtual_stages: int) -> list[Action]:
    """Megatron-LM's interleaved 1F1B order of device ``stage`` (``micro_batches`` divisible by ``stages``)."""
    p, m, v = stages, micro_batches, virtual_stages
    if m % p:
        raise ValueError(f"interleaved 1F1B needs micro-batches ({m}) divisible by pp ({p})")
    total = m * v

    def at(k: int, kind: str) -> Action:
        c = (k // p) % v
        return Action(kind, (k // (p * v)) * p + k % p, v - 1 - c if kind == "B" else c)

    warm = total if m == p else min(2 * (p - stage - 1) + (v - 1) * p, total)
    out = [at(k, "F") for k in range(warm)]
    for i in range(total - warm):
        out += [at(warm + i, "F"), at(i, "B")]
    return out + [at(k, "B") for k in range(total - warm, total)]


def zb_h1(stage: int, stages: int, micro_batches: int) -> list[Action]:
    """The ZB-H1 order of ``stage``: 1F1B's F/B order, with W passes lagging ``stage`` backwards.

    After its k-th backward (0-based) stage s runs W of micro-batch k − s (when
    k ≥ s); the s + 1 W passes still pending after the last B close the
    stage's order, filling what would be its 1F1B cool-down bubble.  With
    T_F = T_B = T_W every stage is then busy from its first forward to the end
    except for (p−1)·(T_F+T_B−T_W), and holds at most p micro-batches between
    F and W, 1F1B's peak (Qi et al. ICLR'24 §3.1, Fig. 3).
    """
    out: list[Action] = []
    backwards = weights = 0
    for kind, j in schedule("1f1b", stage, stages, micro_batches):
        out.append(Action(kind, j))
        if kind == "B":
            if backwards >= stage:
                out.append(Action("W", weights))
                weights += 1
            backwards += 1
    return out + [Action("W", j) for j in range(weights, micro_batches)]


def stage_orders(name: str, stages: int, micro_batches: int, virtual_stages: int = 1) -> list[list[Action]]:
    """The action list of every stage under a named schedule (not ``custom``)."""
    p, m = stages, micro_batches
    if name in ("1f1b", "gpipe"):
        return [[Action(k, j) for k, j in schedule(name, s, p, m)] for s in range(p)]
    if name == "interleaved_1f1b":
        return [interleaved_1f1b(s, p, m, virtual_stages) for s in range(p)]
    if name == "zb_h1":
        return [zb_h1(s, p, m) for s in range(p)]
    raise ValueError(f"unknown schedule {name!r}")


def max_in_flight(order) -> int:
    """Most micro-batches forwarded but not yet backwarded at any point of ``order``."""
    cur = best = 0
    for kind, *_ in order:
        if kind == "W":
            continue
        cur += 1 if kind == "F" else -1
        best = max(best, cur)
    return best


def activations_in_flight(order, virtual_stages: int = 1) -> float:
    """Peak activations a stage holds, in units of one micro-batch of the whole stage.

    A micro-batch's activations are held from its F until its B; one chunk's
    share is 1/v.  1F1B: p−s; interleaved: up to p + (p−1)/v on device 0
    (Narayanan et al. SC'21 §2.2); ZB-H1: p−s as 1F1B — what a pending W
    keeps (its layers' inputs and output gradients, Qi et al.'s M_W < M_B)
    is not counted.
    """
    cur = best = 0
    for a in order:
        if a[0] == "F":
            cur += 1
        elif a[0] == "B":
            cur -= 1
        best = max(best, cur)
    return best / virtual_stages
