"""Software latency and protocols applied by the collectives layer, on every backend (issue 19).

The check: with NCCL's software latency on (ring / Simple on NVLink: 8.4 us per
call + 3.4 us per step, NCCL tuning.cc), the packet backend's 8-GPU NVSwitch
ring all-reduce bus bandwidth from 8 KiB to 512 MiB is within 3 % of the
analytic backend's and of the closed form with the same latency, at the network
defaults. An ACK on an NVLink-only path is one 16-byte NVLink flit
(``nvlink_ack_bytes``), 1.1 % of a 1500-byte packet on the opposite ring
direction; before, it was a 64-byte Ethernet frame (4.3 %, which NVLink does not
send) and the 512 MiB point missed by 4 % unless ``roce_ack_every_packets=4``.
"""
import pytest

from netsim.backends.base import create_backend
from netsim.collectives import SwLatency, bus_bandwidth, closed_form_time_s, run_collective
from netsim.collectives.protocol import nccl_latency
from netsim.errors import InputError
from netsim.topology import gpu_cluster, gpu_server

N = 8
NODES = [f"s0.gpu{i}" for i in range(N)]
PACKET: dict = {}                                # network defaults
FAST_SIZES = [8 * 1024, 64 * 1024, 1024 * 1024]
ALL_SIZES = [8 * 1024 * 4 ** k for k in range(9)]          # 8 KiB .. 512 MiB


@pytest.fixture(scope="module")
def server():
    return gpu_server("s0", gpus=N)


def _run(graph, backend, size, params=None, nodes=NODES, **kw):
    be = create_backend(backend, graph, seed=0, params=params or {})
    p = run_collective(be, "allreduce", nodes, size, **kw)
    be.env.run()
    return be, p.value


def _closed_form(be, size, lat: SwLatency):
    a, b = be.path_alpha_beta(NODES[0], NODES[1])
    return lat.launch_ns * 1e-9 + closed_form_time_s("allreduce", "ring", N, size, b, a + lat.step_ns * 1e-9)


def test_nccl_latency_is_tuning_cc_ring_simple_on_nvlink():
    assert nccl_latency("allreduce", "ring", "simple") == SwLatency(8400.0, 3400.0, 14000.0)
    assert nccl_latency("allreduce", "ring", "ll") == SwLatency(6600.0, 600.0, 2700.0)


@pytest.mark.parametrize("packets", [1, 91, 5833])   # whole 1438-byte payloads per segment: exact closed form
def test_analytic_ring_with_latency_equals_closed_form(server, packets):
    size = N * 1438 * packets
    be, res = _run(server, "analytic", size, sw_latency="nccl")
    lat = nccl_latency("allreduce", "ring", "simple")
    assert res.time_s == pytest.approx(_closed_form(be, size, lat), rel=1e-6)
    _, off = _run(server, "analytic", size)
    assert res.time_s - off.time_s == pytest.approx((8400 + 2 * (N - 1) * 3400) * 1e-9, rel=1e-9)


def _check_packet_vs_analytic(server, size):
    be_a, a = _run(server, "analytic", size, sw_latency="nccl")
    _, p = _run(server, "packet", size, PACKET, sw_latency="nccl")
    bus = {k: bus_bandwidth("allreduce", N, size, t) for k, t in
           (("analytic", a.time_s), ("packet", p.time_s),
            ("closed", _closed_form(be_a, size, nccl_latency("allreduce", "ring", "simple"))))}
    assert bus["packet"] == pytest.approx(bus["analytic"], rel=0.03)
    assert bus["packet"] == pytest.approx(bus["closed"], rel=0.03)


@pytest.mark.parametrize("size", FAST_SIZES)
def test_packet_busbw_within_3pct_of_analytic_and_closed_form(server, size):
    _check_packet_vs_analytic(server, size)


def test_nvlink_path_acks_are_one_flit_ethernet_ones_a_minimum_frame(server):
    be = create_backend("packet", server, seed=0)
    assert be.paths.path(("s0.gpu0", "s0.nvs0", "s0.gpu1")).ack_bytes == 16
    from netsim.topology import gpu_cluster
    g = gpu_cluster(servers=2, gpus_per_server=2)
    gpus = sorted(n for n, k in g.nodes(data="kind") if k == "gpu")
    inter = [x for x in gpus if x.split(".")[0] != gpus[0].split(".")[0]][0]
    be2 = create_backend("packet", g, seed=0)
    assert be2.paths.path(be2.router.path(gpus[0], inter, 0)).ack_bytes == 64


@pytest.mark.slow
def test_packet_busbw_within_3pct_8kib_to_512mib(server):
    for size in ALL_SIZES:
        _check_packet_vs_analytic(server, size)


def test_busbw_grows_with_size_below_the_latency_knee(server):
    bus = []
    for size in (4096, 8192, 16384):
        _, r = _run(server, "analytic", size, sw_latency="nccl")
        bus.append(bus_bandwidth("allreduce", N, size, r.time_s))
    assert bus[1] / bus[0] == pytest.approx(2.0, rel=0.02)
    assert bus[2] / bus[1] == pytest.approx(2.0, rel=0.02)


def test_step_latency_between_domains_differs_from_inside():
    g = gpu_cluster(servers=2, gpus_per_server=2)
    gpus = sorted(n for n, k in g.nodes(data="kind") if k == "gpu")
    intra, inter = gpus[0], [x for x in gpus if x.split(".")[0] != gpus[0].split(".")[0]][0]
    lat = SwLatency(launch_ns=100, step_ns=1000, step_inter_ns=5000)
    extra = {}
    for dst in (gpus[1], inter):
        t = []
        for sw in ("off", lat):
            be = create_backend("analytic", g, seed=0)
            p = run_collective(be, "sendrecv", [intra, dst], 4096, sw_latency=sw)
            be.env.run()
            t.append(p.value.end_ps - p.value.start_ps)
        extra[dst] = t[1] - t[0]
    assert extra[gpus[1]] == 100_000 + 1_000_000
    assert extra[inter] == 100_000 + 5_000_000


def test_protocol_wire_bytes(server):
    sent = {pr: _run(server, "analytic", 1 << 20, protocol=pr)[1].bytes_sent for pr in ("simple", "ll", "ll128")}
    assert sent["ll"] == 2 * sent["simple"]
    assert sent["ll128"] == pytest.approx(sent["simple"] * 128 / 120, rel=1e-4)


@pytest.mark.parametrize("kw, match", [
    ({"protocol": "LL64"}, "unknown protocol"),
    ({"sw_latency": "fast"}, "unknown software latency"),
    ({"sw_latency": SwLatency(step_ns=float("nan"))}, "finite"),
    ({"sw_latency": SwLatency(launch_ns=-1)}, "finite"),
    ({"algorithm": "nvls"}, "nvls needs every rank linked to one NVSwitch with nvls: true"),
    ({"algorithm": "collnet"}, "collnet reduces across servers, but every rank is on one server"),
])
def test_bad_arguments_are_one_line_errors(server, kw, match):
    be = create_backend("analytic", server, seed=0)
    with pytest.raises(InputError, match=match) as exc:
        run_collective(be, "allreduce", NODES, 1024, **kw)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("backend", ["packet", "flow"])
def test_every_backend_adds_the_same_latency(server, backend):
    """The collectives layer adds launch + 2(n-1) steps on every backend: latency on minus off is that sum.

    Within 0.1 % on the packet backend: spacing the messages apart changes how ACKs of the
    two ring directions overlap (a few ns of the network part)."""
    params = PACKET if backend == "packet" else {}
    _, on = _run(server, backend, 8192, params, sw_latency="nccl")
    _, off = _run(server, backend, 8192, params)
    assert on.time_s - off.time_s == pytest.approx((8400 + 2 * (N - 1) * 3400) * 1e-9, rel=1e-3)


def test_auto_on_one_rank_completes_with_no_flow(server):
    be, res = _run(server, "analytic", 4096, nodes=NODES[:1], algorithm="auto", protocol="auto", sw_latency="nccl")
    assert (res.flows, res.end_ps, res.algorithm, res.protocol) == (0, 0, "ring", "simple")
