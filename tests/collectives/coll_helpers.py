"""Shared helpers for the collectives tests: small topologies and a runner on any backend."""
import networkx as nx


from netsim.backends.base import Backend, TraceSinks, create_backend
from netsim.records import ListSink


def star(n: int, rate_bps: float = 100e9, delay_ns: int = 500) -> nx.Graph:
    """``n`` hosts h0..h{n-1} on one switch (hand-built, following the graph contract)."""
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for i in range(n):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "sw", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    return g


def run_on(graph, fn, backend: str = "analytic", params=None):
    """Build a backend with a ListSink, call ``fn(backend)`` (starts processes), run; return (backend, rows)."""
    sink = ListSink()
    be = create_backend(backend, graph, params=params or {}, sinks=TraceSinks(fct=sink))
    out = fn(be)
    be.env.run()
    return be, sink.rows, out




class NoInNetwork(Backend):
    """A backend that does not declare ``in_network`` (every shipped one does): the refusals stay."""

    name = "stub"

    def __init__(self, graph):
        import simpy
        self.env, self.graph, self.sink = simpy.Environment(), graph, None

    def send(self, src, dst, size_bytes, tag=None, *, cc=None, priority=None):
        raise AssertionError("never reached: the in-network refusal comes first")

    def stats(self):
        return {}
