"""Flow files: CSV and HPCC flow.txt parsing, and every bad-input case as a one-line InputError."""
import os

import pytest

from netsim.errors import InputError, RoutingError
from netsim.flowfile import FlowSpec, check_reachable, load_flows
from netsim.topology import Router, leaf_spine, load_topology, validate
from tests.conftest import TOPOLOGIES

G = leaf_spine(2, 2, 2)


def _w(tmp_path, text, name="flows.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_csv_with_units_and_optional_columns(tmp_path):
    p = _w(tmp_path, "src,dst,size_bytes,start_ns,tag,cc,priority\n"
                     "h0,h3,1MB,10us,a,dcqcn,3\n"
                     "# comment\n"
                     "h1,h2,64KiB,0,,,\n")
    flows = load_flows(p, G)
    assert flows == [FlowSpec("h0", "h3", 1_000_000, 10_000, "a", "dcqcn", 3),
                     FlowSpec("h1", "h2", 65536, 0, "", "", None)]


def test_csv_columns_any_order(tmp_path):
    flows = load_flows(_w(tmp_path, "start_ns,size_bytes,dst,src\n5,100,h1,h0\n"), G)
    assert flows == [FlowSpec("h0", "h1", 100, 5)]


@pytest.mark.parametrize("text,match", [
    ("src,dst,size_bytes,start_ns\nh0,h9,100,0\n", r"line 2, field dst: unknown node \(got 'h9'\)"),
    ("src,dst,size_bytes,start_ns\nh0,h1,0,0\n", r"line 2, field size_bytes: size must be > 0 \(got 0\)"),
    ("src,dst,size_bytes,start_ns\nh0,h1,-5,0\n", r"line 2, field size_bytes: size must be > 0 \(got -5\)"),
    ("src,dst,size_bytes,start_ns\nh0,h1,10MBB,0\n", r"line 2, field size_bytes: bad size \(got '10MBB'\)"),
    ("src,dst,size_bytes,start_ns\nh0,h1,10,1ys\n", r"line 2, field start_ns: bad time \(got '1ys'\)"),
    ("", "empty flow file"),
    ("\n\n", "empty flow file"),
    ("src,dst,size_bytes,start_ns\n", r"after the header: no flows \(got 'header only'\)"),
    ("src,dst,size_bytes,start_ns\n# nothing yet\n\n", r"no flows .*at least one flow line"),
    ("0\n", r"line 1: no flows \(got '0'\).*count >= 1"),
    ("h0,h1,100,0\n", r"line 1: missing header column"),
    ("src,dst,size_bytes,start_ns\nh0,h1,100\n", "line 2: expected 4 fields"),
    ("src,dst,size,start_ns\nh0,h1,100,0\n", "missing header column.*size_bytes"),
    ("src,dst,size_bytes,start_ns,prio\nh0,h1,100,0,1\n", r"unknown column \(got 'prio'\)"),
    ("src,dst,size_bytes,start_ns,priority\nh0,h1,100,0,high\n", "field priority: bad priority"),
])
def test_csv_errors(tmp_path, text, match):
    p = _w(tmp_path, text)
    with pytest.raises(InputError, match=match) as exc:
        load_flows(p, G)
    assert str(exc.value).startswith(p) and "\n" not in str(exc.value)


def test_missing_file():
    with pytest.raises(InputError, match="cannot read flow file"):
        load_flows("/nonexistent/flows.csv", G)


def test_hpcc_flow_txt():
    g = load_topology(os.path.join(TOPOLOGIES, "hpcc_small", "topology.txt"))
    flows = load_flows(os.path.join(TOPOLOGIES, "hpcc_small", "flow.txt"), g)
    assert len(flows) == 6
    assert flows[0] == FlowSpec("0", "4", 1_000_000, 2_000_000_000, "dport=100", "", 3)
    assert flows[2].start_ns == 2_000_001_000
    check_reachable(flows, Router(g))


@pytest.mark.parametrize("text,match", [
    ("3\n0 4 3 100 1000 2.0\n", "line 1, field flow count: declares 3 flows but the file holds 1"),
    ("1\n0 44 3 100 1000 2.0\n", r"line 2, field dst: unknown node \(got '44'\)"),
    ("1\n0 4 3 100 0 2.0\n", "size must be > 0"),
    ("1\n0 4 x 100 10 2.0\n", "field pg: not an integer"),
    ("1\n0 4 3 100 10\n", "expected 6 fields"),
    # start_s is in seconds: the message used to say "ns or with a unit"
    ("1\n0 4 3 100 10 -2.0\n", r"field start_s: bad time .*expected a non-negative time, s or with a unit"),
    ("1\n0 4 3 100 10 1e10\n", r"field start_s: start time too late .* = 9007.2 s"),
])
def test_hpcc_flow_errors(tmp_path, text, match):
    g = load_topology(os.path.join(TOPOLOGIES, "hpcc_small", "topology.txt"))
    with pytest.raises(InputError, match=match):
        load_flows(_w(tmp_path, text, "flow.txt"), g)


def test_check_reachable_raises_routing_error(tmp_path):
    g = leaf_spine(2, 1, 2)
    g.add_node("island", kind="host")
    g = validate(g)
    with pytest.raises(RoutingError, match="unreachable"):
        check_reachable([FlowSpec("h0", "island", 100, 0)], Router(g))


def test_load_flows_rejects_unreachable_with_line(tmp_path):
    g = leaf_spine(2, 1, 2)
    g.add_node("island", kind="host")
    g.add_node("sw9", kind="switch")
    g.add_edge("island", "sw9", kind="ethernet", rate_bps=1e9, delay_ns=0)
    g = validate(g)
    text = "src,dst,size_bytes,start_ns\nh0,h3,100,0\nh0,island,100,0\n"
    with pytest.raises(InputError, match=r"line 3, field dst: destination unreachable from h0 \(got 'island'\)"):
        load_flows(_w(tmp_path, text), g)
    # a GPU/host never transits: h1 -- h2 joined only through a host is unreachable
    g2 = validate(_chain())
    with pytest.raises(InputError, match="unreachable"):
        load_flows(_w(tmp_path, "src,dst,size_bytes,start_ns\nx,z,100,0\n"), g2)
    assert len(load_flows(_w(tmp_path, "src,dst,size_bytes,start_ns\nx,y,100,0\n"), g2)) == 1


def _chain():
    import networkx as nx
    g = nx.Graph()
    for n in ("x", "y", "z"):
        g.add_node(n, kind="host")
    g.add_edge("x", "y", kind="ethernet", rate_bps=1e9, delay_ns=0)
    g.add_edge("y", "z", kind="ethernet", rate_bps=1e9, delay_ns=0)
    return g


def test_a_start_time_beyond_the_exact_range_is_rejected(tmp_path):
    # start_ns 1e30 was accepted, and the analytic FCT of a lone flow drifted at 1e18 ns
    import pytest as _pytest
    from netsim.errors import InputError
    from netsim.flowfile import MAX_START_NS, load_flows
    from netsim.topology import load_topology
    g = load_topology("gpu_ring:gpus=4")
    p = tmp_path / "f.csv"
    for start, ok in ((MAX_START_NS, True), (MAX_START_NS + 1, False), ("1e30", False)):
        p.write_text(f"src,dst,size_bytes,start_ns\ns0.gpu0,s0.gpu1,1000,{start}\n")
        if ok:
            assert load_flows(str(p), g)[0].start_ns == MAX_START_NS
        else:
            with _pytest.raises(InputError, match="start time too late"):
                load_flows(str(p), g)


def _fct_rows(out_dir) -> list[dict]:
    import csv
    with open(os.path.join(out_dir, "fct.csv"), newline="") as fh:
        return list(csv.DictReader(fh))


def test_self_send_row_is_a_local_copy_on_every_backend(tmp_path):
    """A flow-file row with src == dst is read (not rejected) and, as ``Backend.send`` treats a
    self-send, completes at its start time with the same record on packet, flow and analytic."""
    from netsim.cli import main
    text = "src,dst,size_bytes,start_ns,tag\nh0,h1,64KB,0,net\nh1,h1,1MB,2500,self\n"
    path = _w(tmp_path, text)
    assert [(f.src, f.dst, f.size_bytes, f.start_ns) for f in load_flows(path, G)][1] == ("h1", "h1", 10**6, 2500)
    selves = {}
    for be in ("packet", "flow", "analytic"):
        out = tmp_path / be
        assert main(["flows", "leaf_spine:leaves=2,spines=2,hosts_per_leaf=2", path, "--out", str(out), "--backend", be,
                     "--quiet"]) == 0
        rows = _fct_rows(out)
        assert len(rows) == 2
        me = [r for r in rows if r["tag"] == "self"]
        assert len(me) == 1
        selves[be] = {k: v for k, v in me[0].items() if k != "flow_id"}
    rec = selves["flow"]
    assert (rec["src"], rec["dst"], rec["size_bytes"]) == ("h1", "h1", "1000000")
    assert rec["start_ns"] == rec["end_ns"] == "2500" and rec["fct_ns"] == rec["ideal_fct_ns"] == "0"
    assert selves["packet"] == selves["flow"] == selves["analytic"]
