"""Issue #16: a backend's optional abilities are declared, never probed.

* an AST scan of netsim/ finds no ``getattr``/``hasattr`` on a backend, a sink, a router or a
  congestion control (an expression naming ``backend``, ``be``, ``sink(s)``, ``router``, ``cc``,
  ``algo`` or ``registry``: what an algorithm offers — ``ecn_capable``, ``wants_int``,
  ``ecn_settings``, ``set_path``, ``min_rto_ns`` ... — is declared on ``CongestionControl``) — the scanner itself is shown
  to catch such a probe;
* no class forwards unknown attributes with ``__getattr__`` except the listed ones, each with its
  reason (a cluster job's view of the backend names what it passes on instead);
* what the base class declares holds: ``check_cc`` accepts by default, ``hpcc_ack_fct_ns`` is read
  only behind the ``hpcc_fct`` capability, every shipped sink has the whole sink protocol.
"""
from __future__ import annotations

import ast
import os
import re

import pytest
import simpy

from netsim.backends.base import HPCC_FCT, Backend, TraceSinks, create_backend, hpcc_ack_times
from netsim.records import ListSink
from netsim.sinks import Sink
from netsim.topology import dumbbell

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "netsim")
#: a name in the probed expression that says it is a backend, a sink or a router
PROBED = re.compile(r"^_?(backend|be|sinks?|router)$")
#: ... or a congestion control: probed by a literal attribute name (a computed name, as the
#: fast-forward's copy of declared state fields by name, is reflection, not a probe)
PROBED_CC = re.compile(r"^_?(cc|algo|registry)$")

#: classes that may define ``__getattr__``, with the reason (module-level ``__getattr__`` is lazy import)
GETATTR_ALLOWED = {
    "whatif.py:WhatIfBuilder": "an op-graph builder wrapper: applies delays to build(), the rest is the builder's",
    "runtime/variability.py:VariabilityBuilder": "an op-graph builder wrapper: stretches compute in build()",
}


def _names(node) -> list[str]:
    """The names of ``a.b.c`` (``["a", "b", "c"]``); a call or subscript ends the chain (its value is another object)."""
    out = []
    while isinstance(node, ast.Attribute):
        out.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        out.append(node.id)
    return out[::-1] if isinstance(node, ast.Name) else []


def probes(source: str) -> list[tuple[int, str]]:
    """``(line, expression)`` of every ``getattr``/``hasattr`` on a backend, sink or router in ``source``."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr")
                and n.args):
            continue
        names = _names(n.args[0])
        literal = len(n.args) > 1 and isinstance(n.args[1], ast.Constant)
        if any(PROBED.match(x) for x in names) or (literal and any(PROBED_CC.match(x) for x in names)):
            out.append((n.lineno, ast.unparse(n)))
    return out


def _modules():
    for d, _, files in os.walk(ROOT):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(d, f)
                yield os.path.relpath(path, ROOT).replace(os.sep, "/"), open(path, encoding="utf-8").read()


def test_the_scanner_catches_a_probe():
    src = ("def f(backend, be, sinks, self, cc, name):\n"
           "    z = getattr(cc, 'wants_int', False)\n"
           "    y = getattr(cc, name)\n"
           "    a = getattr(backend, 'graph', None)\n"
           "    b = hasattr(be, 'warn_overrun')\n"
           "    c = getattr(sinks.queues, 'path', None)\n"
           "    d = hasattr(self.router, 'unique_path')\n"
           "    e = getattr(self._backend, 'name')\n"
           "    return getattr(signal, 'SIGTERM'), getattr(be.registry[0], 'ecn_capable', False)\n")
    assert [line for line, _ in probes(src)] == [2, 4, 5, 6, 7, 8]


def test_no_probe_on_a_backend_sink_or_router():
    found = [f"{rel}:{line}: {expr}" for rel, text in _modules() for line, expr in probes(text)]
    assert not found, "declare the attribute (Backend, netsim.sinks.Sink) or gate it on a capability: " \
                      + "; ".join(found)


def test_no_attribute_forwarding_but_the_listed():
    found = set()
    for rel, text in _modules():
        for n in ast.walk(ast.parse(text)):
            if isinstance(n, ast.ClassDef) and any(isinstance(b, ast.FunctionDef) and b.name == "__getattr__"
                                                   for b in n.body):
                found.add(f"{rel}:{n.name}")
    assert found == set(GETATTR_ALLOWED)


class _Stub(Backend):
    name = "stub"

    def __init__(self):
        self.env, self.graph = simpy.Environment(), None

    def send(self, src, dst, size_bytes, tag=None, *, cc=None, priority=None):
        raise AssertionError("not sent")

    def stats(self):
        return {}


def test_base_class_declares_what_callers_read():
    be = _Stub()
    assert be.check_cc("anything") is None          # the default accepts (the contract checks names)
    assert be.sink is None and be.warn_overrun is True and be.capabilities == frozenset()
    be.hpcc_ack_fct_ns = {1: 2}                      # not behind the capability: never read
    assert hpcc_ack_times(be) is None


@pytest.mark.parametrize("backend", ["packet", "flow", "analytic"])
def test_hpcc_ack_times_only_where_declared(backend):
    be = create_backend(backend, dumbbell(1, 1), sinks=TraceSinks(fct=ListSink()), hpcc_fct=True)
    be.send("left0", "right0", 10_000)
    be.env.run()
    got = hpcc_ack_times(be)
    if HPCC_FCT in be.capabilities:
        assert list(got) == [0] and got[0] > 0      # the flow's measured last-ACK FCT, ns
    else:
        assert got is None


def test_flow_backend_check_cc_refuses_an_unmodelled_algorithm():
    from netsim.errors import InputError
    be = create_backend("flow", dumbbell(1, 1))
    be.check_cc("dcqcn")
    with pytest.raises(InputError, match="--cc"):
        be.check_cc("no-such-cc")


def test_every_shipped_sink_follows_the_protocol():
    import netsim.bench.flow  # noqa: F401  (its counting sink)
    import netsim.cluster.runner  # noqa: F401
    import netsim.fctmodes  # noqa: F401
    import netsim.runtime.summary  # noqa: F401
    sinks = {c.__name__ for c in _subclasses(Sink)}
    assert {"CsvSink", "ListSink", "TeeSink", "OpFctSink", "NullSink", "TrafficSink", "FlowLedger",
            "JobRows", "_CountSink"} <= sinks
    s = ListSink()
    s.add_many([1, 2, 3])
    assert s.rows == [1, 2, 3] and s.count == 3 and s.path is None


def _subclasses(cls):
    for c in cls.__subclasses__():
        yield c
        yield from _subclasses(c)
