"""CollNet/SHARP simulated: intra-server ring phases around an all-reduce reduced in a rail switch (issue 20).

Checked against hand-computed link loads (each rank sends S/G up to its rail's SHARP switch and gets
S/G back, against a ring's 2(m-1)/m · S/G each way), the hierarchical all-reduce with the same
intra-server phases, and NCCL's tuning model's choice.
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


def _cluster(fabric="rail", sharp=True, **kw):
    g = gpu_cluster(servers=SERVERS, gpus_per_server=G, fabric=fabric, **kw)
    for s, k in g.nodes(data="kind"):
        if k == "switch":
            g.nodes[s]["sharp"] = sharp
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
    ("leaf_spine", {}, "collnet needs the NICs of each rail's ranks on one switch with sharp: true"),
    ("rail", {"kind": "reducescatter"}, "collnet runs allreduce only"),
    ("rail", {"protocol": "ll128"}, "collnet runs the Simple protocol only"),
])
def test_collnet_refusals_are_one_line_errors(rail, graph, kw, match):
    g = rail if graph == "rail" else _cluster("leaf_spine", servers_per_leaf=2)   # SHARP would need a tree
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
