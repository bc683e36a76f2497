"""The flow backend's approximate queue and PFC traces of DCQCN runs agree with the packet backend's.

The fluid FIFO model (netsim/backends/flow/fifo.py) writes queues.csv / pfc.csv rows for the links
DCQCN flows cross. On the 16-to-1 incast (paper preset, PFC on) the packet backend's per-port peak
queue and the set of paused ingress links are the reference.
"""
import simpy

from netsim.backends.base import TraceSinks, create_backend
from flow_scenarios import incast, load_graph
from netsim.records import FlowTag, ListSink


def _run(backend, sc):
    g = load_graph(sc.topology)
    env = simpy.Environment()
    q, p = ListSink(), ListSink()
    b = create_backend(backend, g, env=env, cc="dcqcn", cc_params={"dcqcn": {"preset": "paper"}}, sinks=TraceSinks(fct=ListSink(), queues=q, pfc=p))
    for i, (s, d, size, _) in enumerate(sc.flows):
        b.send(s, d, size, FlowTag(tag=f"f{i}", row=i))   # keyed by row, as netsim flows
    env.run()
    b.close()
    peak = {}
    for t, node, port, prio, qb in q.rows:
        peak[(node, port)] = max(peak.get((node, port), 0), qb)
    paused = {(node, port) for t, node, port, prio, ev in p.rows if ev == "pause"}
    return peak, paused, p.rows


def test_incast_peak_queues_and_paused_links_match_packet():
    sc = incast(16, 1_000_000)
    fpeak, fpaused, frows = _run("flow", sc)
    ppeak, ppaused, _ = _run("packet", sc)
    big = {k: v for k, v in ppeak.items() if v >= 100_000}
    assert len(big) >= 5
    for k, v in big.items():
        assert abs(fpeak.get(k, 0) - v) <= 0.10 * v, (k, fpeak.get(k), v)
    # PFC: the fluid model pauses the links the packet backend pauses, and no others
    assert fpaused <= ppaused
    assert len(fpaused) >= 0.8 * len(ppaused), (sorted(fpaused), sorted(ppaused))
    # pause and resume alternate on every link
    state = {}
    for t, node, port, prio, ev in frows:
        assert state.get((node, port), "resume") != ev, (t, node, port, ev)
        state[(node, port)] = ev
