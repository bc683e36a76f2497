"""``netsim flows`` on a backend declaring ``no_fabric_contention`` says so (trial 8).

The analytic backend gives a 4:1 incast each flow's lone time (slowdown 1, 4x under the line-rate
bound); with two or more network flows its summary has ``"contention": "not modelled"`` and one
warning line goes to stderr, as analytic cluster runs do. One flow (or a self-send) cannot contend.
"""
import networkx as nx
import pytest

from netsim.backends.base import NO_FABRIC_CONTENTION, backend_capabilities
from netsim.flowfile import FlowSpec
from netsim.simulate import run_flows


def _star() -> nx.Graph:
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for i in range(4):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "sw", kind="ethernet", rate_bps=100e9, delay_ns=1000)
    return g


INCAST = [FlowSpec("h0", "h2", 100_000, 0), FlowSpec("h1", "h2", 100_000, 0)]


def test_analytic_incast_summary_says_contention_not_modelled(capsys):
    assert NO_FABRIC_CONTENTION in backend_capabilities("analytic")
    s = run_flows(_star(), INCAST, backend="analytic")
    assert [r.slowdown for r in s["records"]] == [1.0, 1.0]      # each flow's lone time: the 2:1 incast ignored
    assert s["contention"] == "not modelled" and s["unmodelled_contention"]["worst_link"] == "sw->h2"
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "overran" in err[0]                 # one warning: the backend's own measurement


def test_analytic_flows_without_overrun_still_say_so_in_one_line(capsys):
    s = run_flows(_star(), [FlowSpec("h0", "h2", 100_000, 0), FlowSpec("h1", "h3", 100_000, 0)],
                  backend="analytic")
    assert s["contention"] == "not modelled" and "unmodelled_contention" not in s
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("netsim: warning: the analytic backend models no contention")


@pytest.mark.parametrize("backend, flows", [("analytic", INCAST[:1]),
                                            ("analytic", INCAST[:1] + [FlowSpec("h1", "h1", 1000, 0)]),
                                            ("flow", INCAST), ("packet", INCAST)])
def test_no_contention_note_only_where_it_applies(capsys, backend, flows):
    s = run_flows(_star(), flows, backend=backend)
    assert "contention" not in s
    assert "warning" not in capsys.readouterr().err
