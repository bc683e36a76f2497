"""Host stack model: TCP caps a connection below line rate and charges per message; RDMA does not."""
import pytest

from netsim.errors import InputError
from netsim.hoststack import HOST_PARAMS, HostStack, split_host_params, transport_of


def test_every_param_has_source():
    for p in HOST_PARAMS:
        assert p.source and p.doc


def test_tcp_cap_and_overhead():
    hs = HostStack()
    assert hs.rate_cap_bps("tcp", 100e9) == pytest.approx(42e9)
    assert hs.rate_cap_bps("tcp", 10e9) == 10e9           # slow NIC: line rate binds
    assert hs.rate_cap_bps("roce", 400e9) == 400e9
    assert hs.message_overhead_ns("tcp") == 10_000
    assert hs.message_overhead_ns("ib") == 0


def test_streams_scale_cap_and_overrides():
    hs = HostStack({"tcp_streams": 2, "tcp_message_overhead_ns": "5us"})
    assert hs.rate_cap_bps("tcp", 400e9) == pytest.approx(84e9)
    assert hs.message_overhead_ns("tcp") == 5000


def test_message_time_closed_form():
    hs = HostStack()
    t = hs.message_time_ns("tcp", 42_000_000, 100e9)     # 42 MB at 42 Gbit/s = 8 ms
    assert t == pytest.approx(10_000 + 8e6)
    assert hs.message_time_ns("roce", 42_000_000, 100e9) == pytest.approx(3.36e6)


def test_transport_of_cc():
    assert transport_of("cubic") == "tcp"
    assert transport_of("dcqcn") == "roce"
    assert transport_of("none") == "roce"


def test_errors():
    with pytest.raises(InputError, match="unknown transport"):
        HostStack().rate_cap_bps("udp", 1e9)
    with pytest.raises(InputError, match="unknown host stack parameter"):
        split_host_params({"host.tcp_bogus": 1})
    assert split_host_params({"mtu_bytes": 1500, "host.tcp_streams": 2}) == ({"mtu_bytes": 1500}, {"tcp_streams": 2})


# -- applied by the analytic backend -----------------------------------------------------------------
def _flow_times(cc, n_flows, size=42_000_000, host=True, nic_kind="roce"):
    from netsim.backends.base import TraceSinks, create_backend
    from netsim.records import ListSink
    from netsim.topology import gpu_cluster
    g = gpu_cluster(2, 4, gpus_per_nic=4, nvswitch=False, nic_kinds=nic_kind, nic_rates_bps="100Gbps")
    sink = ListSink()
    be = create_backend("analytic", g, cc=cc, params={"header_bytes": 0},
                        sinks=TraceSinks(fct=sink))
    if host:
        be.host_stack = HostStack()
    for i in range(n_flows):
        be.send(f"s0.gpu{i}", f"s1.gpu{i}", size)
    be.env.run()
    return [r.fct_ns for r in sink.rows]


def test_analytic_tcp_flow_capped_and_delayed():
    roce = _flow_times("dcqcn", 1)[0]
    tcp = _flow_times("cubic", 1)[0]
    assert roce == pytest.approx(42e6 * 8 / 100e9 * 1e9, rel=0.01)          # line rate
    assert tcp == pytest.approx(42e6 * 8 / 42e9 * 1e9 + 10_000, rel=0.01)   # 42 Gbit/s + 10 us
    assert _flow_times("cubic", 1, host=False)[0] == pytest.approx(roce, rel=1e-6)


def test_analytic_caps_water_fill():
    # 2 TCP connections on one 100G NIC: each capped at 42 (84 < 100); 4: fair share 25 < 42
    two = _flow_times("cubic", 2)
    assert max(two) == pytest.approx(42e6 * 8 / 42e9 * 1e9 + 10_000, rel=0.01)
    four = _flow_times("cubic", 4)
    assert max(four) == pytest.approx(4 * 42e6 * 8 / 100e9 * 1e9 + 10_000, rel=0.01)


def test_transport_follows_nic_kind_with_cc_none():
    eth = _flow_times("none", 1, nic_kind="ethernet")[0]
    ib = _flow_times("none", 1, nic_kind="infiniband")[0]
    assert eth > 2 * ib


def test_run_training_applies_default_host_stack():
    from netsim.runtime import run_training
    topo = "gpu_cluster:servers=4,gpus_per_server=1,nvswitch=false,nic_kinds=roce,nic_rates_bps=100Gbps"
    job = {"model": "vgg16", "training": {"global_batch": 16, "micro_batch": 4}, "parallelism": {"dp": 4}}
    t = {cc: run_training(topo, job, backend="analytic", cc=cc)["breakdown_s"]["dp"] for cc in ("dcqcn", "cubic")}
    assert t["cubic"] > 1.5 * t["dcqcn"]
    off = run_training(topo, job, backend="analytic", cc="cubic", host_stack=False)["breakdown_s"]["dp"]
    assert off == pytest.approx(t["dcqcn"], rel=1e-6)
    more = run_training(topo, job, backend="analytic", cc="cubic", params={"host.tcp_streams": 3})["breakdown_s"]["dp"]
    assert more == pytest.approx(t["dcqcn"], rel=0.05)     # 3 x 42 Gbit/s > the 100 Gbit/s NIC


def test_swift_pays_no_kernel_tcp_cost():
    """Trial 2: Swift (a kernel-bypass stack's algorithm, on netsim's tcp class) was capped at the kernel-TCP
    ~42 Gb/s per connection, hiding contention; it pays what RDMA pays, cubic still pays the kernel's."""
    from netsim.runtime import run_training
    from tests.topology.test_nic_default import WL, _hand
    t = {cc: run_training(_hand("roce"), WL, backend="analytic", cc=cc)["iteration_time_s"]
         for cc in ("none", "swift", "cubic")}
    assert t["swift"] == t["none"] < t["cubic"]
