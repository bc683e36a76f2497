"""SimPy's private API is touched by the scheduler only (anywhere in netsim); the transport uses the Port's public interface."""
from __future__ import annotations

import os
import re

import pytest

import netsim
from netsim.backends.packet.port import Port

PKG = os.path.dirname(netsim.__file__)
AREAS = (os.path.join(PKG, "backends", "packet"), os.path.join(PKG, "transport"))
SCHEDULER = os.path.join(PKG, "network", "scheduler.py")
#: SimPy's private attributes (heap, id counter, clock) as this code base would spell them
PRIVATE = re.compile(r"env\._|\._queue\b|\._eid\b|\._now\b")
#: Port internals the transport used to reach into
PORT_INTERNALS = re.compile(r"\._wake\b|\._schedule_wake\b|\.busy_until\b|\.wake_pending\b|port\.ring\b")


def _sources(*roots):
    for root in roots:
        for d, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith(".py"):
                    yield os.path.join(d, f)


def _hits(pattern, paths):
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                if pattern.search(line):
                    out.append(f"{os.path.relpath(p, PKG)}:{i}: {line.strip()}")
    return out


def test_simpy_private_api_only_in_the_scheduler():
    paths = [p for p in _sources(PKG) if p != SCHEDULER]     # the whole package: runtime and benches too
    assert len(paths) > 100
    assert _hits(PRIVATE, paths) == []
    assert _hits(PRIVATE, [SCHEDULER])          # the grep itself can see them


def test_transport_uses_only_the_port_interface():
    assert _hits(PORT_INTERNALS, list(_sources(AREAS[1]))) == []
    for name in ("add_sender", "remove_sender", "kick", "send_control"):
        assert callable(getattr(Port, name))


def test_dead_code_is_gone():
    import netsim.transport.flow as flow
    assert not hasattr(Port, "_pick")
    assert not hasattr(flow, "ACK_KIND")
    bare = re.compile(r"range\((8|9)\)|\[:8\]")
    assert _hits(bare, [p for p in _sources(*AREAS) if not p.endswith("defaults.py")]) == []


@pytest.mark.parametrize("cc,params", [("dcqcn", {"buffer_bytes": 1_000_000}), ("cubic", {"routing": "spray"})])
def test_a_port_wake_up_fires_at_busy_until(monkeypatch, cc, params):
    """A port's own wake-up event takes its time from ``busy_until`` (no clock read): the two must agree."""
    from pkt_helpers import run, star
    orig = Port._wake
    seen = []

    def checked(self, ev, now=None):
        if now is None:
            assert self.env.now == self.busy_until
            seen.append(1)
        else:
            assert now == self.env.now >= self.busy_until
        return orig(self, ev, now)

    monkeypatch.setattr(Port, "_wake", checked)
    be, recs = run(star(6), [(f"h{i}", "h5", 300_000) for i in range(5)], cc=cc, params=params)
    assert len(recs) == 5 and len(seen) > 100
