"""A port's per-packet handlers are chosen once for its features (egress.choose_wake, intport.enable_int).

Plain ports (nearly all) run ``_wake`` / ``_arrive_fwd`` with no relay or INT test; the first flow
that wants in-band telemetry switches every forwarding egress to the stamping copies, and a
relaying GPU's ports take ``_wake_featured``. Outputs are checked elsewhere (the HPCC tests, the
shipped examples); here: who runs what, and that a flow starting while traffic is in flight still
gets every switch hop stamped.
"""
from __future__ import annotations

from netsim.backends.packet.egress import EgressMixin
from netsim.backends.packet.intport import IntMixin
from netsim.backends.packet.wire import WireMixin
from netsim.topology import load_topology


def _fn(bound):
    return bound.__func__


def _switch_ports(be):
    return [p for p in be.net.ports.values() if hasattr(p.node, "admit")]


def test_ports_are_plain_until_the_first_hpcc_flow():
    from pkt_helpers import make_backend, star
    env, be = make_backend(star(4), cc="none")
    ports = list(be.net.ports.values())
    assert not be.net.int_on
    assert all(_fn(p.wake) is EgressMixin._wake and p.wake_cbs[0] == p.wake for p in ports)
    assert not any(p.int_stamps for p in ports)
    into_switch = [p for p in ports if p.peer_name == "sw"]
    assert len(into_switch) == 4 and all(_fn(p.pipe_cbs[0]) is WireMixin._arrive_fwd for p in into_switch)
    be.send("h0", "h3", 40_000)                     # cc none: nothing changes
    assert not be.net.int_on
    be.send("h1", "h3", 40_000, cc="hpcc")
    assert be.net.int_on
    sw = _switch_ports(be)
    assert len(sw) == 4 and all(p.int_stamps and _fn(p.wake) is IntMixin._wake_int for p in sw)
    nics = [p for p in ports if p not in sw]
    assert all(not p.int_stamps and _fn(p.wake) is EgressMixin._wake for p in nics)
    assert all(_fn(p.pipe_cbs[0]) is IntMixin._arrive_fwd_int for p in into_switch)
    env.run()
    assert len(be.sink.rows) == 2


def test_an_hpcc_flow_started_mid_run_is_stamped_at_every_switch():
    """INT switched on while another flow's packets queue at the switches: no hop goes unstamped."""
    from pkt_helpers import run

    from netsim.bench.cc import dumbbell_graph
    from netsim.transport import roce
    echoes = []
    orig = roce.RoceFlow.on_ack

    def spy(self, pkt, now):
        if self.wants_int:
            echoes.append([h[0].name for h in pkt.echo])    # stamps are plain (port, qlen, tx, ts, rate) tuples
        orig(self, pkt, now)

    roce.RoceFlow.on_ack = spy
    try:
        g = dumbbell_graph(2, host_rate_bps=100e9, host_delay_ns=1000, bott_rate_bps=100e9, bott_delay_ns=1000)
        be, recs = run(g, [("s0", "r0", 2_000_000, 0, None, "none"), ("s1", "r0", 200_000, 20, None, "hpcc")])
    finally:
        roce.RoceFlow.on_ack = orig
    assert len(recs) == 2 and len(echoes) > 50
    assert all(e == ["sw0", "sw1"] for e in echoes)


def test_a_relaying_gpu_port_takes_the_featured_wake_up():
    from pkt_helpers import make_backend
    env, be = make_backend(load_topology("gpu_torus:dims=4|4"))
    relay = [p for p in be.net.ports.values() if p.relay_fair]
    assert relay and all(_fn(p.wake) is EgressMixin._wake_featured for p in relay)
    be.send("s0.gpu0", "s0.gpu2", 100_000)      # two hops: relayed by a GPU between them
    be.send("s0.gpu1", "s0.gpu2", 100_000)
    env.run()
    assert len(be.sink.rows) == 2
