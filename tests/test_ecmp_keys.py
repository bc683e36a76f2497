"""One ECMP key on every backend (netsim.network.flowkey): the same workload takes the same paths.

Each backend's own path of every flow is captured where the backend builds the
flow (packet: the path its ports were taken from; flow: the links its fluid
flow is placed on; analytic: the path of its share), then compared flow by
flow, keyed by what the workload says about the flow (its tag fields, or a
flow file's row). The flow ids differ between backends (send order follows
completion order): the test asserts they do for some multi-path flows, so it
would catch a key that still followed them. Analysis re-derives the same
paths from ``fct.csv``'s ``path_key``; on the packet backend its link loads
equal the ports' own byte counters.
"""
from __future__ import annotations

import os
import sys
from collections import Counter

import pytest

from netsim.analysis.links import link_utilization
from netsim.backends.analytic.backend import AnalyticBackend
from netsim.backends.flow import fluid
from netsim.backends.flow.backend import FlowBackend
from netsim.backends.packet.backend import PacketBackend
from netsim.flowfile import FlowSpec
from netsim.network.flowkey import NO_KEY, FlowKeys, flow_key
from netsim.records import FCT_COLUMNS, FlowTag
from netsim.runtime import run_training
from netsim.simulate import run_flows
from netsim.topology import Router, load_topology
from netsim.topology.builders import leaf_spine

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "backends", "packet"))
from pkt_helpers import run as packet_run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_GPT = os.path.join(ROOT, "workloads", "gpt-1.5b-t2p2d2-small.yaml")
#: 8 one-GPU servers, 2 per leaf, 2 spines: every inter-leaf pair has two equal-cost paths
TWO_SPINES = "gpu_cluster:servers=8,gpus_per_server=1,servers_per_leaf=2,spines=2"
BACKENDS = ("packet", "flow", "analytic")


@pytest.fixture
def paths_seen(monkeypatch):
    """``{backend: {flow_id: path}}``: each backend's own path of every flow it routed."""
    seen: dict[str, dict[int, tuple]] = {b: {} for b in BACKENDS}
    flow_backends: list = []

    received = PacketBackend._received

    def packet_received(self, flow):
        seen["packet"][flow.fid] = tuple(flow.record.path)
        return received(self, flow)

    init = FlowBackend.__init__

    def flow_init(self, *a, **kw):
        init(self, *a, **kw)
        flow_backends.append(self)

    start = fluid.FluidNetwork.start

    def fluid_start(self, f, now):
        be = next(b for b in flow_backends if b.net is self)
        names = {i: link for link, i in be.link_ids.items()}
        hops = [names[i] for i in f.links]
        seen["flow"][f.fid] = tuple(a for a, _ in hops) + (hops[-1][1],)
        return start(self, f, now)

    flow_on = AnalyticBackend._flow_on

    def analytic_flow_on(self, path, meta, ev, bits_left=None):
        if bits_left is None:               # its first placement (not a link-change re-route)
            seen["analytic"][meta[0]] = tuple(path)
        return flow_on(self, path, meta, ev, bits_left)

    monkeypatch.setattr(PacketBackend, "_received", packet_received)
    monkeypatch.setattr(FlowBackend, "__init__", flow_init)
    monkeypatch.setattr(fluid.FluidNetwork, "start", fluid_start)
    monkeypatch.setattr(AnalyticBackend, "_flow_on", analytic_flow_on)
    return seen


def _by_identity(records, paths: dict, identity) -> dict:
    """``{identity(record) + (n,): (path, flow_id, path_key)}``; n numbers repeats in (path_key, flow id)
    order: the chunks of one step on one pair go on several channels (connections, each its own key), and
    their flow ids follow completion order, which differs between backends."""
    out, count = {}, Counter()
    for r in sorted(records, key=lambda r: (r.path_key, r.flow_id)):
        ident = identity(r)
        out[ident + (count[ident],)] = (paths[r.flow_id], r.flow_id, r.path_key)
        count[ident] += 1
    return out


def _assert_same_paths(per_backend: dict, graph) -> int:
    """Every backend has the same flows on the same paths; returns how many had a choice of path."""
    ref = per_backend["packet"]
    router = Router(graph)
    multi = [k for k, (p, _, _) in ref.items() if router.unique_path(p[0], p[-1]) is None]
    for b in ("flow", "analytic"):
        assert per_backend[b].keys() == ref.keys()
        for k, (path, _, key) in ref.items():
            assert per_backend[b][k][0] == path, (b, k)
            assert per_backend[b][k][2] == key, (b, k)
            assert router.path(path[0], path[-1], key) == path      # what analysis re-derives
    return len(multi)


def _flow_file() -> list[FlowSpec]:
    """Leaf 0 to leaf 1 on a 2x4 leaf-spine, sizes 10 kB - 1.3 MB; rows 3 and 4 repeat a (src, dst, tag)
    (each row is keyed by its row). A flow file is sent in file order, so its flow ids agree between
    backends anyway: the workload test below is the one where they differ."""
    rows = []
    for i in range(24):
        src, dst = f"h{i % 4}", f"h{4 + (i * 3) % 4}"
        rows.append(FlowSpec(src, dst, 10_000 + 60_000 * ((i * 7) % 23), 700 * i, "rep" if i in (3, 4) else f"r{i}"))
    rows[4] = FlowSpec(rows[3].src, rows[3].dst, 50_000, 2_000, "rep")
    return rows


def test_flow_file_routes_identically_on_every_backend(paths_seen):
    g = leaf_spine(2, 4, 4)
    flows = _flow_file()
    per = {}
    for b in BACKENDS:
        recs = run_flows(g, flows, backend=b)["records"]
        per[b] = _by_identity(recs, paths_seen[b], lambda r: (r.src, r.dst, r.tag, r.start_ns))
    assert _assert_same_paths(per, g) == len(flows)
    spines = Counter(p[2] for p, _, _ in per["packet"].values())
    assert len(spines) >= 3                     # the keys spread the flows over the spines


@pytest.mark.slow   # three backends on a GPT step (the packet one takes ~5 s)
def test_gpt_step_routes_identically_on_every_backend(paths_seen):
    g = load_topology(TWO_SPINES)
    per = {}
    for b in BACKENDS:
        s = run_training(g, SMALL_GPT, backend=b, keep_records=True, progress=False,
                         workload_overrides={"compute.gpu": "h100"})
        per[b] = _by_identity(s["records"]["fct"], paths_seen[b],
                              lambda r: (r.src, r.dst, r.iteration, r.op, r.collective, r.step))
    assert _assert_same_paths(per, g) >= 64
    moved = [k for k, (_, fid, _) in per["packet"].items() if per["flow"][k][1] != fid]
    assert len(moved) > 100         # the flow ids differ: routing on them would have differed


def test_a_connection_has_one_key_whatever_the_label_iteration_or_step():
    """The key is the connection's (src, dst, job, communicator, channel): NCCL's per-channel QP keeps
    one UDP source port for the communicator's lifetime."""
    from dataclasses import replace
    keys = FlowKeys()
    t = FlowTag(tag="w", iteration=0, op="dp0.bucket0", group="dp0", collective="allreduce", step=2, channel=1)
    same = [t, replace(t, tag="job"), replace(t, iteration=7), replace(t, step=0), replace(t, op="dp0.bucket5"),
            replace(t, collective="allgather", group_kind="dp")]
    ks = {keys.key("a", "b", x) for x in same for _ in range(3)}
    assert ks == {flow_key("a", "b", t)} and len(keys) == 1
    other = [keys.key("b", "a", t), keys.key("a", "c", t), keys.key("a", "b", replace(t, channel=0)),
             keys.key("a", "b", replace(t, group="dp1")), keys.key("a", "b", replace(t, job="j2")),
             keys.key("a", "b", replace(t, group="", op="pp0.send"))]
    assert len(set(other) | ks) == len(other) + 1 and all(0 <= k < 2 ** 32 for k in other)
    # without a group the op names the communicator; a flow-file row is its own key
    assert keys.key("a", "b", replace(t, group="", op="x")) != keys.key("a", "b", replace(t, group="", op="y"))
    assert keys.key("a", "b", replace(t, row=5)) == 5


def test_flowkeys_memory_is_bounded_by_connections_not_flows():
    """100 k flows on 10 connections (every flow its own step, iteration and label): 10 cached keys,
    and no more than CONNECTION_CACHE whatever the number of connections."""
    from netsim.network import flowkey
    keys = FlowKeys()
    for i in range(100_000):
        t = FlowTag(tag=f"w{i}", iteration=i // 1000, op=f"dp0.b{i}", group="dp0", step=i, channel=i % 5)
        keys.key(f"g{i % 2}", f"g{2 + i % 2}", t)
    assert len(keys) == 10
    keys = FlowKeys()
    for i in range(flowkey.CONNECTION_CACHE + 10):
        keys.key("a", "b", FlowTag(group="dp0", channel=i))
    assert 0 < len(keys) <= flowkey.CONNECTION_CACHE
    assert keys.key("a", "b", FlowTag(group="dp0", channel=3)) == flow_key("a", "b", FlowTag(group="dp0", channel=3))


def test_a_collective_step_sends_each_channel_on_its_own_connection():
    """The engine tags each chunk with its connection's channel: a 4-channel ring all-reduce on 4 ranks
    has 4 x 4 connections, every chunk of one keyed alike."""
    from netsim.backends.base import TraceSinks, create_backend
    from netsim.collectives import run_collective
    from netsim.records import ListSink
    g = leaf_spine(2, 4, 4)
    sink = ListSink()
    be = create_backend("analytic", g, sinks=TraceSinks(fct=sink))
    run_collective(be, "allreduce", ["h0", "h4", "h1", "h5"], 8 * 2 ** 20, algorithm="ring", channels=4,
                   chunk_bytes=2 ** 18, tag=FlowTag(op="dp0.ar", group="dp0"))
    be.env.run()
    by_conn: dict = {}
    for r in sink.rows:
        by_conn.setdefault((r.src, r.dst), set()).add(r.path_key)
    assert len(by_conn) == 4 and all(len(v) == 4 for v in by_conn.values())   # 4 channels per ring neighbour
    assert len(sink.rows) > 16 * 4


def test_path_key_is_the_last_fct_column_and_local_copies_have_none():
    assert FCT_COLUMNS[-1] == "path_key"
    g = leaf_spine(2, 2, 2)
    recs = run_flows(g, [FlowSpec("h0", "h0", 100, 0), FlowSpec("h0", "h2", 100, 0)], backend="flow")["records"]
    by_dst = {r.dst: r.path_key for r in recs}
    assert by_dst["h0"] == NO_KEY and by_dst["h2"] == 1       # a flow file's row is its key
    assert FlowKeys().key("h0", "h2", FlowTag()) == flow_key("h0", "h2", FlowTag())


def test_link_loads_of_analysis_equal_the_packet_ports_byte_counters():
    """links.link_utilization on the records, integrated over time and turned into wire bytes (every
    flow a whole number of full packets), equals each data-direction port's ``tx_bytes``."""
    import pandas as pd
    g = leaf_spine(2, 4, 4)
    payload = 1500 - 62
    flows = [(f"h{i % 4}", f"h{4 + (i * 3) % 4}", payload * (5 + 11 * ((i * 7) % 13)), 300 * i) for i in range(32)]
    be, recs = packet_run(g, flows)
    fct = pd.DataFrame([{c: getattr(r, c) for c in FCT_COLUMNS} for r in recs.values()])
    bin_ns = 1_000
    util = link_utilization(fct, g, bin_ns=bin_ns, seed=0)
    checked = 0
    for col in util.columns:
        u, v = col.split("->")
        if not ((u == "leaf0" and v.startswith("spine")) or (u.startswith("spine") and v == "leaf1")):
            continue                # spine links in the data direction only (the ACKs flow back)
        payload_bytes = util[col].sum() * g.edges[u, v]["rate_bps"] * bin_ns * 1e-9 / 8
        assert payload_bytes * 1500 / payload == pytest.approx(be.net.ports[(u, v)].tx_bytes, rel=1e-9), col
        checked += 1
    data_ports = [(u, v) for (u, v) in be.net.ports if (u == "leaf0" and v.startswith("spine"))
                  or (u.startswith("spine") and v == "leaf1")]
    assert checked == sum(1 for q in data_ports if be.net.ports[q].tx_bytes) >= 3


def test_the_seed_changes_the_paths_not_the_keys(paths_seen):
    g = leaf_spine(2, 4, 4)
    flows = _flow_file()
    keys, paths = {}, {}
    for seed in (0, 1):
        paths_seen["flow"].clear()
        recs = run_flows(g, flows, backend="flow", seed=seed)["records"]
        keys[seed] = {r.flow_id: r.path_key for r in recs}
        paths[seed] = dict(paths_seen["flow"])
    assert keys[0] == keys[1]
    moved = sum(paths[0][i] != paths[1][i] for i in paths[0])
    assert moved >= len(flows) // 3         # another seed, another ECMP realisation
