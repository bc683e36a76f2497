"""Random streams of the packet network (netsim/backends/packet/streams.py): one per port and spraying node."""
from __future__ import annotations

import json

import networkx as nx

from netsim.backends.packet.streams import SEED_MODULUS, make_stream, stream_seed
from netsim.flowfile import FlowSpec
from netsim.simulate import run_flows

from pkt_helpers import run


def test_stream_seed_depends_on_seed_and_key_only():
    a = stream_seed(7, "port:sw->h2")
    assert a == stream_seed(7, "port:sw->h2")                  # no process-dependent hash
    assert a != stream_seed(7, "port:h2->sw") and a != stream_seed(8, "port:sw->h2")
    assert stream_seed(-1, "k") == stream_seed(SEED_MODULUS - 1, "k")   # the documented modulus
    assert [make_stream(3, "k").random() for _ in range(2)] == [make_stream(3, "k").random()] * 2


def _two_islands() -> nx.Graph:
    """Switch sw (h0, h1, h2) and switch sx (g0, g1, g2), joined by one link nobody's flows use."""
    g = nx.Graph()
    for sw, hosts in (("sw", "h"), ("sx", "g")):
        g.add_node(sw, kind="switch")
        for i in range(3):
            g.add_node(f"{hosts}{i}", kind="host")
            g.add_edge(f"{hosts}{i}", sw, rate_bps=100e9, delay_ns=1000, kind="ethernet")
    g.add_edge("sw", "sx", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    return g


def test_marks_at_one_port_do_not_depend_on_traffic_elsewhere():
    """DCQCN's RED marks (random between Kmin and Kmax) at sw->h2 are the same draws whether or not an
    incast on the other switch draws at sx->g2 meanwhile; with one shared generator they interleaved."""
    a = [("h0", "h2", 1_000_000, 0), ("h1", "h2", 1_000_000, 0)]
    b = [("g0", "g2", 1_000_000, 0), ("g1", "g2", 1_000_000, 0)]
    be_a, alone = run(_two_islands(), a, cc="dcqcn")
    be_ab, both = run(_two_islands(), a + b, cc="dcqcn")
    marks_b = sum(r.ecn_marked_packets for r in both.values() if r.src.startswith("g"))
    assert marks_b > 0 and sum(r.ecn_marked_packets for r in alone.values()) > 0   # both ports draw
    for fid, rec in alone.items():
        other = both[fid]
        assert (rec.fct_ns, rec.ecn_marked_packets, rec.cnps_received) == \
            (other.fct_ns, other.ecn_marked_packets, other.cnps_received)


def _outputs(out_dir) -> dict:
    files = {}
    for name in ("fct.csv", "queues.csv", "cc.csv", "pfc.csv"):
        files[name] = (out_dir / name).read_bytes()
    summary = json.loads((out_dir / "summary.json").read_text())
    summary.pop("wall_time_s", None)
    files["summary.json"] = summary
    return files


def test_same_seed_same_bytes_in_any_folder(tmp_path):
    g = _two_islands()
    flows = [FlowSpec(f"h{i}", "h2", 600_000, 0) for i in range(2)] + [FlowSpec("g0", "g2", 300_000, 1000)]
    outs = []
    for name, seed in (("first", 4), ("another_name", 4), ("third", 5)):
        run_flows(g, flows, cc="dcqcn", seed=seed, out_dir=str(tmp_path / name))
        outs.append(_outputs(tmp_path / name))
    assert outs[0] == outs[1]
    assert outs[0]["fct.csv"] != outs[2]["fct.csv"]      # another seed: other marks (the test can fail)
