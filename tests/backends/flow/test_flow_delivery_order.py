"""A flow's record is written when it is delivered, never ahead of the clock (issue #14).

Regression: the record went to ``fct.csv`` at the fluid completion, one
latency term before the flow's end, so a run interrupted in between had a row
ending after ``sim_time_ns`` (4.8 µs after it in the QA run).
"""
import networkx as nx
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.records import ListSink


def _line(delay_ns: int) -> nx.Graph:
    g = nx.Graph()
    g.add_node("a", kind="host")
    g.add_node("b", kind="host")
    g.add_node("s", kind="switch")
    g.add_edge("a", "s", kind="ethernet", rate_bps=100e9, delay_ns=delay_ns)
    g.add_edge("s", "b", kind="ethernet", rate_bps=100e9, delay_ns=delay_ns)
    return g


def test_no_record_before_delivery_and_records_in_delivery_order():
    env, sink = simpy.Environment(), ListSink()
    be = create_backend("flow", _line(1_000_000), env=env, sinks=TraceSinks(fct=sink))   # 1 ms per link
    long_ev = be.send("a", "b", 10_000_000)      # 0.8 ms of bytes, ~2 ms of latency: done ~2.8 ms
    be.env.run(until=1_500_000_000)               # 1.5 ms: its bytes have left the sender, it is not delivered
    assert sink.rows == [] and be.flows_completed() == 0
    env.run(long_ev)
    rec = long_ev.value
    assert [r.flow_id for r in sink.rows] == [rec.flow_id] and rec.end_ns <= (env.now + 500) // 1000   # ns, rounded as sim_time_ns
    assert be.flows_completed() == 1
