"""``netsim flows`` on a backend declaring ``no_fabric_contention`` says so (trial 8).

The analytic backend gives a 4:1 incast each flow's lone time (slowdown 1, 4x under the line-rate
bound: only each flow's pacing link, here its source's, is shared); with two or more network flows its
summary has ``"contention": "pacing link only"`` and one warning line goes to stderr, as analytic cluster
runs do. One flow (or a self-send) cannot contend. Two flows into a slower last hop share it (trial 11).
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


def test_analytic_incast_summary_says_only_pacing_links_are_shared(capsys):
    assert NO_FABRIC_CONTENTION in backend_capabilities("analytic")
    s = run_flows(_star(), INCAST, backend="analytic")
    assert [r.slowdown for r in s["records"]] == [1.0, 1.0]      # each flow's lone time: the 2:1 incast ignored
    assert s["contention"] == "pacing link only" and s["unmodelled_contention"]["worst_link"] == "sw->h2"
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "overran" in err[0]                 # one warning: the backend's own measurement


def test_analytic_flows_without_overrun_still_say_so_in_one_line(capsys):
    s = run_flows(_star(), [FlowSpec("h0", "h2", 100_000, 0), FlowSpec("h1", "h3", 100_000, 0)],
                  backend="analytic")
    assert s["contention"] == "pacing link only" and "unmodelled_contention" not in s
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("netsim: warning: the analytic backend shares only each flow's "
                                               "pacing link")


def test_analytic_shares_a_slower_last_hop_its_warning_says_so(capsys):
    """Two 100 kB flows from 100G hosts into one 40G last hop: that link is both flows' pacing link, so
    they share it (slowdown ~2, as flow) and the warning does not claim lone-flow times."""
    g = _star()
    g.edges["h2", "sw"]["rate_bps"] = 40e9
    s = run_flows(g, INCAST, backend="analytic")
    f = run_flows(g, INCAST, backend="flow")
    slow = sorted(r.slowdown for r in s["records"])
    assert slow[0] > 1.9 and slow == pytest.approx(sorted(r.slowdown for r in f["records"]), rel=0.02)
    assert s["contention"] == "pacing link only"
    err = capsys.readouterr().err
    assert "lone-flow" not in err and "slowdown 1" not in err


@pytest.mark.parametrize("backend, flows", [("analytic", INCAST[:1]),
                                            ("analytic", INCAST[:1] + [FlowSpec("h1", "h1", 1000, 0)]),
                                            ("flow", INCAST), ("packet", INCAST)])
def test_no_contention_note_only_where_it_applies(capsys, backend, flows):
    s = run_flows(_star(), flows, backend=backend)
    assert "contention" not in s
    assert "warning" not in capsys.readouterr().err
