"""Analytic backend: a link change re-times every flow still draining across it.

Regression (issue #14): a flow whose path crossed a degraded link other than
its pacing link kept its old schedule (2.089 ms instead of 3.175 ms below), and
a degraded pacing link could leave the bottleneck elsewhere. The reference is
the hand computation (bytes before the change at the old bottleneck, the rest
at the new one) and the flow backend, which re-solves its rates at the change.
"""
from __future__ import annotations

import pytest

from netsim.backends.base import create_backend
from netsim.topology.builders import gpu_cluster, leaf_spine
from netsim.whatif import WhatIf

SRC, DST, SIZE = "s0.gpu0", "s1.gpu0", 100_000_000


def _end_ns(backend: str, change: str, *, fail: bool = False, graph=None, params=None, src=SRC, dst=DST) -> int:
    g = graph if graph is not None else gpu_cluster(2, 4)
    be = create_backend(backend, g, params=params)
    w = WhatIf.from_cli(fail_link=[change]) if fail else WhatIf.from_cli(degrade_link=[change])
    w.start(be, g)
    ev = be.send(src, dst, SIZE)
    be.env.run(ev)
    return ev.value.end_ns


@pytest.mark.parametrize("change", ["s0.nic0:leaf0=0.5@1ms",       # the pacing link itself
                                    "leaf0:s1.nic0=0.5@1ms",       # a later link becomes the bottleneck
                                    "s0.gpu0:s0.pcie0=0.25@1ms",   # an earlier link becomes the bottleneck
                                    "s0.nic0:leaf0=2@1ms"])        # an upgrade moves the bottleneck
def test_degrade_mid_flow_matches_flow_backend(change):
    assert _end_ns("analytic", change) == pytest.approx(_end_ns("flow", change), rel=1e-6)


def test_degrade_mid_flow_hand_computation():
    g = gpu_cluster(2, 4)
    be = create_backend("analytic", g)
    ev = be.send(SRC, DST, SIZE)
    lone_ns = None
    be.env.run(ev)
    lone_ns = ev.value.end_ns
    alone = _end_ns("analytic", "leaf0:s1.nic0=1@1ms")
    assert alone == lone_ns                          # a factor-1 change changes nothing
    # bottleneck 400 Gb/s until 1 ms, then 200 Gb/s on a later link: the bits left drain at half rate
    t1_ns = 1_000_000
    wire_bits = ev.value.size_bytes * 8 * be.params["mtu_bytes"] / (be.params["mtu_bytes"] - be.params["header_bytes"])
    left_bits = wire_bits - 400e9 * t1_ns * 1e-9
    expect = lone_ns + left_bits / 200e9 * 1e9 - left_bits / 400e9 * 1e9
    assert _end_ns("analytic", "leaf0:s1.nic0=0.5@1ms") == pytest.approx(expect, rel=2e-4)


def test_fail_link_mid_flow_reroutes_with_bits_left():
    def ls():
        return leaf_spine(2, 2, 1, host_rate_bps=100e9)
    g = ls()
    path = create_backend("analytic", g).router.path("h0", "h1", 0)
    cut = f"{path[1]}:{path[2]}@100us"
    ends = {b: _end_ns(b, cut, fail=True, graph=ls(), src="h0", dst="h1") for b in ("analytic", "flow")}
    # an equal-cost spine takes over: the same end as without the failure, and no error
    assert ends["analytic"] == _end_ns("analytic", "h0:leaf0=1@1ms", graph=ls(), src="h0", dst="h1")
    assert ends["analytic"] == pytest.approx(ends["flow"], rel=1e-6)


def test_fifo_sharing_honours_link_changes():
    g = gpu_cluster(2, 4)
    be = create_backend("analytic", g, params={"source_sharing": "fifo"})
    WhatIf.from_cli(degrade_link=["s0.nic0:leaf0=0.5@1ms"]).start(be, g)
    a = be.send(SRC, DST, SIZE)
    b = be.send(SRC, "s1.gpu1", SIZE)
    be.env.run(b)
    # one after another: the first flow's bits drain at 400 then 200 Gb/s, the second's at 200 Gb/s
    wire = SIZE * 8 * be.params["mtu_bytes"] / (be.params["mtu_bytes"] - be.params["header_bytes"])
    first_drain_ns = 1e6 + (wire - 400e9 * 1e-3) / 200e9 * 1e9
    assert a.value.end_ns < b.value.end_ns
    assert b.value.end_ns - a.value.end_ns == pytest.approx(wire / 200e9 * 1e9, rel=1e-4)
    assert a.value.end_ns == pytest.approx(first_drain_ns, rel=1e-3)


def test_flows_started_after_a_change_share_the_new_rate():
    """Regression (trial): a share made before the change kept the old rate for flows that
    joined it later, so two overlapping flows each ran at the full degraded rate."""
    import networkx as nx
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for n in "AB":
        g.add_node(n, kind="gpu")
        g.add_edge(n, "sw", kind="ethernet", rate_bps=100e9, delay_ns=1000)
    ends = {}
    for backend in ("analytic", "flow"):
        gg = g.copy()
        be = create_backend(backend, gg)
        WhatIf.from_cli(degrade_link=["A:sw=0.5@1ms"]).start(be, gg)
        env, evs = be.env, []

        def proc():
            evs.append(be.send("A", "B", 5_000_000))       # in flight at the change
            yield env.timeout(2_000_000_000)
            evs.append(be.send("A", "B", 5_000_000))
            yield env.timeout(300_000_000)
            evs.append(be.send("A", "B", 5_000_000))
        env.process(proc())
        env.run()
        ends[backend] = [e.value.end_ns for e in evs]
    assert ends["analytic"] == pytest.approx(ends["flow"], rel=1e-5)
