"""Event handling of the flow backend: one recomputation per instant, shared path constants.

* every change made at one instant — however many zero-delay steps the
  processes take before sending — is solved by one recomputation;
* paths whose hops have the same rates and delays (a server pair's ECMP
  paths) share their per-size constants; paths that differ do not, and
  their flows still get their own ideal FCT.
"""
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.network.ideal import ideal_fct_ns
from netsim.records import FlowTag, ListSink
from netsim.topology import load_topology


def test_same_instant_changes_share_one_recomputation():
    g = load_topology("leaf_spine:leaves=2,spines=2,hosts_per_leaf=4")
    env = simpy.Environment()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=ListSink()))

    def sender(i, hops):
        for _ in range(hops):           # zero-delay steps (e.g. a collective's bookkeeping)
            yield env.timeout(0)
        yield b.send(f"h{i}", f"h{(i + 4) % 8}", 1_000_000)

    for i in range(8):
        env.process(sender(i, 20 * i))  # up to 140 steps, more than any fixed deferral bound
    env.run(until=1)                    # the first picosecond: everything started at 0
    assert b.n_flows == 8
    assert b.net.recomputations == 1
    env.run()
    assert b.net.delivered.n_completed == 8
    assert b.net.rate_updates >= 8          # every flow got a rate at least once


def test_paths_with_equal_hops_share_constants():
    g = load_topology("leaf_spine:leaves=2,spines=4,hosts_per_leaf=2")
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=sink))
    paths = b.router.paths("h0", "h2")
    assert len(paths) == 4
    infos = [b.paths.info(tuple(p)) for p in paths]
    assert len({id(i.shared) for i in infos}) == 1
    # a slower spine link makes its paths differ: own constants, own ideal FCT
    g2 = load_topology("leaf_spine:leaves=2,spines=4,hosts_per_leaf=2")
    g2.edges["leaf0", "spine3"]["rate_bps"] = g2.edges["leaf0", "spine3"]["rate_bps"] / 4
    b2 = create_backend("flow", g2, env=simpy.Environment(), sinks=TraceSinks(fct=ListSink()))
    infos2 = {p[2]: b2.paths.info(tuple(p)) for p in b2.router.paths("h0", "h2")}
    assert infos2["spine3"].shared is not infos2["spine0"].shared
    assert infos2["spine1"].shared is infos2["spine0"].shared
    size = 3_000_000
    mtu, hdr = b2.params["mtu_bytes"], b2.params["header_bytes"]
    for spine, info in infos2.items():
        _, ideal_ns, _, _ = b2.paths.flow_consts(info, size, b2.controller("none"))
        assert round(ideal_ns) == ideal_fct_ns(g2, list(info.path), size, mtu, hdr)
    slow = b2.paths.flow_consts(infos2["spine3"], size, b2.controller("none"))[1]
    fast = b2.paths.flow_consts(infos2["spine0"], size, b2.controller("none"))[1]
    assert slow > fast * 2


def test_flow_on_each_ecmp_path_finishes_at_its_ideal():
    g = load_topology("leaf_spine:leaves=2,spines=4,hosts_per_leaf=2")
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=sink))

    def one_by_one():
        for k in range(12):             # alone each time; ECMP spreads them over the spines
            yield b.send("h0", "h2", 500_000 + k, FlowTag(tag=f"f{k}"))

    env.process(one_by_one())
    env.run()
    mtu, hdr = b.params["mtu_bytes"], b.params["header_bytes"]
    assert len(sink.rows) == 12
    for r in sink.rows:
        assert abs(r.fct_ns - r.ideal_fct_ns) <= 1
        assert r.ideal_fct_ns == ideal_fct_ns(g, b.router.path("h0", "h2", 0), r.size_bytes, mtu, hdr)


def test_counters_switched_flows_and_completion_instants():
    """``switched_flows`` counts flows that leave their server; ``completion_instants`` the
    instants at which flows complete (equal flows on disjoint paths finish together)."""
    g = load_topology("gpu_cluster:servers=2,gpus_per_server=4")
    env = simpy.Environment()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=ListSink()))
    for i in range(4):
        b.send(f"s0.gpu{i}", f"s1.gpu{i}", 1_000_000)          # across the fabric, one NIC each
    b.send("s0.gpu0", "s0.gpu1", 1_000_000)                    # NVLink inside server 0
    env.run()
    st = b.stats()
    assert st["flows"] == 5 and st["switched_flows"] == 4
    assert st["completion_instants"] == 2                      # the four NIC flows end together


def test_slow_start_charged_at_the_first_share():
    """Two Cubic flows that share their bottleneck from the start each pay slow start at half
    the rate (a window that doubles per RTT covers half the bandwidth-delay product sooner)."""
    size = 2_000_000
    g = load_topology("dumbbell:n_left=2,n_right=2")
    fct = {}
    for n in (1, 2):
        env = simpy.Environment()
        sink = ListSink()
        b = create_backend("flow", g, env=env, cc="cubic", sinks=TraceSinks(fct=sink), params={"host_stack": "off"})
        for i in range(n):
            b.send(f"left{i}", f"right{i}", size)
        env.run()
        fct[n] = sink.rows[0].fct_ns
        info = b.paths.lookup("left0", "right0", 0)
        model = b.paths.model("cubic")
        wire, _, lat, cap = b.paths.flow_consts(info, size, b.controller("cubic"))
        solo = min(info.bott, cap)
    ramp = {n: model.ramp_ps(wire, solo / n, info.rtt, info.mtu) for n in (1, 2)}
    assert ramp[2] < ramp[1]
    # lone: fluid time at the bottleneck plus the latency term; shared: twice the fluid time,
    # with the ramp at half the rate in the latency term (1 ns rounding)
    assert abs(fct[1] - (wire / solo + lat) / 1000) <= 1
    assert abs(fct[2] - (2 * wire / solo + lat - ramp[1] + ramp[2]) / 1000) <= 1
