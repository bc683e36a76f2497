"""The flow backend against closed forms: lone flow, shared bottleneck, conservation."""
import math
import random

import pytest
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.errors import InputError
from netsim.records import FCT_COLUMNS, ListSink
from netsim.topology import Router, gpus, load_topology

PS = 1000


def make(topo, **kw):
    g = load_topology(topo) if isinstance(topo, str) else topo
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=sink), **kw)
    return g, env, b, sink


def wire_rate(b, rate_bps):
    """Payload bytes per ns a link of ``rate_bps`` carries after headers."""
    mtu, hdr = b.params["mtu_bytes"], b.params["header_bytes"]
    return rate_bps / 8e9 * (mtu - hdr) / mtu


@pytest.mark.parametrize("size", [1_000, 10_000, 1_000_000, 100_000_000])
def test_lone_flow_equals_ideal_dumbbell(size):
    g, env, b, sink = make("dumbbell")
    ev = b.send("left0", "right0", size)
    env.run()
    rec = ev.value
    assert rec is sink.rows[0]
    assert abs(rec.fct_ns - rec.ideal_fct_ns) <= 1
    path = Router(g).path("left0", "right0", 0)
    ideal = b.paths.ideal(g, list(path), size, b.params["mtu_bytes"], b.params["header_bytes"])
    assert abs(rec.ideal_fct_ns - ideal) <= 1


@pytest.mark.parametrize("size", [1_000, 1_000_000, 100_000_000])
def test_lone_flow_equals_ideal_gpu_cluster(size):
    g = load_topology("gpu_cluster:servers=2,gpus_per_server=4")
    g, env, b, sink = make(g)
    gs = gpus(g)
    src, dst = gs[0], gs[-1]          # NVLink? no: across servers -> PCIe, NIC, Ethernet fabric
    ev = b.send(src, dst, size)
    ev2 = b.send(gs[0], gs[1], size)   # inside the server: NVLink/NVSwitch
    env.run()
    for rec in (ev.value, ev2.value):
        assert abs(rec.fct_ns - rec.ideal_fct_ns) <= 1


@pytest.mark.parametrize("n", [2, 4, 16])
def test_n_flows_one_bottleneck(n):
    """N equal flows on one link all finish at N*S/C (payload rate) plus the latency term."""
    g, env, b, sink = make(f"dumbbell:n_left={n},n_right={n}")
    size = 2_000_000
    evs = [b.send(f"left{i}", f"right{i}", size) for i in range(n)]
    env.run()
    rate = wire_rate(b, 100e9)  # bytes/ns
    for ev in evs:
        rec = ev.value
        latency = rec.ideal_fct_ns - size / rate
        assert rec.fct_ns == pytest.approx(n * size / rate + latency, abs=2)


def test_staggered_start_hand_computed():
    """A starts alone; B joins at t1 and they split the link; A ends, B speeds up."""
    g, env, b, sink = make("dumbbell")
    size = 1_000_000
    rate = wire_rate(b, 100e9)
    t1 = 20_000  # ns
    out = {}

    def late(env):
        yield env.timeout(t1 * PS)
        out["b"] = yield b.send("left1", "right1", size)

    out_a = b.send("left0", "right0", size)
    env.process(late(env))
    env.run()
    a, bb = out_a.value, out["b"]
    lat_a = a.ideal_fct_ns - size / rate
    # A: t1 alone, then half rate for its remainder
    sent_alone = t1 * rate
    a_fluid_end = t1 + (size - sent_alone) / (rate / 2)
    assert a.end_ns == pytest.approx(a_fluid_end + lat_a, abs=2)
    # B: half rate until A's fluid end, then full rate
    b_sent = (a_fluid_end - t1) * rate / 2
    b_fluid_end = a_fluid_end + (size - b_sent) / rate
    assert bb.end_ns == pytest.approx(b_fluid_end + lat_a, abs=2)
    assert bb.start_ns == t1


def _conservation_run(n_flows, seed=7):
    """``n_flows`` random flows at random times on a leaf-spine: every byte delivered once,
    nobody beats its lone-flow time, and no directed link is ever loaded above capacity."""
    g, env, b, sink = make("leaf_spine:leaves=4,spines=2,hosts_per_leaf=4")
    hosts = sorted(n for n, d in g.nodes(data=True) if d["kind"] == "host")
    rng = random.Random(seed)
    flows = []
    for _ in range(n_flows):
        s, d = rng.sample(hosts, 2)
        flows.append((s, d, rng.randint(1, 3_000_000), rng.randint(0, 500_000)))

    def starter(env, s, d, size, t):
        yield env.timeout(t * PS)
        yield b.send(s, d, size)

    overload = []
    net = b.net
    inner = net.recompute

    def checked():
        inner()
        for l, u in enumerate(net.users):
            load = sum(f.rate for f in u.values())
            if load > net.capacity[l] * (1 + 1e-9):
                overload.append((env.now, l, load, net.capacity[l]))

    net.recompute = checked
    for fl in flows:
        env.process(starter(env, *fl))
    env.run()
    assert not overload, overload[:3]
    st = b.stats()
    assert st["completed"] == st["flows"] == n_flows
    assert st["bytes_delivered"] == sum(f[2] for f in flows)
    assert sorted(r.size_bytes for r in sink.rows) == sorted(f[2] for f in flows)
    for r in sink.rows:
        assert r.fct_ns >= r.ideal_fct_ns - 1      # nobody beats the lone-flow time
    assert net.active == 0 and all(not u for u in net.users)
    return st


def test_conservation_random_leaf_spine():
    # 40 flows still give multi-flow components solved both by port fairness and max-min
    st = _conservation_run(40)
    assert st["max_component_flows"] >= 10 and st["port_fair_solves"] > 0


@pytest.mark.slow
def test_conservation_random_leaf_spine_big():
    _conservation_run(200)


def test_deterministic():
    def run():
        g, env, b, sink = make("leaf_spine:leaves=2,spines=2,hosts_per_leaf=4", seed=3)
        hosts = sorted(n for n, d in g.nodes(data=True) if d["kind"] == "host")
        for i, h in enumerate(hosts):
            b.send(h, hosts[(i + 3) % len(hosts)], 100_000 * (i + 1))
        env.run()
        return [r.row() for r in sink.rows]
    assert run() == run()


def test_outputs_and_stats():
    g, env, b, sink = make("dumbbell")
    b.send("left0", "right0", 5000)
    env.run()
    row = sink.rows[0]
    assert len(row.row()) == len(FCT_COLUMNS)
    assert row.retransmitted_bytes == 0 and row.ecn_marked_packets == 0 and row.timeouts == 0
    st = b.stats()
    for key in ("flows", "completed", "bytes_delivered", "drops", "ecn_marks", "pfc_pauses",
                "sim_time_ns", "events", "recomputations"):
        assert key in st
    assert st["drops"] == st["ecn_marks"] == st["pfc_pauses"] == 0
    assert "not modelled" in st["queues"]


def test_same_instant_changes_share_one_recomputation():
    g, env, b, sink = make("dumbbell:n_left=8,n_right=8")
    for i in range(8):
        b.send(f"left{i}", f"right{i}", 1_000_000)
    env.run()
    # one recomputation when all 8 start, one when all 8 end together
    assert b.net.recomputations == 1


def test_bad_size():
    g, env, b, sink = make("dumbbell")
    with pytest.raises(InputError):
        b.send("left0", "right0", 0)


def test_dcqcn_cap_and_cubic_ramp():
    g, env, b, sink = make("dumbbell", cc="cubic", cc_params={"dcqcn": {"flow_rate_cap_frac": 0.5}})
    e1 = b.send("left0", "right0", 10_000_000, cc="dcqcn")
    env.run()
    rate = wire_rate(b, 100e9)
    lat = e1.value.ideal_fct_ns - 10_000_000 / rate
    assert e1.value.fct_ns == pytest.approx(10_000_000 / (rate / 2) + lat, abs=2)
    e2 = b.send("left1", "right1", 10_000_000)   # cubic: slow start costs a few RTTs
    env.run()
    extra = e2.value.fct_ns - e2.value.ideal_fct_ns
    assert 0 < extra < 20 * 10_000  # a few RTTs of ~10 us at most
