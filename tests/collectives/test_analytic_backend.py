"""The analytic backend: lone-flow times, FIFO at the source, records, params, stats."""
import pytest

from coll_helpers import star
from netsim.backends.analytic import ANALYTIC_PARAMS, lone_flow_ps
from netsim.backends.base import TraceSinks, create_backend
from netsim.errors import InputError
from netsim.records import FCT_COLUMNS, CsvSink, FlowTag, ListSink


def _be(g, **params):
    sink = ListSink()
    return create_backend("analytic", g, params=params, sinks=TraceSinks(fct=sink)), sink


def test_lone_flow_store_and_forward_two_hops():
    # 100 Gbps, 500 ns per link, mtu 1500 / header 62: 10 full packets
    g = star(2)
    be, sink = _be(g)
    size = 10 * 1438
    ev = be.send("h0", "h1", size, FlowTag(op="x"))
    be.env.run()
    wire = size + 10 * 62
    want_ns = 1000 + (wire * 8 / 100e9 + 1500 * 8 / 100e9) * 1e9
    rec = ev.value
    assert rec is sink.rows[0] and rec.fct_ns == round(want_ns) and rec.ideal_fct_ns == rec.fct_ns
    assert rec.slowdown == 1.0 and rec.op == "x"


def test_lone_flow_with_a_slow_middle_link():
    # hops 10G, 1G, 10G; 3 packets of 1000 B: first packet to the bottleneck, all through it, last after
    t = lone_flow_ps([10e9, 1e9, 10e9], [0, 0, 0], 3000, 1000, 0)
    assert t == pytest.approx((1000 * 8 / 10e9 + 3000 * 8 / 1e9 + 1000 * 8 / 10e9) * 1e12)


@pytest.mark.parametrize("sharing", ["fair", "fifo"])
def test_flows_from_one_source_share_its_link_others_do_not(sharing):
    g = star(3)
    be, sink = _be(g, header_bytes=0, source_sharing=sharing)
    e1 = be.send("h0", "h1", 1_500_000)
    e2 = be.send("h0", "h2", 1_500_000)
    e3 = be.send("h1", "h2", 1_500_000)
    be.env.run()
    ser_ns = 1_500_000 * 8 / 100e9 * 1e9
    alone = e3.value.fct_ns  # different source: no interaction (no receiver incast modelled)
    assert alone == e3.value.ideal_fct_ns
    if sharing == "fifo":
        assert (e1.value.fct_ns, e2.value.fct_ns) == (alone, alone + round(ser_ns))
    else:  # processor sharing: both drain at half rate and finish together
        assert e1.value.fct_ns == e2.value.fct_ns == alone + round(ser_ns)


def test_flows_share_their_first_bottleneck_link():
    """Two GPUs behind one NIC share its uplink; a flow on NVLink from the same GPU does not interact."""
    from netsim.topology import gpu_cluster
    g = gpu_cluster(servers=2, gpus_per_server=2, gpus_per_nic=2, spines=0)
    be, _ = _be(g)
    a = be.send("s0.gpu0", "s1.gpu0", 2_000_000)
    b = be.send("s0.gpu1", "s1.gpu1", 2_000_000)
    c = be.send("s0.gpu0", "s0.gpu1", 2_000_000)
    be.env.run()
    alone_drain_ns = 2_000_000 * 1500 / 1438 * 8 / 400e9 * 1e9
    assert a.value.fct_ns == b.value.fct_ns == pytest.approx(a.value.ideal_fct_ns + alone_drain_ns, abs=2)
    assert c.value.fct_ns == c.value.ideal_fct_ns


def test_sw_latency_moved_out_and_unknown_keys_rejected():
    g = star(2)
    with pytest.raises(InputError, match="sw_latency_ns moved to the collectives layer"):
        _be(g, sw_latency_ns="3us")
    with pytest.raises(InputError, match="sw_latency"):
        _be(g, sw_latency=1)
    _be(g, ecn_kmin_bytes="10KB", pfc="off")  # packet-network names are accepted, ignored


def test_params_are_documented_with_sources():
    for p in ANALYTIC_PARAMS:
        assert p.doc and p.source


def test_stats_and_csv_columns(tmp_path):
    g = star(4)
    csv = CsvSink(tmp_path / "fct.csv", FCT_COLUMNS)
    be = create_backend("analytic", g, sinks=TraceSinks(fct=csv))
    for i in range(1, 4):
        be.send("h0", f"h{i}", 1000 * i)
    be.env.run()
    be.close()
    csv.close()  # the file appears, whole, when its sink is closed
    st = be.stats()
    assert {k: st[k] for k in ("flows", "completed", "bytes_delivered")} == {"flows": 3, "completed": 3,
                                                                             "bytes_delivered": 6000}
    assert st["sim_time_ns"] > 0 and st["events"] >= 3
    lines = (tmp_path / "fct.csv").read_text().splitlines()
    assert lines[0] == ",".join(FCT_COLUMNS) and len(lines) == 4


def test_matches_ideal_fct_of_packet_helper_when_available():
    ideal = pytest.importorskip("netsim.network.ideal")
    from netsim.topology import Router, gpu_cluster
    g = gpu_cluster(servers=2, gpus_per_server=2, spines=0)
    be, _ = _be(g)
    path = Router(g).path("s0.gpu0", "s1.gpu1", 0)
    for size in (1, 1438, 100_000, 1_000_003):
        ev = be.send("s0.gpu0", "s1.gpu1", size)
        be.env.run()
        want = ideal.ideal_fct_ns(g, path, size, ANALYTIC_PARAMS["mtu_bytes"].default,
                                  ANALYTIC_PARAMS["header_bytes"].default)
        assert abs(ev.value.ideal_fct_ns - want) <= 1
