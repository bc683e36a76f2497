"""Rate controllers behind the one hook (issue 16): static CC models, the host stack, DCQCN.

A new CC rate model is one class and a registration: a controller registered
for an algorithm shapes the constants of its flows (here a cap at half the
NIC's rate), and the run follows the hand computation; an algorithm without
one gets the static model's controller, as does DCQCN with
``flow_dynamic=false``.
"""
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.backends.flow import controllers as C
from netsim.records import ListSink
from netsim.topology import load_topology

SIZE = 4_000_000


class HalfRate(C.CCModelController):
    """Test model: the static model's constants, capped at half the first hop's rate."""

    def shape(self, info, size_bytes, c):
        c = super().shape(info, size_bytes, c)
        return c._replace(cap=min(c.cap, info.first_rate / 2))


def _run(cc: str, cc_params=None):
    g = load_topology("dumbbell:n_left=1,n_right=1")
    env, sink = simpy.Environment(), ListSink()
    b = create_backend("flow", g, env=env, cc=cc, cc_params=cc_params, sinks=TraceSinks(fct=sink),
                       params={"host_stack": "off"})
    b.send("left0", "right0", SIZE)
    env.run()
    return b, sink.rows[0]


def test_a_registered_static_controller_shapes_its_flows(monkeypatch):
    _, base = _run("swift")
    assert base.fct_ns == base.ideal_fct_ns                   # the default controller: alone, ideal
    monkeypatch.setitem(C.RATE_CONTROLLERS, "swift", HalfRate)
    b, rec = _run("swift")
    assert type(b.controllers["swift"]) is HalfRate
    info = b.paths.lookup("left0", "right0", 0)
    wire = SIZE * info.mtu / (info.mtu - info.hdr)
    # at half the bottleneck the bytes take twice as long: FCT = ideal + wire / bottleneck (1 ns rounding)
    assert info.first_rate == info.bott
    assert abs(rec.fct_ns - (base.ideal_fct_ns + wire / info.bott / 1000)) <= 1


def test_every_algorithm_gets_one_controller():
    b, _ = _run("cubic")
    assert type(b.controllers["cubic"]) is C.CCModelController and not b.controllers["cubic"].dynamic
    b, _ = _run("dcqcn", {"dcqcn": {"flow_dynamic": False}})
    assert type(b.controllers["dcqcn"]) is C.CCModelController and b.dcqcn_model is None
    b, _ = _run("dcqcn")
    assert b.controllers["dcqcn"].dynamic and b.controllers["dcqcn"].cc_model.name == "dcqcn"
