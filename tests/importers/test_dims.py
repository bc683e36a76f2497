"""ASTRA-sim's dimension-by-dimension collectives on multi_dim topologies (netsim.importers.dims)."""
import os

import pytest

from netsim.errors import InputError
from netsim.importers import detect_job
from netsim.importers.dims import plan
from netsim.runtime.api import run_training
from netsim.topology import load_topology

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
MIB = 1 << 20


def test_phase_plans_follow_astra_sims_orders():
    s = 8 * MIB
    assert plan("allreduce", s, [4, 2], "localBWAware") == [("reducescatter", 0, s), ("allreduce", 1, s // 4),
                                                             ("allgather", 0, s)]
    assert plan("allreduce", s, [4, 2, 2], "localBWAware") == [
        ("reducescatter", 0, s), ("reducescatter", 1, s // 4), ("allreduce", 2, s // 8),
        ("allgather", 1, s // 4), ("allgather", 0, s)]
    assert plan("allreduce", s, [4, 2], "baseline") == [("allreduce", 0, s), ("allreduce", 1, s)]
    assert plan("reducescatter", s, [4, 2], "localBWAware") == [("reducescatter", 0, s), ("reducescatter", 1, s // 4)]
    assert plan("allgather", s, [4, 2], "localBWAware") == [("allgather", 0, s // 2), ("allgather", 1, s)]
    assert plan("allreduce", s, [1, 2], "localBWAware") == [("allreduce", 1, s)]     # one involved dimension


def _micro(tmp_path, size):
    p = tmp_path / "m.txt"
    p.write_text(f"MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE {size} 0\n")
    return str(p)


@pytest.mark.parametrize("mode,per_rank_mib", [("off", 14), ("localBWAware", 14), ("baseline", 20)])
def test_bytes_each_rank_sends_per_mode(tmp_path, mode, per_rank_mib):
    """Ring RS/AG send (n−1)/n of their buffer, AR 2(n−1)/n: 4x2 grid, 8 MiB all-reduce."""
    g = load_topology(os.path.join(DATA, "astra_Ring_Switch_8npus.yml"))
    s = run_training(g, _micro(tmp_path, 8 * MIB), backend="analytic", progress=False, keep_records=True,
                     workload_overrides={"dims": mode})
    sent = {}
    for rec in s["records"]["fct"]:
        sent[rec.src] = sent.get(rec.src, 0) + rec.size_bytes
    assert len(sent) == 8 and set(sent.values()) == {per_rank_mib * MIB}
    assert s["ops"] == {"off": 1, "localBWAware": 2 + 4 + 2, "baseline": 2 + 4}[mode]


def test_local_bw_aware_is_faster_than_one_flat_ring_on_the_slow_dimension(tmp_path):
    g = load_topology(os.path.join(DATA, "astra_Ring_Switch_8npus.yml"))
    t = {m: run_training(g, _micro(tmp_path, 8 * MIB), backend="analytic", progress=False,
                         workload_overrides={"dims": m})["iteration_time_s"] for m in ("off", "localBWAware")}
    assert t["localBWAware"] < t["off"]


def test_system_json_mode_and_bad_mode(tmp_path):
    g = load_topology(os.path.join(DATA, "astra_Ring_Switch_8npus.yml"))
    job = detect_job(_micro(tmp_path, MIB), graph=g,
                     overrides={"system": os.path.join(DATA, "astra_system_Ring_4chunks.json")})
    assert [t.collective for t in job.templates] == ["reducescatter"] * 2 + ["allreduce"] * 4 + ["allgather"] * 2
    # phases wait for the previous phase's ops sharing a member
    first = {i for i, t in enumerate(job.templates) if t.collective == "reducescatter"}
    assert all(set(t.deps) <= first and t.deps for t in job.templates if t.collective == "allreduce")
    with pytest.raises(InputError, match=r"--workload-set dims: unknown collective optimization \(got 'fast'\)"):
        detect_job(_micro(tmp_path, MIB), graph=g, overrides={"dims": "fast"})


def test_non_box_groups_and_one_dimensional_topologies_are_left_alone(tmp_path):
    g1 = load_topology(os.path.join(DATA, "astra_Ring_4npus.yml"))
    job = detect_job(_micro(tmp_path, MIB), graph=g1)
    assert [t.collective for t in job.templates] == ["allreduce"]


def test_per_dimension_allreduce_implementations_from_the_system_json(tmp_path):
    import json
    sysf = tmp_path / "system.json"
    sysf.write_text(json.dumps({"collective-optimization": "baseline",
                                "all-reduce-implementation": ["ring", "halvingDoubling"]}))
    g = load_topology(os.path.join(DATA, "astra_Ring_Switch_8npus.yml"))
    job = detect_job(_micro(tmp_path, MIB), graph=g, overrides={"system": str(sysf)})
    algs = [(t.group.split(".")[-2], t.spec.algorithm) for t in job.templates]
    assert algs == [("d0", "ring")] * 2 + [("d1", "halving_doubling")] * 4


@pytest.mark.parametrize("mode", ["baseline", "localBWAware"])
def test_explicit_dims_on_a_topology_without_a_grid_is_refused(tmp_path, mode):
    # it did nothing silently: a gpu_cluster has no dimensions to split a collective along
    g = load_topology("gpu_cluster:servers=2,gpus_per_server=4")
    with pytest.raises(InputError, match=rf"--workload-set dims: needs a multi-dimensional topology.*'{mode}'"):
        detect_job(_micro(tmp_path, MIB), graph=g, overrides={"dims": mode})
    assert [t.collective for t in detect_job(_micro(tmp_path, MIB), graph=g, overrides={"dims": "off"}).templates] \
        == ["allreduce"]


def test_system_json_optimization_on_a_topology_without_a_grid_is_a_note(tmp_path):
    g = load_topology("gpu_cluster:servers=2,gpus_per_server=4")
    job = detect_job(_micro(tmp_path, MIB), graph=g,
                     overrides={"system": os.path.join(DATA, "astra_system_Ring_4chunks.json")})
    assert [t.collective for t in job.templates] == ["allreduce"]
    assert any("not multi-dimensional" in n and "localBWAware" in n for n in job.notes)
