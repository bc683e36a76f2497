"""Event handling of the flow backend: one recomputation per instant, shared path constants.

* every change made at one instant — however many zero-delay steps the
  processes take before sending — is solved by one recomputation;
* paths whose hops have the same rates and delays (a server pair's ECMP
  paths) share their per-size constants; paths that differ do not, and
  their flows still get their own ideal FCT.
"""
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.backends.ideal import ideal_fct_ns
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
    assert b.recomputations == 1
    env.run()
    assert b.n_completed == 8
    assert b.rate_updates >= 8          # every flow got a rate at least once


def test_paths_with_equal_hops_share_constants():
    g = load_topology("leaf_spine:leaves=2,spines=4,hosts_per_leaf=2")
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=sink))
    paths = b.router.paths("h0", "h2")
    assert len(paths) == 4
    infos = [b._info(tuple(p)) for p in paths]
    assert len({id(i.shared) for i in infos}) == 1
    # a slower spine link makes its paths differ: own constants, own ideal FCT
    g2 = load_topology("leaf_spine:leaves=2,spines=4,hosts_per_leaf=2")
    g2.edges["leaf0", "spine3"]["rate_bps"] = g2.edges["leaf0", "spine3"]["rate_bps"] / 4
    b2 = create_backend("flow", g2, env=simpy.Environment(), sinks=TraceSinks(fct=ListSink()))
    infos2 = {p[2]: b2._info(tuple(p)) for p in b2.router.paths("h0", "h2")}
    assert infos2["spine3"].shared is not infos2["spine0"].shared
    assert infos2["spine1"].shared is infos2["spine0"].shared
    size = 3_000_000
    mtu, hdr = b2.params["mtu_bytes"], b2.params["header_bytes"]
    for spine, info in infos2.items():
        _, ideal_ns, _, _ = b2._flow_consts(info, size, b2._model("none"))
        assert round(ideal_ns) == ideal_fct_ns(g2, list(info.path), size, mtu, hdr)
    slow = b2._flow_consts(infos2["spine3"], size, b2._model("none"))[1]
    fast = b2._flow_consts(infos2["spine0"], size, b2._model("none"))[1]
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
