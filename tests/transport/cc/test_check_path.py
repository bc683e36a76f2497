"""``CongestionControl.check_path``: Swift and TIMELY refuse a path they cannot run on (trial 8).

Swift on a path whose base RTT is at or above ``base_target_ns + hops x hop_scale_ns`` sees every ACK's
delay above its target and shrinks the window to ``min_cwnd``; TIMELY with base RTT at or above
``t_high_ns`` cuts its rate at every completion. Both are refused at send time on every backend
(:meth:`netsim.network.send.SendContract.check_path`); other algorithms accept every path.
"""
import networkx as nx
import pytest

from netsim.errors import InputError
from netsim.network.params import resolve_params
from netsim.network.path import PathModel
from netsim.network.send import SendContract, cc_registry


def test_swift_threshold_is_base_target_plus_hops_times_hop_scale():
    swift = cc_registry()["swift"]
    p = swift.PARAMS.resolve({"base_target_ns": 20_000, "hop_scale_ns": 2_000})
    assert swift.check_path(23_999, 2, p) is None           # 20 us + 2 x 2 us = 24 us
    r = swift.check_path(24_000, 2, p)
    assert r is not None and "swift.base_target_ns" in r.accepted and "target 24.0 us" in r.value


def test_timely_threshold_is_t_high_from_the_override_or_the_preset():
    timely = cc_registry()["timely"]
    assert timely.check_path(499_999, 3, timely.PARAMS.resolve()) is None     # paper preset: T_high 500 us
    assert timely.check_path(500_000, 3, timely.PARAMS.resolve()) is not None
    assert timely.check_path(600_000, 3, timely.PARAMS.resolve({"t_high_ns": "1ms"})) is None
    assert "timely.t_high_ns" in timely.check_path(2e6, 3, timely.PARAMS.resolve({"preset": "hpcc"})).accepted


@pytest.mark.parametrize("name", ["none", "cubic", "dctcp", "dcqcn", "hpcc"])
def test_other_algorithms_accept_any_path(name):
    cls = cc_registry()[name]
    assert cls.check_path(1e9, 10, cls.PARAMS.resolve()) is None


def test_send_contract_names_the_flow_and_honours_cc_params():
    g = nx.Graph()
    for n, k in (("a", "host"), ("s", "switch"), ("b", "host")):
        g.add_node(n, kind=k)
    g.add_edge("a", "s", kind="ethernet", rate_bps=100e9, delay_ns=20_000)    # base RTT ~80 us
    g.add_edge("s", "b", kind="ethernet", rate_bps=100e9, delay_ns=0)
    params = resolve_params()
    path = PathModel(g, params).path(("a", "s", "b"))
    contract = SendContract(g, params, "swift")
    with pytest.raises(InputError, match=r"flow a -> b, --cc swift: base RTT") as exc:
        contract.check_path("swift", path, None, "a", "b")
    assert "target 27.0 us" in str(exc.value)
    SendContract(g, params, "swift").check_path("swift", path, {"swift": {"base_target_ns": "100us"}}, "a", "b")
    contract.check_path("dctcp", path, None, "a", "b")
