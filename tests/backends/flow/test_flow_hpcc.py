"""The flow backend's HPCC model on an uncontended path (hpccflow.py): eta less the INT header."""
import pytest

from netsim.backends.flow.ccmodel import resolve_model
from netsim.backends.flow.hpccflow import hpcc_lone_rate_frac
from netsim.flowfile import FlowSpec
from netsim.simulate import run_flows
from netsim.topology import load_topology

MSS = 1500 - 62          # default mtu_bytes - header_bytes
INT = 2 + 8 * 5          # HPCC ns-3 IntHeader: 2-byte count + 8 bytes per hop slot, 5 slots


def test_lone_rate_fraction_is_eta_times_the_payload_left_by_int():
    assert hpcc_lone_rate_frac(None, MSS) == pytest.approx(0.95 * (MSS - INT) / MSS)
    assert hpcc_lone_rate_frac({"eta": 0.9, "int_max_hops": 2}, MSS) == pytest.approx(0.9 * (MSS - 18) / MSS)
    assert resolve_model("hpcc").rate_cap_frac == pytest.approx(0.95 * (MSS - INT) / MSS)
    assert resolve_model("hpcc", {"hpcc": {"flow_rate_cap_frac": 1.0}}).rate_cap_frac == 1.0


def _lone_fct_ns(backend, cc_params=None, size=10_000_000):
    g = load_topology("dumbbell:n_left=1,n_right=1")
    r = run_flows(g, [FlowSpec("left0", "right0", size, 0)], backend=backend, cc="hpcc",
                  cc_params=cc_params)["records"][0]
    return r.fct_ns, r.ideal_fct_ns


def test_lone_hpcc_flow_agrees_with_packet_within_2_percent():
    """10 MB alone at 100 Gb/s: packet 908.8 us; the flow backend gave the ideal 837.7 us (-7.8 %)
    before HPCC's eta and INT header capped a lone flow."""
    packet, ideal = _lone_fct_ns("packet")
    flow, _ = _lone_fct_ns("flow")
    assert packet > 1.05 * ideal
    assert flow == pytest.approx(packet, rel=0.02), (flow, packet, ideal)


def test_lone_hpcc_flow_follows_eta():
    """Serialisation takes wire bytes / (eta (mss - int) / mss x line rate); the latency term is unchanged."""
    size = 10_000_000
    base, _ = _lone_fct_ns("flow", size=size)
    lower, _ = _lone_fct_ns("flow", {"hpcc": {"eta": 0.8}}, size=size)
    serial_ns = size * 1500 / MSS / 12.5            # wire bytes at 100 Gb/s (12.5 bytes/ns)
    expected = serial_ns * MSS / (MSS - INT) * (1 / 0.8 - 1 / 0.95)
    assert lower - base == pytest.approx(expected, abs=2), (lower - base, expected)
