"""CollNet/SHARP simulated: intra-server ring phases around an all-reduce reduced in a rail switch (issue 20).

Checked against hand-computed link loads (each rank sends S/G up to its rail's SHARP switch and gets
S/G back, against a ring's 2(m-1)/m · S/G each way; on a leaf-spine fabric, leaves reduce their
servers' parts and a spine joins the leaves), the hierarchical all-reduce with the same intra-server
phases, and NCCL's tuning model's choice.
"""
from collections import defaultdict

import pytest

from netsim.backends.base import TraceSinks, create_backend
from netsim.collectives import run_collective
from netsim.errors import InputError
from netsim.records import ListSink
from netsim.topology import gpu_cluster

SERVERS, G = 4, 4
S = 8 << 20


def _cluster(fabric="rail", sharp=True, spines_sharp=True, **kw):
    g = gpu_cluster(servers=SERVERS, gpus_per_server=G, fabric=fabric, **kw)
    for s, k in g.nodes(data="kind"):
        if k == "switch":
            g.nodes[s]["sharp"] = sharp and (spines_sharp or not s.startswith("spine"))
    return g


@pytest.fixture(scope="module")
def rail():
    return _cluster()


def _gpus(g):
    return sorted((n for n, k in g.nodes(data="kind") if k == "gpu"), key=lambda x: (x.split(".")[0], x))


def _run(g, backend, size, **kw):
    sink = ListSink()
    be = create_backend(backend, g, seed=0, sinks=TraceSinks(fct=sink))
    p = run_collective(be, "allreduce", _gpus(g), size, **kw)
    be.env.run()
    return p.value, sink.rows


def test_each_rank_sends_its_segment_to_its_rail_switch_and_gets_the_sum_back(rail):
    res, rows = _run(rail, "analytic", S, algorithm="collnet")
    kinds = dict(rail.nodes(data="kind"))
    up, down, rails = defaultdict(int), defaultdict(int), defaultdict(set)
    for r in rows:
        if kinds[r.dst] == "switch":
            up[r.src] += r.size_bytes
            rails[r.dst].add(r.src.split(".")[1])          # the GPU's local index
        elif kinds[r.src] == "switch":
            down[r.dst] += r.size_bytes
    gpus = _gpus(rail)
    assert all(up[x] == down[x] == S // G for x in gpus)
    assert len(rails) == G and all(len(v) == 1 for v in rails.values())   # one rail switch per local index
    assert res.algorithm == "collnet" and res.flows == len(rows)


@pytest.mark.parametrize("backend", ["analytic", "flow"])
def test_collnet_beats_the_hierarchical_ring_with_the_same_intra_phases(rail, backend):
    coll, _ = _run(rail, backend, S, algorithm="collnet")
    hier, _ = _run(rail, backend, S, algorithm="hierarchical")
    assert coll.time_s < hier.time_s


def test_auto_picks_and_runs_collnet_on_sharp_rails(rail):
    res, _ = _run(rail, "analytic", 64 << 20, algorithm="auto", protocol="auto")
    assert (res.algorithm, res.protocol) == ("collnet", "simple")


@pytest.mark.parametrize("graph, kw, match", [
    ("leaf_spine", {}, "collnet needs the leaf switches of each rail's ranks linked to one switch with sharp"),
    ("rail", {"kind": "reducescatter"}, "collnet runs allreduce only"),
    ("rail", {"protocol": "ll128"}, "collnet runs the Simple protocol only"),
])
def test_collnet_refusals_are_one_line_errors(rail, graph, kw, match):
    g = rail if graph == "rail" else _cluster("leaf_spine", servers_per_leaf=2, spines_sharp=False)   # no root
    be = create_backend(kw.pop("backend", "analytic"), g, seed=0)
    with pytest.raises(InputError, match=match) as exc:
        run_collective(be, kw.pop("kind", "allreduce"), _gpus(g), S, algorithm="collnet", **kw)
        be.env.run()
    assert "\n" not in str(exc.value)


def test_shipped_sharp_topology_runs_collnet_and_reports_it_in_ops_csv(tmp_path):
    import csv
    import os
    from netsim.runtime import run_training
    from netsim.topology import load_topology
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    topo = load_topology(os.path.join(root, "topologies", "rail_sharp_8gpu.yaml"))
    run_training(topo, os.path.join(root, "workloads", "gpt-1.5b-d8-innetwork-small.yaml"), backend="flow",
                 iterations=1, out_dir=str(tmp_path))
    with open(tmp_path / "ops.csv") as fh:
        dp = [r for r in csv.DictReader(fh) if r["kind"] == "dp"]
    assert dp and all((r["algorithm"], r["protocol"]) == ("collnet", "simple") for r in dp)


# -- two-level SHARP trees: leaves reduce their servers' parts, a spine joins the leaves ---------------------
@pytest.fixture(scope="module")
def leaf_spine():
    return _cluster("leaf_spine", servers_per_leaf=2)         # 4 servers, 2 per leaf, 2 spines, all sharp


def test_two_level_tree_link_bytes_are_the_hand_count(leaf_spine):
    """Each rank sends S/G to its leaf and gets S/G back; rail i's root is spine (i mod 2), so each
    leaf-spine link carries S/G each way for each of the 2 rails that spine serves."""
    res, rows = _run(leaf_spine, "analytic", S, algorithm="collnet")
    kinds = dict(leaf_spine.nodes(data="kind"))
    bytes_on = defaultdict(int)
    for r in rows:
        if "switch" in (kinds[r.src], kinds[r.dst]):
            bytes_on[r.src, r.dst] += r.size_bytes
    seg = S // G
    for x in _gpus(leaf_spine):
        leaf = "leaf0" if x.split(".")[0] in ("s0", "s1") else "leaf1"
        assert bytes_on.pop((x, leaf)) == bytes_on.pop((leaf, x)) == seg
    assert bytes_on == {(a, b): 2 * seg for a in ("leaf0", "leaf1") for b in ("spine0", "spine1")} | \
        {(b, a): 2 * seg for a in ("leaf0", "leaf1") for b in ("spine0", "spine1")}
    assert res.algorithm == "collnet" and res.flows == len(rows)


@pytest.mark.parametrize("backend", ["analytic", "flow"])
def test_two_level_tree_beats_hierarchical_and_auto_picks_it(leaf_spine, backend):
    coll, _ = _run(leaf_spine, backend, S, algorithm="collnet")
    hier, _ = _run(leaf_spine, backend, S, algorithm="hierarchical")
    auto, _ = _run(leaf_spine, backend, S, algorithm="auto", protocol="auto")
    assert coll.time_s < hier.time_s and auto.algorithm == "collnet"
