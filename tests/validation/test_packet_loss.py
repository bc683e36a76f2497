"""Loss without PFC: drops counted, lost bytes retransmitted, every flow complete and exact."""
import os
import sys

import networkx as nx
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "backends", "packet"))
import cc_fixtures  # noqa: E402,F401  (registers the _test_* algorithms)
from pkt_helpers import run  # noqa: E402

from netsim.topology.builders import dumbbell  # noqa: E402


@pytest.mark.parametrize("cc", ["none", "_test_tcp"])
def test_small_buffer_no_pfc_drops_and_retransmits(cc):
    n, size = 4, 1_000_000
    g = dumbbell(n, 1)
    be, recs = run(g, [(f"left{i}", "right0", size) for i in range(n)], cc=cc,
                   params={"pfc": "off", "buffer_bytes": "60KB"})
    st = be.stats()
    assert st["drops"] > 0
    assert st["drops"] == st["drops_by_priority"][str(recs[0].priority)]
    assert st["retransmitted_bytes"] >= st["dropped_payload_bytes"] > 0
    assert st["completed"] == n
    for r in recs.values():
        assert r.size_bytes == size
    for f in be.all_flows.values():
        assert f.rcv_nxt == size  # exactly its size delivered, in order
    assert sum(r.retransmitted_bytes for r in recs.values()) > 0


def test_link_error_rate_random_loss_is_recovered():
    g = dumbbell(1, 1)
    g.edges["switch_left", "switch_right"]["error_rate"] = 0.01
    be, recs = run(g, [("left0", "right0", 2_000_000)], cc="_test_tcp", seed=3)
    st = be.stats()
    assert st["drops"] > 0 and st["completed"] == 1
    assert st["retransmitted_bytes"] >= st["dropped_payload_bytes"]
    assert be.all_flows[0].rcv_nxt == 2_000_000


def test_node_attribute_buffer_override_only_on_that_switch():
    g = dumbbell(4, 1)
    g.nodes["switch_left"]["buffer_bytes"] = 30_000
    be, _ = run(g, [(f"left{i}", "right0", 500_000) for i in range(4)], params={"pfc": "off"})
    st = be.stats()
    assert st["drops"] > 0 and st["completed"] == 4
    assert be.net.nodes["switch_left"].buf.total == 30_000
    assert be.net.nodes["switch_right"].buf.total == be.params["buffer_bytes"]


def test_static_buffer_mode_limits_each_port():
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for h in ("a", "b", "c", "r"):
        g.add_node(h, kind="host")
        g.add_edge(h, "sw", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    be, _ = run(g, [("a", "r", 500_000), ("b", "r", 500_000), ("c", "r", 500_000)],
                params={"pfc": "off", "buffer_mode": "static", "buffer_bytes": "120KB"}, queue_sink=True)
    st = be.stats()
    assert st["drops"] > 0 and st["completed"] == 3
    share = 120_000 / 4
    assert max(row[4] for row in be.sinks.queues.rows) <= share
