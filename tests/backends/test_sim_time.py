"""summary ``sim_time_ns`` is when the last flow finished, on every backend (docs/packet.md).

Regression (trial 8): the packet backend reported its last pending timer (a 1 ms
RTO after the last send), the flow backend with DCQCN its fluid model's last tick,
instead of the largest ``end_ns`` of the flow records.
"""
import networkx as nx
import pytest

from netsim.flowfile import FlowSpec
from netsim.simulate import run_flows


def _star(n_hosts: int) -> nx.Graph:
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for i in range(n_hosts):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "sw", kind="ethernet", rate_bps=100e9, delay_ns=1000)
    return g


@pytest.mark.parametrize("backend, cc", [("packet", "none"), ("packet", "dcqcn"), ("flow", "none"),
                                         ("flow", "dcqcn"), ("analytic", "none")])
def test_sim_time_is_the_last_flow_end(backend, cc):
    # a 2:1 incast of 1 MB (DCQCN reacts), a later 50 kB flow, and a self-send (a local copy) after all of them
    flows = [FlowSpec("h0", "h2", 1_000_000, 0), FlowSpec("h1", "h2", 1_000_000, 0),
             FlowSpec("h3", "h0", 50_000, 5_000), FlowSpec("h1", "h1", 1000, 800_000)]
    s = run_flows(_star(4), flows, backend=backend, cc=cc)
    ends = [r.end_ns for r in s["records"]]
    assert len(ends) == 4 and max(ends) == 800_000         # the local copy, last, finishes at its start
    assert s["sim_time_ns"] == max(ends)
    s = run_flows(_star(4), flows[:3], backend=backend, cc=cc)
    assert s["sim_time_ns"] == max(r.end_ns for r in s["records"])
