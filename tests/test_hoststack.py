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
