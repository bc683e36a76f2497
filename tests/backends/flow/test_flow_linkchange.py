"""Link changes on the flow backend (netsim.whatif protocol): degrade, fail, disconnect."""
import pytest
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.errors import RoutingError
from netsim.network.flowkey import flow_key
from netsim.records import EMPTY_TAG, ListSink
from netsim.topology import load_topology

PS_PER_NS = 1000


def make(topo, name="flow"):
    g = load_topology(topo)
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend(name, g, env=env, sinks=TraceSinks(fct=sink))
    return g, env, b, sink


def at(env, t_ns, fn):
    def proc():
        yield env.timeout(t_ns * PS_PER_NS)
        fn()
    env.process(proc())


def test_degrade_lone_flow_closed_form():
    """Rate halves at T: the fluid part ends at T + remaining·2/rate (bottleneck link degraded)."""
    g, env, b, _ = make("dumbbell")
    src, dst = "left0", "right0"
    size = 10_000_000
    path = b.router.path(src, dst, 0)
    # the bottleneck (slowest) link of the path
    a, c = min(zip(path, path[1:]), key=lambda e: g.edges[e]["rate_bps"])
    rate = g.edges[a, c]["rate_bps"]
    ref = create_backend("flow", load_topology("dumbbell"), env=simpy.Environment())
    base_ev = ref.send(src, dst, size)
    ref.env.run()
    fct0_ns = base_ev.value.fct_ns
    mtu, hdr = b.params["mtu_bytes"], b.params["header_bytes"]
    wire_bits = size * mtu / (mtu - hdr) * 8
    fluid_ns = wire_bits / rate * 1e9
    lat_ns = fct0_ns - fluid_ns                       # propagation + first-packet term
    T = int(fluid_ns / 3)
    ev = b.send(src, dst, size)
    at(env, T, lambda: b.set_link_rate(a, c, rate / 2))
    env.run()
    remaining_bits = wire_bits - rate * T * 1e-9
    expect = T + remaining_bits * 2 / rate * 1e9
    fluid_end = ev.value.fct_ns - lat_ns
    assert fluid_end == pytest.approx(expect, rel=0.01)
    assert g.edges[a, c]["rate_bps"] == rate / 2
    # a flow started after the change sees the new rate: its ideal FCT is that of the degraded link
    ev2 = b.send(src, dst, size)
    env.run()
    assert ev2.value.fct_ns == pytest.approx(ev2.value.ideal_fct_ns, abs=1)
    assert ev2.value.fct_ns > 1.9 * fluid_ns


def test_degrade_not_reusing_memoized_solution():
    """Two flows sharing a link: a memoized two-flow solution at the old capacity is not reused."""
    g, env, b, _ = make("dumbbell:n_left=2,n_right=2")
    size = 5_000_000
    e1 = b.send("left0", "right0", size)
    e2 = b.send("left1", "right1", size)
    env.run()
    before = max(e1.value.fct_ns, e2.value.fct_ns)
    a, c = "switch_left", "switch_right"               # the shared link
    b.set_link_rate(a, c, g.edges[a, c]["rate_bps"] / 4)
    t0 = env.now
    e1 = b.send("left0", "right0", size)
    e2 = b.send("left1", "right1", size)
    env.run()
    after = max(e1.value.end_ns, e2.value.end_ns) - t0 // PS_PER_NS
    assert after == pytest.approx(4 * before, rel=0.05)


def _spine_link(b, src, dst):
    """A spine link on the path of the (first untagged) flow from ``src`` to ``dst`` (its ECMP key)."""
    path = b.router.path(src, dst, flow_key(src, dst, EMPTY_TAG))
    return next((u, v) for u, v in zip(path, path[1:]) if str(v).startswith("spine") or str(u).startswith("spine"))


def test_fail_spine_link_mid_flow_reroutes():
    topo = "leaf_spine:leaves=2,spines=2,hosts_per_leaf=1"
    g, env, b, sink = make(topo)
    hosts = sorted(n for n, d in g.nodes(data=True) if d.get("kind") == "host")
    src, dst = hosts[0], hosts[-1]
    size = 20_000_000
    ev = b.send(src, dst, size)
    a, c = _spine_link(b, src, dst)
    old_spine = a if str(a).startswith("spine") else c
    ref_g, ref_env, ref, _ = make(topo)
    ref_ev = ref.send(src, dst, size)
    ref_env.run()
    base = ref_ev.value.fct_ns
    at(env, base // 2, lambda: b.fail_link(a, c))
    env.run()
    rec = ev.value
    assert not g.has_edge(a, c)
    assert b.stats()["bytes_delivered"] == size and b.stats()["completed"] == 1
    assert rec.size_bytes == size
    new_path = b.router.path(src, dst, rec.path_key)
    assert old_spine not in new_path
    # both spines have the same capacity: the rerouted flow finishes (nearly) on time
    assert rec.fct_ns == pytest.approx(base, rel=0.02)
    assert all(not u for u in b.net.users)


def test_fail_shares_surviving_spine():
    """Two flows on different spines; one spine link fails: both share the survivor."""
    topo = "leaf_spine:leaves=2,spines=2,hosts_per_leaf=4,fabric_rate_bps=100Gbps"   # spine links at the host rate
    g, env, b, _ = make(topo)
    hosts = sorted(n for n, d in g.nodes(data=True) if d.get("kind") == "host")
    # pick two flows leaf0 -> leaf1 whose ECMP picks differ
    pairs, spines = [], set()
    srcs = [h for h in hosts if g.has_edge(h, "leaf0")]
    dsts = [h for h in hosts if g.has_edge(h, "leaf1")]
    for s, d in zip(srcs, dsts):
        sp = [n for n in b.router.path(s, d, flow_key(s, d, EMPTY_TAG)) if str(n).startswith("spine")][0]
        if sp not in spines:
            spines.add(sp)
            pairs.append((s, d))
    if len(pairs) < 2:
        pytest.skip("ECMP picked one spine for every pair")
    size = 10_000_000
    evs = []
    for s, d in pairs[:2]:
        evs.append(b.send(s, d, size))
    a, c = _spine_link(b, *pairs[0])
    b.fail_link(a, c)
    env.run()
    assert b.stats()["bytes_delivered"] == 2 * size
    # the uplink leaf0 -> surviving spine is shared: each gets half, so about twice the ideal
    for e in evs:
        assert e.value.fct_ns > 1.8 * e.value.ideal_fct_ns


def test_disconnecting_failure_raises():
    g, env, b, _ = make("dumbbell")
    path = b.router.path("left0", "right0", 0)
    a, c = [(u, v) for u, v in zip(path, path[1:]) if g.nodes[u].get("kind") == "switch"
            and g.nodes[v].get("kind") == "switch"][0]
    b.send("left0", "right0", 10_000_000)
    at(env, 1000, lambda: b.fail_link(a, c))
    with pytest.raises(RoutingError, match="no path left"):
        env.run()


@pytest.mark.parametrize("factor", [0.5, 0.25])
def test_degrade_agrees_with_analytic(factor):
    topo = "leaf_spine:leaves=2,spines=1,hosts_per_leaf=1"
    fcts = {}
    for name in ("flow", "analytic"):
        g, env, b, _ = make(topo, name)
        hosts = sorted(n for n, d in g.nodes(data=True) if d.get("kind") == "host")
        ev = b.send(hosts[0], hosts[-1], 50_000_000)
        rate = g.edges[hosts[0], "leaf0"]["rate_bps"]
        # the analytic backend paces a flow on its first bottleneck: degrade the host's uplink
        at(env, 1_000_000, lambda: b.set_link_rate(hosts[0], "leaf0", rate * factor))
        env.run()
        fcts[name] = ev.value.fct_ns
    assert fcts["flow"] == pytest.approx(fcts["analytic"], rel=0.03)


def test_no_such_link():
    from netsim.errors import InputError
    g, env, b, _ = make("dumbbell")
    with pytest.raises(InputError):
        b.set_link_rate("left0", "right0", 1e9)
    with pytest.raises(InputError):
        b.fail_link("left0", "right0")
