"""The flow backend's per-connection caches at scale give the same answers as recomputing.

* ``PathTable.lookup`` keeps a multi-path pair's ECMP path per ``(src, dst, key)``: the cached
  path is the router's path for that key, the router is walked once per key (not once per flow),
  and a link change (``forget``) drops the cache;
* the fluid network hands the records of one delivery to a :class:`~netsim.records.TeeSink` in one
  ``add_many`` call: every sink gets the same records in the same order as with one ``add`` each.
"""
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.backends.flow import paths as paths_mod
from netsim.records import FlowTag, ListSink, TeeSink
from netsim.sinks import Sink
from netsim.topology import load_topology

CLUSTER = "gpu_cluster:servers=16,gpus_per_server=8"    # two leaves: GPU pairs across them have ECMP paths


def _gpus(graph):
    return sorted(n for n, d in graph.nodes(data=True) if d.get("kind") == "gpu")


def _gpu_pair(be, graph):
    """A GPU pair with several shortest paths (``unique_path`` None)."""
    gpus = _gpus(graph)
    return next((gpus[0], g) for g in gpus[1:] if be.paths.router.unique_path(gpus[0], g) is None)


class _CountingRouter:
    """Wraps a router and counts ``path`` calls."""

    def __init__(self, router):
        self._router = router
        self.calls = 0

    def path(self, src, dst, key):
        self.calls += 1
        return self._router.path(src, dst, key)

    def __getattr__(self, name):
        return getattr(self._router, name)


def test_ecmp_path_cached_per_key_is_the_routers_path():
    graph = load_topology(CLUSTER)
    be = create_backend("flow", graph, env=simpy.Environment())
    table = be.paths
    src, dst = _gpu_pair(be, graph)
    router = table.router
    counting = table.router = _CountingRouter(router)
    keys = range(40)
    first = [table.lookup(src, dst, k) for k in keys]
    assert table.pair[(src, dst)] is None, "the test needs a multi-path pair"
    assert counting.calls == len(keys)
    assert len({info.path for info in first}) > 1, "ECMP keys spread over several paths"
    for k, info in zip(keys, first):
        assert info.path == tuple(router.path(src, dst, k))
    again = [table.lookup(src, dst, k) for k in keys]
    assert counting.calls == len(keys), "a key seen before does not walk the router again"
    assert all(a is b for a, b in zip(first, again))
    table.forget()
    table.lookup(src, dst, 0)
    assert counting.calls == len(keys) + 1, "forget (a link change) drops the cached paths"


def test_ecmp_cache_is_bounded(monkeypatch):
    graph = load_topology(CLUSTER)
    be = create_backend("flow", graph, env=simpy.Environment())
    monkeypatch.setattr(paths_mod, "ECMP_CACHE", 8)
    src, dst = _gpu_pair(be, graph)
    for k in range(30):
        be.paths.lookup(src, dst, k)
        assert len(be.paths._ecmp) <= 8


def _run_fan(sink):
    graph = load_topology(CLUSTER)
    env = simpy.Environment()
    be = create_backend("flow", graph, env=env, sinks=TraceSinks(fct=sink))
    gpus = _gpus(graph)[:32]
    for i, src in enumerate(gpus[1:]):      # many flows into one GPU: shared links, several deliveries
        be.send(src, gpus[0], 100_000 + 1000 * (i % 3), FlowTag(tag=f"f{i}"))
    env.run()


class _OneByOne(Sink):
    """A sink with the base class's ``add_many`` (one ``add`` per row) that forwards to a TeeSink row by row."""

    def __init__(self, tee):
        self.tee = tee

    def add(self, row):
        self.tee.add(row)

    def flush(self):
        self.tee.flush()

    close = flush


def test_deliveries_add_many_same_records_same_order():
    a1, a2 = ListSink(), ListSink()
    tee = TeeSink(a1, a2)
    _run_fan(tee)
    b1, b2 = ListSink(), ListSink()
    _run_fan(_OneByOne(TeeSink(b1, b2)))
    assert len(a1.rows) == 31 and tee.count == 31
    assert [r.row() for r in a1.rows] == [r.row() for r in b1.rows]
    assert [r.row() for r in a2.rows] == [r.row() for r in a1.rows]
    assert len({r.end_ns for r in a1.rows}) > 1, "several delivery instants"
    assert any(sum(r.end_ns == e for r in a1.rows) > 1 for e in {r.end_ns for r in a1.rows}), \
        "some instant delivers several records at once (the add_many case)"
