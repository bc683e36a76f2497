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


def _fan() -> nx.Graph:
    """Hosts h0..h5 on one switch, link delays 1, 2, 3, ... us: flows of one fluid instant
    deliver at different times, flows of different instants at the same time."""
    g = nx.Graph()
    g.add_node("s", kind="switch")
    for i in range(6):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "s", kind="ethernet", rate_bps=100e9, delay_ns=1000 * (i % 3 + 1))
    return g


def test_records_written_at_delivery_in_event_order():
    """Each record is in fct.csv when its flow's event is processed, none ends after the clock,
    and the rows are in the order the events are processed (batched deliveries change neither)."""
    env, sink = simpy.Environment(), ListSink()
    be = create_backend("flow", _fan(), env=env, sinks=TraceSinks(fct=sink))
    seen = []

    def on_done(ev):
        rec = ev.value
        assert rec in sink.rows                                   # written by the time it is delivered
        assert all(r.end_ns <= (env.now + 500) // 1000 for r in sink.rows)
        seen.append(rec.flow_id)

    sizes = [125_000, 125_000, 250_000, 125_000, 250_000, 125_000]
    for i, size in enumerate(sizes):
        be.send(f"h{i}", f"h{(i + 1) % 6}", size).callbacks.append(on_done)
        be.send(f"h{i}", f"h{(i + 3) % 6}", size // 2).callbacks.append(on_done)
    env.run()
    assert len(seen) == 12 and [r.flow_id for r in sink.rows] == seen
    assert len({r.end_ns for r in sink.rows}) > 2 and be.flows_completed() == 12
