"""Pipeline schedules: the order in which a stage runs forward/backward passes.

* ``gpipe`` (Huang et al. 2019): all m forwards, then all m backwards; a stage
  holds up to m micro-batches' activations.
* ``1f1b`` (PipeDream-flush, Narayanan et al. 2021): stage s (0-based) of p
  runs min(p−s−1, m) warm-up forwards, then alternates one forward and one
  backward, then drains the remaining backwards; at most p−s ≤ p micro-batches
  are in flight.

Both take (m + p − 1)·(t_f + t_b) with uniform stages and free communication.
Left out: interleaved 1F1B (virtual stages).

>>> schedule("1f1b", stage=0, stages=3, micro_batches=4)
[('F', 0), ('F', 1), ('F', 2), ('B', 0), ('F', 3), ('B', 1), ('B', 2), ('B', 3)]
>>> max_in_flight(schedule("gpipe", 0, 3, 4))
4
"""
from __future__ import annotations

SCHEDULES = ("1f1b", "gpipe")


def schedule(name: str, stage: int, stages: int, micro_batches: int) -> list[tuple[str, int]]:
    """The (pass, micro-batch) sequence of one stage; pass is ``"F"`` or ``"B"``."""
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


def max_in_flight(order) -> int:
    """Most micro-batches forwarded but not yet backwarded at any point of ``order``."""
    cur = best = 0
    for kind, _ in order:
        cur += 1 if kind == "F" else -1
        best = max(best, cur)
    return best
