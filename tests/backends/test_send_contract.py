"""One ``send`` contract on every backend (issue 16).

The same random flow specifications — valid and invalid: switch / NIC /
NVSwitch endpoints, unknown nodes, zero, negative, fractional, float-typed,
boolean and too-large sizes, unknown priorities and congestion controls,
self-sends — go to the packet, flow and analytic backends. Each is accepted
by all three or rejected by all three with the same one-line message, and a
self-send (a local copy) completes at once with the same record everywhere.
Before the network layer the backends disagreed (self-send: rejected /
rejected / 0 ns; 1000.5 B: rejected / recorded as 1000.5 / accepted; a
switch as destination: rejected / accepted / accepted; 0 B: rejected /
rejected / 5 ns), so these tests fail on that code.
"""
from __future__ import annotations

import math

import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim.backends.base import TraceSinks, create_backend
from netsim.errors import InputError
from netsim.network.fabric import MAX_FLOW_BYTES
from netsim.records import FlowTag, ListSink
from netsim.topology.builders import gpu_cluster

BACKENDS = ("packet", "flow", "analytic")
GRAPH = gpu_cluster(2, 2, nic_kinds="roce", nic_rates_bps="100Gbps", servers_per_leaf=1, spines=1)
GPUS = sorted(n for n, k in GRAPH.nodes(data="kind") if k == "gpu")
OTHERS = sorted(n for n, k in GRAPH.nodes(data="kind") if k != "gpu")   # switches, NICs, NVSwitch, PCIe


def _backends():
    out = {}
    for name in BACKENDS:
        sink = ListSink()
        out[name] = (create_backend(name, GRAPH.copy(), env=simpy.Environment(), cc="dcqcn",
                                    sinks=TraceSinks(fct=sink)), sink)
    return out


def _send(be, spec):
    try:
        return "ok", be.send(*spec[:3], FlowTag(tag="t"), cc=spec[3], priority=spec[4])
    except InputError as exc:
        return "error", str(exc)


nodes = st.one_of(st.sampled_from(GPUS), st.sampled_from(OTHERS), st.sampled_from(["nope", "gpu9", ("s0", "gpu0"), ["s0.gpu0"]]))
sizes = st.one_of(st.integers(min_value=1, max_value=10**7), st.sampled_from([0, -1, MAX_FLOW_BYTES,
                                                                               MAX_FLOW_BYTES + 1, 10**30]),
                  st.sampled_from([1000.5, 1000.0, True, float("nan"), "1000"]))
prios = st.one_of(st.none(), st.integers(min_value=-2, max_value=9), st.sampled_from([True, 3.0, "3"]))
ccs = st.sampled_from([None, "none", "dcqcn", "cubic", "dctcp", "bogus", "DCQCN"])
specs = st.tuples(nodes, nodes, sizes, ccs, prios)


_SHARED: dict = {}   # one set of backends for every example: they see the same sends, so ids stay aligned


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(specs, min_size=1, max_size=6))
def test_same_specs_same_verdict_on_every_backend(batch):
    bes = _SHARED.setdefault("bes", _backends())
    for spec in batch:
        got = {name: _send(be, spec) for name, (be, _) in bes.items()}
        kinds = {k for k, _ in got.values()}
        assert len(kinds) == 1, (spec, got)
        if kinds == {"error"}:
            msgs = {m for _, m in got.values()}
            assert len(msgs) == 1, (spec, msgs)
            assert "\n" not in msgs.pop()
        elif spec[0] == spec[1]:                       # a local copy: done now, same record everywhere
            recs = [ev.value for _, ev in got.values()]
            assert all(ev.triggered for _, ev in got.values())
            assert repr(recs[0]) == repr(recs[1]) == repr(recs[2]), recs   # repr: slowdown is NaN
            r = recs[0]
            assert r.fct_ns == 0 and r.start_ns == r.end_ns == 0 and r.ideal_fct_ns == 0
            assert math.isnan(r.slowdown) and r.size_bytes == spec[2]


def test_the_four_cases_of_the_issue():
    bes = _backends()
    for name, (be, sink) in bes.items():
        ev = be.send(GPUS[0], GPUS[0], 4096)
        assert ev.triggered and ev.value.fct_ns == 0, name
        assert sink.rows == [ev.value], name               # the record reached the sink at once
        for bad, field in ((1000.5, "size_bytes"), (0, "size_bytes")):
            with pytest.raises(InputError, match=f"flow {field}"):
                be.send(GPUS[0], GPUS[1], bad)
        with pytest.raises(InputError, match="flow dst: flows start and end at gpu/host nodes, not a switch"):
            be.send(GPUS[0], "leaf0", 1000)


def test_accepted_flows_complete_with_the_same_defaults():
    """A valid flow gets the same id, cc and default priority on every backend (DCQCN: roce_priority 3)."""
    bes = _backends()
    recs = {}
    for name, (be, sink) in bes.items():
        be.send(GPUS[0], GPUS[0], 10)                       # ids advance alike, local copies included
        be.send(GPUS[0], GPUS[3], 5000, FlowTag(tag="x"))
        be.env.run()
        recs[name] = [(r.flow_id, r.src, r.dst, r.size_bytes, r.cc, r.priority, r.tag) for r in sink.rows]
    assert recs["packet"] == recs["flow"] == recs["analytic"]
    assert recs["packet"][1] == (1, GPUS[0], GPUS[3], 5000, "dcqcn", 3, "x")


def test_a_pair_sent_before_is_checked_like_a_new_one():
    """The fast path of ``send`` (a pair the contract accepted before, default cc and priority,
    an int size) is taken only when ``check`` would accept: after a valid send of a pair, the
    same pair with a bad size, cc or priority is rejected with the contract's message on
    every backend, and a rejected send takes no flow id."""
    from netsim.network.params import resolve_params
    from netsim.network.send import SendContract
    contract = SendContract(GRAPH, resolve_params(), "dcqcn")
    bes = _backends()
    a, b = GPUS[0], GPUS[3]
    for name, (be, sink) in bes.items():
        be.send(a, b, 5000)
        for size, cc, prio in ((0, None, None), (1000.5, None, None), (True, None, None),
                               (MAX_FLOW_BYTES + 1, None, None), (10, "bogus", None), (10, None, 8),
                               (10, None, True)):
            with pytest.raises(InputError) as exc:
                be.send(a, b, size, cc=cc, priority=prio)
            with pytest.raises(InputError) as want:
                contract.check(a, b, size, cc=cc, priority=prio)
            assert str(exc.value) == str(want.value), name
        be.send(a, b, 7000)
        be.env.run()
        assert [(r.flow_id, r.size_bytes, r.priority) for r in sink.rows] == [(0, 5000, 3), (1, 7000, 3)], name
    for name, (be, _sink) in bes.items():   # the pair was sent before: odd arguments are still the contract's errors
        for args in (([a], b, 10), (a, [b], 10), (a, b, 10.0), (a, b, [10]), (a, b, 0)):
            with pytest.raises(InputError) as exc:
                be.send(*args)
            with pytest.raises(InputError) as want:
                contract.check(*args)
            assert str(exc.value) == str(want.value), (name, args)
