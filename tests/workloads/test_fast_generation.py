"""The fast op-graph generation path builds exactly the graph of its plain definition.

``OpGraphBuilder._compute`` / ``_tp_collective`` build ops directly (``Op.compute``,
inlined dependency lists) and the executor wires dependencies in one pass with the
cyclic collector paused.  Here a builder that uses the readable definitions
(``Op(...)`` with ``_deps``) is the reference: every field of every op, and the
dependency structure, must be equal.
"""
import gc

import pytest

from netsim.runtime.executor import Executor, gc_paused
from netsim.workloads import Op, OpGraphBuilder, Placement, load_workload


class _PlainBuilder(OpGraphBuilder):
    """The generation hot path as first written (one keyword ``Op(...)`` per op)."""

    def _compute(self, r, name, ps):
        deps = self._deps(r)
        if ps <= 0 and len(deps) == 1:
            return
        self.cur[r] = self._add(Op(name, "compute", (r,), self.it, duration_ps=ps, deps=deps))

    def _tp_collective(self, tg, gi, name, coll, size, extra=None, sp=True):
        deps = [d for r in tg for d in self._deps(r)] + list(extra or ())
        op = self._add(Op(f"tp{gi}.{name}", "tp", tg, self.it, group=f"tp{gi}", collective=coll,
                          size_bytes=size, spec=self.w.collectives["tp"], deps=deps))
        for r in tg:
            self.cur[r] = op


FIELDS = ("name", "kind", "group", "collective", "ranks", "iteration", "duration_ps", "size_bytes", "spec",
          "sizes", "delay_ps", "start_ps", "end_ps", "pending", "seq")


def _doc(**par):
    return {"model": {"preset": "gpt-1.5b", "layers": 4, "hidden": 256, "heads": 8, "seq_len": 64, "vocab": 1000},
            "training": {"global_batch": 16, "micro_batch": 2, "recompute": True},
            "parallelism": {"dp": 2, "tp": 2, "pp": 2, **par}}


def _graphs(doc, cls, iterations=2):
    w = load_workload(doc)
    pl = Placement.build(w.dp, w.tp, w.pp, w.order, [f"g{i}" for i in range(w.world_size)])
    b = cls(w, pl)
    return [b.build(it) for it in range(iterations)]


def _shape(iterations):
    index = {id(op): (k, i) for k, ops in enumerate(iterations) for i, op in enumerate(ops)}
    return [[tuple(getattr(op, f) for f in FIELDS) + (tuple(index[id(d)] for d in op.deps),)
             for op in ops] for ops in iterations]


@pytest.mark.parametrize("par", [{}, {"schedule": "gpipe"}, {"tp": 1, "pp": 4, "dp": 1},
                                 {"virtual_stages": 2, "schedule": "interleaved_1f1b"}])
def test_fast_builder_equals_plain_definition(par):
    fast, plain = _graphs(_doc(**par), OpGraphBuilder), _graphs(_doc(**par), _PlainBuilder)
    assert sum(len(ops) for ops in fast) > 100
    assert _shape(fast) == _shape(plain)


def test_op_compute_equals_keyword_constructor():
    a = Op("F0.layer1.attn", "compute", (3,), 2, duration_ps=17, deps=[])
    b = Op.compute("F0.layer1.attn", 3, 2, 17, [])
    assert [getattr(a, s) for s in Op.__slots__] == [getattr(b, s) for s in Op.__slots__]


class _Env:
    now = 0

    def timeout(self, _ps):
        class _Ev:
            callbacks: list = []
        return _Ev()

    def event(self):
        return None


class _Backend:
    env = _Env()


class _Fixed:
    def __init__(self, ops):
        self.ops = ops

    def build(self, it):
        return self.ops


def test_wire_counts_each_distinct_unfinished_dependency_once_in_order():
    a, b, done = (Op(n, "compute", (0,), 0, duration_ps=1) for n in "abd")
    done.end_ps = 5                     # finished earlier (e.g. the previous iteration's optimizer)
    c = Op("c", "compute", (0,), 0, duration_ps=1, deps=[b, a, b, done, None])
    d = Op("d", "compute", (0,), 0, duration_ps=1, deps=[a])
    ex = Executor(_Backend(), _Fixed([a, b, c, d]), ["g0"])
    ready = ex._wire([a, b, c, d])
    assert ready == [a, b]
    assert (a.pending, b.pending, c.pending, d.pending) == (0, 0, 2, 1)
    assert a.succs == [c, d] and b.succs == [c] and c.succs == () and done.succs == ()
    assert c.deps == [b, a, b, done]    # duplicates kept (breakdowns read deps), None dropped
    assert [op.seq for op in (a, b, c, d)] == [0, 1, 2, 3]


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_paused_restores_the_collector_state(enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with gc_paused():
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
        with pytest.raises(ZeroDivisionError):
            with gc_paused():
                1 / 0
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()
