"""Per-step tags of a collective run are the caller's tag with ``collective``, ``step`` and ``channel`` set,
every other field kept."""
from dataclasses import fields, replace

import simpy

from netsim.collectives.engine import Run
from netsim.records import FlowTag


class _Backend:
    """A :class:`~netsim.collectives.engine.Port` that never sends (only tags are built)."""

    env = simpy.Environment()
    graph, name, capabilities, send_batch = None, "stub", frozenset(), None


def test_tag_for_step_keeps_every_other_field():
    base = FlowTag("wl", 3, "dp1.bucket2", "dp1", "ignored", 9, "dp", "job-a", 7, 4)
    assert all(getattr(base, f.name) != f.default for f in fields(FlowTag))   # no field left at its default
    run = Run(_Backend(), "allreduce", base, None)
    for step, channel in ((0, 0), (5, 0), (0, 2), (0, 0)):
        t = run.tag_for(step, channel)
        assert t == replace(base, collective="allreduce", step=step, channel=channel)
        assert t is run.tag_for(step, channel)                               # one tag object per (step, channel)
