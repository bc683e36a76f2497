"""The network layer beneath the backends (issue 16): one path model, declared capabilities.

Oracles: hand computations of the base RTT and of the host-stack cost, the
ideal-FCT closed form with the path MTU, and agreement of the three backends
on the same flow. Before the network layer the flow backend took the first
node's MTU instead of the path's smallest, and ``--hpcc-fct`` was silently
ignored by backends without HPCC rows.
"""
from __future__ import annotations

import ast
import math
import os

import networkx as nx
import pytest
import simpy

import netsim
from netsim.backends.base import (BACKEND_CAPABILITIES, CAPABILITIES, HPCC_FCT, IN_ORDER, LINK_CHANGES, ROUTER,
                                  TraceSinks, backend_capabilities, check_flags, create_backend)
from netsim.cli import main
from netsim.errors import InputError
from netsim.hoststack import HostStack
from netsim.network.ideal import ideal_fct_ns
from netsim.network.params import resolve_params
from netsim.network.path import PathModel
from netsim.records import ListSink
from netsim.topology.builders import gpu_cluster

BACKENDS = ("packet", "flow", "analytic")
HPCC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "topologies", "hpcc_small")


def _line(mid_mtu: int | None = None) -> nx.Graph:
    g = nx.Graph()
    g.add_node("a", kind="host")
    g.add_node("s", kind="switch", **({"mtu_bytes": mid_mtu} if mid_mtu else {}))
    g.add_node("b", kind="host")
    g.add_edge("a", "s", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    g.add_edge("s", "b", rate_bps=50e9, delay_ns=1000, kind="ethernet")
    return g


def test_base_rtt_by_hand():
    p = PathModel(_line(), resolve_params()).path(("a", "s", "b"))
    # data 1500 B and ACK 64 B serialized on every hop, propagation both ways
    want = (120 + 1000) + (240 + 1000) + (5.12 + 1000) + (10.24 + 1000)
    assert math.isclose(p.base_rtt_ns, want, rel_tol=1e-12)
    assert p.bottleneck_bps == 50e9 and p.line_rate_bps == 100e9 and p.mss_bytes == 1438


@pytest.mark.parametrize("name", BACKENDS)
def test_path_mtu_is_the_smallest_on_the_path_on_every_backend(name):
    g = _line(mid_mtu=1000)
    sink = ListSink()
    be = create_backend(name, g, env=simpy.Environment(), sinks=TraceSinks(fct=sink))
    be.send("a", "b", 100_000)
    be.env.run()
    (rec,) = sink.rows
    assert be.flows_completed() == 1 == be.stats()["completed"]
    assert rec.ideal_fct_ns == ideal_fct_ns(g, ("a", "s", "b"), 100_000, 1000, 62)
    assert rec.ideal_fct_ns != ideal_fct_ns(g, ("a", "s", "b"), 100_000, 1500, 62)
    if name != "packet":                      # the fluid and closed-form models finish a lone flow at its ideal
        assert rec.fct_ns == rec.ideal_fct_ns


def test_host_cost_one_rule():
    g = gpu_cluster(2, 2, nic_kinds="roce", nic_rates_bps="100Gbps", servers_per_leaf=1, spines=1)
    from netsim.topology import Router
    pm, hs, r = PathModel(g, resolve_params()), HostStack(), Router(g)
    across = pm.path(r.path("s0.gpu0", "s1.gpu0", 0))
    tcp = pm.host_cost(across, "cubic", "tcp", hs)
    assert tcp.transport == "tcp" and tcp.overhead_ns == 10_000 and tcp.line_bps == 100e9
    assert math.isclose(tcp.cap_bps, 42e9, rel_tol=1e-12)          # 8 bits / (8/42 ns per byte)
    none = pm.host_cost(across, "none", "roce", hs)                  # --cc none: the NIC's kind (roce)
    assert none.transport == "roce" and none.cap_bps == 100e9 and none.overhead_ns == 0
    inside = pm.path(r.path("s0.gpu0", "s0.gpu1", 0))                # NVLink only: no host stack
    assert pm.host_cost(inside, "cubic", "tcp", hs) is None
    assert pm.host_cost(across, "cubic", "tcp", None) is None


def test_declared_capabilities_are_true():
    for name in BACKENDS:
        caps = backend_capabilities(name)
        assert caps <= set(CAPABILITIES)
        be = create_backend(name, _line(), hpcc_fct=HPCC_FCT in caps)
        assert type(be).capabilities == caps == BACKEND_CAPABILITIES[name]
        if LINK_CHANGES in caps:
            assert callable(be.set_link_rate) and callable(be.fail_link)
        if ROUTER in caps:
            assert be.router.path("a", "b", 0) == ["a", "s", "b"] or tuple(be.router.path("a", "b", 0)) == (
                "a", "s", "b")
        if HPCC_FCT in caps:
            assert be.hpcc_ack_fct_ns == {}
        if IN_ORDER in caps:
            assert callable(be.send_in_order)


def test_a_flag_a_backend_cannot_honour_is_refused(monkeypatch):
    # every shipped backend honours every flag today (fct.txt is written by all three): a toy backend without
    # link changes shows the table-driven refusal
    import netsim.backends.base as base
    base._load_backends()
    monkeypatch.setitem(base.BACKENDS, "toy", object)
    monkeypatch.setitem(BACKEND_CAPABILITIES, "toy", frozenset())
    able = sorted(n for n, c in BACKEND_CAPABILITIES.items() if LINK_CHANGES in c)
    with pytest.raises(InputError) as exc:
        check_flags("toy", ["--fail-link"])
    assert str(exc.value).startswith("--fail-link: not supported by the toy backend")
    assert str(exc.value).endswith("expected --backend " + " or ".join(able))
    check_flags("analytic", ["--fail-link", "--degrade-link"])  # honoured: no error


def test_cli_hpcc_fct_on_every_backend(tmp_path, capsys):
    for name in sorted(BACKEND_CAPABILITIES):
        if name == "toy":
            continue
        out = tmp_path / name
        rc = main(["flows", os.path.join(HPCC, "topology.txt"), os.path.join(HPCC, "flow.txt"), "--backend",
                   name, "--hpcc-fct", "--out", str(out), "--quiet"])
        assert rc == 0 and (out / "fct.txt").exists() and (out / "fct_nodes.csv").exists(), name


def test_fabric_kinds_defined_once():
    """No module but netsim/network/fabric.py spells the fabric kinds as a literal of their own."""
    root = os.path.dirname(netsim.__file__)
    found = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            if "infiniband" not in text:
                continue
            tree = ast.parse(text)
            for node in ast.walk(tree):
                if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
                    vals = {getattr(e, "value", None) for e in node.elts}
                    if vals == {"ethernet", "infiniband"}:
                        found.append(os.path.relpath(path, root))
    assert found == [os.path.join("network", "fabric.py")]
