"""API contract: validation errors, trivial cases, generator form, fallbacks, bandwidth definitions."""
import pytest
import simpy

from coll_helpers import run_on, star
from netsim.backends.base import create_backend
from netsim.collectives import (ALGORITHMS, KINDS, bus_bandwidth, closed_form_time_s, collective,
                                run_collective)
from netsim.errors import InputError

NODES = [f"h{i}" for i in range(4)]


def _be(n=4):
    return create_backend("analytic", star(n))


@pytest.mark.parametrize("kwargs,needle", [
    (dict(kind="allreduse"), "allreduce"),
    (dict(algorithm="butterfly"), "halving_doubling"),
    (dict(kind="alltoall", algorithm="tree"), "pairwise"),
    (dict(size_bytes=-1), "size"),
    (dict(size_bytes=1.5), "size"),
    (dict(channels=0), "channels"),
    (dict(chunk_bytes=0), "chunk_bytes"),
    (dict(nodes=["h0", "h0"]), "distinct"),
    (dict(nodes=["h0", "nope"]), "nope"),
    (dict(kind="sendrecv", nodes=NODES), "two nodes"),
    (dict(kind="broadcast", root=9), "root"),
    (dict(kind="alltoall", sizes=[[0, 1], [1, 0]]), "matrix"),
    (dict(algorithm="hierarchical", node_groups=[["h0", "h1", "h2"], ["h3"]]), "same number"),
    (dict(algorithm="hierarchical", node_groups=[["h0", "h1"], ["h2", "h2"]]), "partition"),
    (dict(algorithm="hierarchical"), "server"),
])
def test_bad_input_raises_input_error_naming_what_is_accepted(kwargs, needle):
    args = dict(kind="allreduce", nodes=NODES, size_bytes=1000)
    args.update(kwargs)
    kind, nodes, size = args.pop("kind"), args.pop("nodes"), args.pop("size_bytes")
    with pytest.raises(InputError, match=needle):
        run_collective(_be(), kind, nodes, size, **args)


def test_every_kind_listed_with_algorithms():
    assert set(KINDS) == {"allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall", "sendrecv"}
    assert ALGORITHMS["allreduce"] == ("ring", "tree", "halving_doubling", "hierarchical")


@pytest.mark.parametrize("kind", KINDS)
def test_single_rank_and_zero_bytes_complete_immediately_without_flows(kind):
    cases = [(["h0", "h1"], 0)] + ([] if kind == "sendrecv" else [(["h0"], 1000)])
    for ns, size in cases:
        be = _be()
        be.env.run(until=5)
        p = run_collective(be, kind, ns, size)
        be.env.run()
        assert p.value.flows == 0 and p.value.end_ps == p.value.start_ps == 5 and be.stats()["flows"] == 0


def test_generator_form_with_yield_from_and_sequencing():
    be = _be()
    out = {}

    def proc(env):
        r1 = yield from collective(be, "allreduce", NODES, 40_000)
        r2 = yield from collective(be, "alltoall", NODES, 40_000)
        out["r"] = (r1, r2, env.now)
    be.env.process(proc(be.env))
    be.env.run()
    r1, r2, end = out["r"]
    assert r1.end_ps == r2.start_ps and r2.end_ps == end and r1.kind == "allreduce" and r2.algorithm == "direct"


def test_default_ring_means_direct_for_alltoall_and_sendrecv():
    _, _, p = run_on(star(4), lambda be: run_collective(be, "sendrecv", ["h0", "h3"], 10))
    assert p.value.algorithm == "direct"


def test_halving_doubling_non_power_of_two_reducescatter_falls_back_to_ring():
    _, _, p = run_on(star(6), lambda be: run_collective(be, "reducescatter", [f"h{i}" for i in range(6)], 6000,
                                                        algorithm="halving_doubling"))
    assert p.value.algorithm == "ring"


def test_bus_bandwidth_definitions():
    # nccl-tests: 1 GB all-reduce on 8 ranks in 10 ms -> algbw 100 GB/s, busbw 175 GB/s
    assert bus_bandwidth("allreduce", 8, 10**9, 0.01) == pytest.approx(175e9 * 8)
    assert bus_bandwidth("allgather", 4, 10**9, 0.01) == pytest.approx(75e9 * 8)
    assert bus_bandwidth("broadcast", 4, 10**9, 0.01) == pytest.approx(100e9 * 8)
    assert bus_bandwidth("alltoall", 2, 10**9, 0.01) == pytest.approx(50e9 * 8)


def test_closed_form_trivial_and_unknown():
    assert closed_form_time_s("allreduce", "ring", 1, 10**6, 1e9, 1e-6) == 0.0
    assert closed_form_time_s("allreduce", "ring", 8, 0, 1e9, 1e-6) == 0.0
    with pytest.raises(InputError, match="allreduce: ring"):
        closed_form_time_s("allreduce", "hierarchical", 8, 10, 1e9, 0)


def test_process_is_a_simpy_process():
    be = _be()
    assert isinstance(run_collective(be, "allreduce", NODES, 10), simpy.Process)


_DET_SCRIPT = """
import sys
from netsim.backends.base import TraceSinks, create_backend
from netsim.collectives import run_collective
from netsim.records import FCT_COLUMNS, CsvSink
from netsim.topology import gpu_cluster
g = gpu_cluster(servers=2, gpus_per_server=4, spines=2, servers_per_leaf=1)
sink = CsvSink(sys.argv[1], FCT_COLUMNS)
be = create_backend("analytic", g, seed=7, sinks=TraceSinks(fct=sink))
nodes = sorted(x for x, k in g.nodes(data="kind") if k == "gpu")
for algo in ("hierarchical", "tree", "halving_doubling"):
    run_collective(be, "allreduce", nodes, 3_000_001, algorithm=algo, chunk_bytes=100_000)
run_collective(be, "alltoall", nodes, 800_000, algorithm="pairwise")
be.env.run()
be.close()
sink.close()  # the sink writes NAME.partial and renames it to NAME when closed
"""


def test_byte_identical_across_processes_and_hash_seeds(tmp_path):
    import os
    import subprocess
    import sys
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"fct{seed}.csv"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", _DET_SCRIPT, str(out)], check=True, env=env)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].count(b"\n") > 100


def test_spelling_variants_are_normalized():
    _, rows, p = run_on(star(4), lambda be: run_collective(be, "All-Reduce", NODES, 4000,
                                                            algorithm="halving-doubling"))
    assert (p.value.kind, p.value.algorithm) == ("allreduce", "halving_doubling")
    assert {r.collective for r in rows} == {"allreduce"}
