"""Host-stack costs in send() and the link-change protocol (set_link_rate, fail_link) of the packet backend.

Oracles: netsim.hoststack's closed form for a lone message (per-message overhead + size at the
per-connection cap), the ideal FCT (no cost for RDMA / NVLink-only flows), conservation (every byte
delivered exactly once after a failure), and the serialization rate after a rate change.
"""
import networkx as nx
import pytest

import cc_fixtures  # noqa: F401
from pkt_helpers import make_backend, run

from netsim.errors import RoutingError
from netsim.hoststack import HostStack
from netsim.topology import load_topology
from netsim.topology.builders import dumbbell

SIZE = 10_000_000


def _fct(g, cc, params=None, host=None):
    env, be = make_backend(g, cc=cc, params=params)
    if host is not None:
        be.host_stack = host
    ev = be.send("left0", "right0", SIZE)
    env.run()
    return ev.value


def test_tcp_flow_pays_message_overhead_and_cpu_rate_cap():
    g = dumbbell(1, 1)
    base = _fct(g, "_test_tcp")
    rec = _fct(g, "_test_tcp", params={"host.tcp_message_overhead_ns": "20us"})
    hs = HostStack({"tcp_message_overhead_ns": "20us"})
    expect = hs.message_time_ns("tcp", SIZE, 100e9)          # 20 us + 10 MB at ~42 Gbit/s
    assert rec.fct_ns == pytest.approx(expect, rel=0.01)
    assert rec.fct_ns > 2 * base.fct_ns
    # the runtime path: a HostStack object set on the backend, defaults
    rec2 = _fct(g, "_test_tcp", host=HostStack())
    assert rec2.fct_ns == pytest.approx(HostStack().message_time_ns("tcp", SIZE, 100e9), rel=0.01)


def test_rdma_flow_runs_at_line_rate_and_pays_only_its_overhead():
    g = dumbbell(1, 1)
    base = _fct(g, "_test_roce")
    assert base.fct_ns == pytest.approx(base.ideal_fct_ns, rel=0.01)
    on = _fct(g, "_test_roce", params={"host_stack": "on"})
    assert on.fct_ns == base.fct_ns                          # RDMA: no cap, 0 ns per message by default
    late = _fct(g, "_test_roce", params={"host.rdma_message_overhead_ns": "5us"})
    assert late.fct_ns == base.fct_ns + 5_000


def test_nvlink_only_flow_pays_nothing():
    g = nx.Graph()
    g.add_node("nvs", kind="nvswitch")
    for i in range(2):
        g.add_node(f"g{i}", kind="gpu")
        g.add_edge(f"g{i}", "nvs", rate_bps=3.6e12, delay_ns=100, kind="nvlink")
    env, be = make_backend(g, cc="_test_tcp", params={"host_stack": "on"})
    ev = be.send("g0", "g1", 1_000_000)
    env.run()
    assert ev.value.fct_ns == pytest.approx(ev.value.ideal_fct_ns, rel=0.01)


def test_unknown_host_key_is_rejected():
    from netsim.errors import InputError
    with pytest.raises(InputError) as e:
        make_backend(dumbbell(1, 1), params={"host.tcp_stremas": 2})
    assert "tcp_stremas" in str(e.value)


def test_set_link_rate_changes_serialization_from_now_on():
    """4 MB over a 100 G bottleneck cut to 25 G at 100 us: the rest drains at 25 G x payload share."""
    g = dumbbell(1, 1)
    env, be = make_backend(g, cc="_test_roce", cc_params={"_test_roce": {"window_bytes": "1MB"}})
    ev = be.send("left0", "right0", 4_000_000)
    seen = {}

    def change(env):
        yield env.timeout(100_000_000)  # 100 us in ps
        seen["rx"] = be.all_flows[0].rcv_nxt
        be.set_link_rate("switch_left", "switch_right", 25e9)

    env.process(change(env))
    env.run()
    mss, mtu = 1438, 1500
    rest_ns = (4_000_000 - seen["rx"]) * 8 / (25e9 * mss / mtu) * 1e9
    assert ev.value.end_ns == pytest.approx(100_000 + rest_ns, rel=0.02)
    assert g.edges["switch_left", "switch_right"]["rate_bps"] == 25e9
    # a flow started afterwards: the ideal FCT uses the new rate and the flow achieves it
    ev2 = be.send("left0", "right0", 1_000_000)
    env.run()
    assert ev2.value.fct_ns == pytest.approx(ev2.value.ideal_fct_ns, rel=0.01)
    assert ev2.value.ideal_fct_ns > 1_000_000 * 8 / 25e9 * 1e9


@pytest.mark.parametrize("cc", ["_test_tcp", "_test_roce"])
def test_fail_link_reroutes_and_transport_recovers(cc):
    g = load_topology("leaf_spine:leaves=2,spines=2,hosts_per_leaf=1")
    env, be = make_backend(g, cc=cc)
    ev = be.send("h0", "h1", 3_000_000)
    f = be.all_flows[0]
    spine = next(p.peer_name for p in f.route if p.name == "leaf0")
    other = "spine1" if spine == "spine0" else "spine0"

    def fail(env):
        yield env.timeout(50_000_000)  # 50 us: the flow is in full swing
        be.fail_link("leaf0", spine)

    env.process(fail(env))
    env.run()
    rec = ev.value
    assert not g.has_edge("leaf0", spine)
    assert [p.peer_name for p in f.route if p.name == "leaf0"] == [other]
    assert f.rcv_nxt == 3_000_000 and rec.size_bytes == 3_000_000
    st = be.stats()
    assert st["drops"] > 0 and rec.retransmitted_bytes >= st["dropped_payload_bytes"] > 0
    # a new flow goes around the failed link
    ev2 = be.send("h0", "h1", 100_000)
    env.run()
    assert ev2.value.fct_ns == pytest.approx(ev2.value.ideal_fct_ns, rel=0.01)


def test_fail_link_disconnecting_a_running_flow_raises():
    g = dumbbell(1, 1)
    env, be = make_backend(g)
    be.send("left0", "right0", 3_000_000)
    env.run(until=20_000_000)
    with pytest.raises(RoutingError):
        be.fail_link("switch_left", "switch_right")


def test_whatif_accepts_the_packet_backend():
    from netsim.whatif import WhatIf
    _, be = make_backend(dumbbell(1, 1))
    WhatIf.from_cli(degrade_link=["switch_left:switch_right=0.5@10us"],
                    fail_link=["switch_left:left0@20us"]).check_backend(be)
