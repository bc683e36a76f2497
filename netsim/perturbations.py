"""The four what-if perturbations as records, and their one-string syntax.

Models a delay before matching collectives (:class:`DelaySpec`,
``COLLECTIVE[@GROUP]=DURATION``), a slow rank (:class:`Straggler`,
``RANK=FACTOR``) and a link degraded or failed at a simulated time
(:class:`LinkEvent`, ``A:B=FACTOR@TIME`` / ``A:B@TIME``), each parsed and
range-checked with a one-line :class:`~netsim.errors.InputError` naming the
flag or field.  Leaves out everything that needs a run: the topology and
rank checks, applying them to ops and scheduling link events
(:mod:`netsim.whatif`).

>>> parse_delay("allreduce@dp=2ms")
DelaySpec(collective='allreduce', group='dp', delay_ns=2000000)
>>> parse_straggler("3=1.5")
Straggler(rank=3, factor=1.5)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .errors import InputError
from .params import MAX_EXACT
from .units import UnitError, parse_time_ns

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall", "send", "broadcast", "any")
_ALIASES = {"all-reduce": "allreduce", "all_reduce": "allreduce", "all-gather": "allgather",
            "all_gather": "allgather", "reduce-scatter": "reducescatter", "reduce_scatter": "reducescatter",
            "all-to-all": "alltoall", "all_to_all": "alltoall", "sendrecv": "send", "p2p": "send", "*": "any"}
GROUP_KINDS = ("tp", "dp", "pp", "ep")
WHATIF_KEYS = ("inject_delay", "straggler", "degrade_link", "fail_link")
#: largest straggler slowdown: a rank 10^4 x slower is a stopped rank, and larger factors only
#: overflow simulated time (netsim choice)
MAX_STRAGGLER_FACTOR = 1e4
#: largest link-rate factor of --degrade-link (a factor above 1 speeds a link up; 10^3 keeps any
#: real link far below netsim.params.MAX_RATE_BPS) (netsim choice)
MAX_LINK_FACTOR = 1e3


def _factor(text: str, maximum: float) -> float | None:
    """``text`` as a finite number in (0, maximum], else None."""
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) and 0 < x <= maximum else None


@dataclass(frozen=True)
class DelaySpec:
    """Extra latency ``delay_ns`` before every ``collective`` of ``group`` (None = any group)."""

    collective: str
    group: str | None
    delay_ns: int
    origin: tuple = field(default=("--inject-delay", None), compare=False, repr=False)  # (where, source) for errors

    def matches(self, op) -> bool:
        if self.collective != "any" and op.collective != self.collective:
            return False
        return self.group is None or op.kind == self.group or op.group == self.group


@dataclass(frozen=True)
class Straggler:
    """Rank ``rank`` computes ``factor`` times slower."""

    rank: int
    factor: float
    origin: tuple = field(default=("--straggler", None), compare=False, repr=False)


@dataclass(frozen=True)
class LinkEvent:
    """At ``time_ns`` link a–b runs at ``factor`` × its rate; ``factor`` None = fails."""

    a: str
    b: str
    time_ns: int
    factor: float | None = None
    origin: tuple = field(default=(None, None), compare=False, repr=False)


def fail_input(msg, where, value, accepted, source=None):
    """Raise the one-line :class:`~netsim.errors.InputError` of a bad what-if value."""
    raise InputError(msg, source=source, where=where, value=value, accepted=accepted)


def parse_delay(text: str, *, where: str = "--inject-delay", source=None) -> DelaySpec:
    """``COLLECTIVE[@GROUP]=DURATION`` → :class:`DelaySpec`."""
    acc = "COLLECTIVE[@GROUP]=DURATION, e.g. allreduce@dp=2ms (collectives: " + ", ".join(COLLECTIVES) + ")"
    if not isinstance(text, str) or "=" not in text:
        fail_input("expected COLLECTIVE[@GROUP]=DURATION", where, text, acc, source)
    lhs, dur = text.rsplit("=", 1)
    coll, _, group = lhs.strip().partition("@")
    coll = _ALIASES.get(coll.strip().lower(), coll.strip().lower())
    if coll not in COLLECTIVES:
        fail_input("unknown collective", where, coll, "one of " + ", ".join(COLLECTIVES), source)
    group = group.strip() or None
    if group is not None and not (group in GROUP_KINDS or (group[:2] in GROUP_KINDS and group[2:].isdigit())):
        fail_input("unknown group", where, group, "a group kind (tp, dp, pp, ep) or an instance such as dp0", source)
    try:
        ns = parse_time_ns(dur.strip())
    except UnitError:
        fail_input("bad duration", where, dur.strip(), "a duration such as 500us or 2ms", source)
    if not 0 <= ns <= MAX_EXACT:
        fail_input("delay out of range", where, dur.strip(), "a duration >= 0 and <= 2^53 ns", source)
    return DelaySpec(coll, group, int(ns), (where, source))


def parse_straggler(text, *, where: str = "--straggler", source=None) -> Straggler:
    """``RANK=FACTOR`` → :class:`Straggler`."""
    acc = "RANK=FACTOR, e.g. 3=1.5 (rank 3 computes 1.5x slower)"
    if not isinstance(text, str) or "=" not in text:
        fail_input("expected RANK=FACTOR", where, text, acc, source)
    r, f = (x.strip() for x in text.split("=", 1))
    if not (r.isascii() and r.isdigit()) or len(r) > 18:
        fail_input("bad rank", where, r, "a rank number >= 0", source)
    factor = _factor(f, MAX_STRAGGLER_FACTOR)
    if factor is None:
        fail_input("bad slowdown factor", where, f,
              f"a finite number > 0 and <= {MAX_STRAGGLER_FACTOR:g} (1.5 = 50% slower)", source)
    return Straggler(int(r), factor, (where, source))


def parse_link_event(text, *, fail: bool = False, where: str | None = None, source=None) -> LinkEvent:
    """``A:B=FACTOR@TIME`` (degrade) or ``A:B@TIME`` (``fail=True``) → :class:`LinkEvent`.

    ``@TIME`` may be omitted (time 0).
    """
    where = where or ("--fail-link" if fail else "--degrade-link")
    acc = "A:B@TIME, e.g. leaf0:spine1@5ms" if fail else "A:B=FACTOR@TIME, e.g. leaf0:spine1=0.5@5ms"
    if not isinstance(text, str):
        fail_input("expected " + acc.split(",")[0], where, text, acc, source)
    body, _, when = text.partition("@")
    factor = None
    if not fail:
        if "=" not in body:
            fail_input("expected A:B=FACTOR@TIME", where, text, acc, source)
        body, f = body.rsplit("=", 1)
        factor = _factor(f, MAX_LINK_FACTOR)
        if factor is None:
            fail_input("bad rate factor", where, f, f"a finite number > 0 and <= {MAX_LINK_FACTOR:g} "
                  "(0.5 = half rate; use --fail-link to remove)", source)
    elif "=" in body:
        fail_input("a failure takes no factor", where, text, acc, source)
    a, sep, b = body.partition(":")
    if not sep or not a.strip() or not b.strip():
        fail_input("expected two node names A:B", where, text, acc, source)
    t = 0
    if when.strip():
        try:
            t = parse_time_ns(when.strip())
        except UnitError:
            fail_input("bad time", where, when.strip(), "a simulated time such as 0, 500us or 5ms", source)
        if not 0 <= t <= MAX_EXACT:
            fail_input("time out of range", where, when.strip(), "a time >= 0 and <= 2^53 ns", source)
    return LinkEvent(a.strip(), b.strip(), int(t), factor, (where, source))
