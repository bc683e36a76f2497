"""gpu_clos3: three-tier pods (rail or leaf / spine / core), non-blocking rates, errors, the doc's example."""
import doctest
import os

import pytest

from netsim.errors import InputError
from netsim.topology import build_expression, gpus, nic_of
from netsim.topology.buildspec import estimated_nodes
from netsim.topology.clos3 import gpu_clos3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _down_up_bps(g, sw, lower_tiers):
    down = up = 0.0
    for v in g[sw]:
        rate = g.edges[sw, v]["rate_bps"]
        if g.nodes[v]["kind"] == "nic" or g.nodes[v].get("tier") in lower_tiers:
            down += rate
        else:
            up += rate
    return down, up


@pytest.mark.parametrize("fabric,extra", [("rail", {}), ("leaf_spine", {"servers_per_leaf": 2, "gpus_per_nic": 2})])
@pytest.mark.parametrize("over,core_over", [(1.0, 1.0), (2.0, 1.5)])
def test_uplinks_carry_downlinks_over_oversubscription(fabric, extra, over, core_over):
    g = gpu_clos3(servers=12, servers_per_pod=4, spines_per_pod=2, cores_per_plane=3, fabric=fabric,
                  oversubscription=over, core_oversubscription=core_over, **extra)
    tiers = dict(g.nodes(data="tier"))
    for sw, tier in tiers.items():
        if tier in ("rail", "leaf"):
            down, up = _down_up_bps(g, sw, ())
            assert up == pytest.approx(down / over, rel=1e-12)
        elif tier == "spine":
            down, up = _down_up_bps(g, sw, ("rail", "leaf"))
            assert up == pytest.approx(down / core_over, rel=1e-12)
            assert {tiers[v] for v in g[sw]} == {"core", "rail" if fabric == "rail" else "leaf"}
    assert sum(1 for t in tiers.values() if t == "core") == 2 * 3
    assert len(gpus(g)) == 12 * 8


def test_rail_placement_and_planes():
    g = gpu_clos3(servers=8, servers_per_pod=4, spines_per_pod=2, cores_per_plane=2)
    assert [v for v in g[nic_of(g, "s6.gpu5")] if g.nodes[v]["kind"] == "switch"] == ["p1.rail5"]
    assert sorted(v for v in g["p1.spine1"] if g.nodes[v]["tier"] == "core") == ["core2", "core3"]
    for sw in ("p0.rail0", "p1.spine0", "core0"):
        assert g.nodes[sw]["kind"] == "switch"


def test_estimate_is_an_upper_bound():
    for args in ({"servers": 64}, {"servers": 12, "servers_per_pod": 4, "fabric": "leaf_spine", "servers_per_leaf": 2}):
        g = build_expression("gpu_clos3:" + ",".join(f"{k}={v}" for k, v in args.items()))
        assert g.number_of_nodes() <= estimated_nodes("gpu_clos3", args) <= g.number_of_nodes() + 64


@pytest.mark.parametrize("expr,blamed", [
    ("gpu_clos3:servers=10,servers_per_pod=4", "servers"),
    ("gpu_clos3:fabric=leaf_spine,servers_per_leaf=5", "servers_per_leaf"),
    ("gpu_clos3:fabric=torus", "fabric"),
    ("gpu_clos3:oversubscription=0.5", "oversubscription"),
    ("gpu_clos3:spines_per_pod=0", "spines_per_pod"),
])
def test_bad_shapes_are_input_errors(expr, blamed):
    with pytest.raises(InputError, match=blamed):
        build_expression(expr)


def test_doc_examples():
    res = doctest.testfile(os.path.join(ROOT, "docs", "topology.md"), module_relative=False,
                           optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


@pytest.mark.slow
def test_16k_gpus_build_and_validate():
    g = build_expression("gpu_clos3:servers=2048")
    assert len(gpus(g)) == 16384
