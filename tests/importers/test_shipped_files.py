"""Files laid out exactly as SimAI, AICB and ASTRA-sim ship them (tests/importers/data/), run end to end.

Each fixture reproduces the upstream file's structure (header, separators, trailing space, comments, column
order) at a small size; docs/formats.md names the upstream file and commit each one follows.
"""
import json
import os

import pytest

from netsim.cli import main
from netsim.importers import detect_format, detect_job
from netsim.topology import gpus, load_topology

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
GPU_SERVER_8 = "gpu_server:gpus=8"
CLUSTER_16 = "gpu_cluster:servers=2,gpus_per_server=8"

# (workload fixture, topology (fixture or expression), expected format)
RUNS = [
    ("simai_microAllReduce.txt", "simai_H100_8g_nvlink_only.topo", "simai"),
    ("simai_workload_ep_test.txt", "simai_Spectrum-X_16g_8gps_400Gbps_H100", "simai"),
    ("simai_workload_analytical.txt", GPU_SERVER_8, "simai"),
    ("aicb_Llama7B_megatron_tp2_pp1_mbs1.csv", "astra_HGX-H100-validated.yml", "aicb-csv"),
    ("aicb_all_reduce_workload.csv", "astra_Ring_Switch_8npus.yml", "aicb-csv"),
    ("aicb_all_reduce_workload.csv", "astra_ns3_8_nodes_1_switch_topology.txt", "aicb-csv"),
    ("simai_microAllReduce.txt", "astra_ns3_8nodes_ring_topology.txt", "simai"),     # ring all-reduce: neighbours
]


def _path(name):
    return os.path.join(DATA, name) if os.path.exists(os.path.join(DATA, name)) else name


def _run(tmp_path, topo, wl, backend, *extra):
    out = tmp_path / backend
    rc = main(["run", _path(topo), _path(wl), "--out", str(out), "--backend", backend, "--quiet", "--no-trace",
               *extra])
    assert rc == 0
    return json.loads((out / "summary.json").read_text())


@pytest.mark.parametrize("wl,topo,fmt", RUNS)
def test_shipped_layout_imports_and_runs_on_analytic_and_flow(wl, topo, fmt, tmp_path):
    assert detect_format(_path(wl)) == fmt
    a = _run(tmp_path, topo, wl, "analytic")
    f = _run(tmp_path, topo, wl, "flow")
    assert a["workload_format"] == fmt and a["iteration_time_s"] > 0
    assert a["collective_bytes_per_iteration"] == f["collective_bytes_per_iteration"]
    assert a["ops"] == f["ops"]
    # the flow backend shares links the analytic one prices alone: never faster, same order of magnitude
    assert a["iteration_time_s"] * 0.5 < f["iteration_time_s"] < a["iteration_time_s"] * 20


def test_simai_micro_allreduce_layout_is_one_tp_allreduce_of_the_row():
    job = detect_job(_path("simai_microAllReduce.txt"), graph=load_topology(GPU_SERVER_8))
    colls = [t for t in job.templates if t.collective]
    assert [(t.kind, t.collective, t.size_bytes, len(t.ranks)) for t in colls] == [("tp", "allreduce", 1048576, 8)]
    # update = 1 tick after the collective on every rank (SimAI's Layer), then ig and wg compute
    assert sum(t.kind == "optimizer" for t in job.templates) == 8


def test_simai_ep_layout_groups_and_bytes():
    job = detect_job(_path("simai_workload_ep_test.txt"))
    assert job.parallelism == {"dp": 4, "tp": 4, "pp": 1}
    ep = [t for t in job.templates if t.group.startswith("ep")]
    assert ep and {len(t.ranks) for t in ep} == {4} and {t.collective for t in ep} == {"alltoall"}
    # dp / ep = 1: each expert-data-parallel group has one member, so the _DP_EP rows move nothing (as in SimAI)
    assert not [t for t in job.templates if t.group.startswith("edp")]
    kinds = {t.kind for t in job.templates if t.collective}
    assert kinds == {"tp", "dp", "ep"}
    # the REDUCESCATTER 0 bytes slot moves nothing: no op
    assert all(t.size_bytes > 0 for t in job.templates if t.collective)


def test_aicb_model_csv_layout_ranks_line_init_and_iterations():
    job = detect_job(_path("aicb_Llama7B_megatron_tp2_pp1_mbs1.csv"), graph=load_topology(GPU_SERVER_8))
    assert job.world_size == 8 and job.parallelism == {"dp": 4, "tp": 2, "pp": 1}
    assert any("7 init rows" in n for n in job.notes)
    assert any("1 more iterations" in n for n in job.notes)
    rows = [ln.split(",") for ln in open(_path("aicb_Llama7B_megatron_tp2_pp1_mbs1.csv")).read().splitlines()[2:]]
    first = rows[rows.index(next(r for r in rows if r[0] == "CommType.epoch_end")) + 1:]
    first = first[:[r[0] for r in first].index("CommType.epoch_end")]
    tp_bytes = sum(int(r[3]) for r in first if r[1] == "CommGroup.tp_group") * 4     # 4 TP groups
    dp_bytes = sum(int(r[3]) for r in first if r[1] == "CommGroup.dp_group") * 2     # 2 DP groups
    got = {}
    for t in job.templates:
        got[t.kind] = got.get(t.kind, 0) + t.size_bytes
    assert got == {"tp": tp_bytes, "dp": dp_bytes}


def test_aicb_micro_test_layout_without_group_size_column_is_dp_over_all_ranks():
    job = detect_job(_path("aicb_all_reduce_workload.csv"), graph=load_topology(GPU_SERVER_8))
    assert [(len(t.ranks), t.size_bytes) for t in job.templates] == [(8, 4096)] * 2 + [(8, 1048576)] * 2
    assert any("3 init rows" in n for n in job.notes)


def test_simai_generated_topologies_have_the_scripts_node_counts():
    g = load_topology(_path("simai_Spectrum-X_16g_8gps_400Gbps_H100"))
    assert len(gpus(g)) == 16
    kinds = [d.get("kind") for _, d in g.nodes(data=True)]
    assert kinds.count("nvswitch") == 2 and kinds.count("switch") == 10 and kinds.count("nic") == 16
    g = load_topology(_path("simai_H100_8g_nvlink_only.topo"))
    assert len(gpus(g)) == 8


def test_astra_system_and_comm_group_files_as_shipped(tmp_path, et_writer):
    from netsim.importers.chakra_schema import COLL_TYPES, NODE_TYPES, Node
    for r in range(4):
        n = Node(id=1, name="ar", type=NODE_TYPES["COMM_COLL_NODE"])
        n.attr.add(name="comm_type", int64_val=COLL_TYPES["ALL_REDUCE"])
        n.attr.add(name="comm_size", int64_val=1 << 20)
        n.attr.add(name="pg_name", string_val="1" if r % 2 == 0 else "2")
        et_writer(r, [n])
    job = detect_job(str(tmp_path / "trace"), "chakra",
                     overrides={"comm_groups": _path("astra_comm_group.json"),
                                "system": _path("astra_system_Ring_4chunks.json")})
    assert sorted(t.ranks for t in job.templates) == [(0, 2), (1, 3)]
    assert {t.spec.chunk_bytes for t in job.templates} == {(1 << 20) // 4}
    assert any("scheduling-policy" in n for n in job.notes)
    s = _run(tmp_path, "astra_Ring_4npus.yml", str(tmp_path / "trace"), "analytic",
             "--workload-set", f"comm_groups={_path('astra_comm_group.json')}")
    assert s["collective_bytes_per_iteration"] == {"dp": 2 * (1 << 20)}


def _chakra_generator_traces(tmp_path, kind, n, comm_size=65536, runtime_us=5):
    """Traces as mlcommons/chakra ``src/generator/generator.py`` (@ 11d2d3f) writes its microbenchmarks:
    GlobalMetadata 0.0.4, attrs ``is_cpu_op`` (bool) and ``comm_size`` as **uint64**, no ``pg_name``."""
    from netsim.importers.chakra_schema import COLL_TYPES, NODE_TYPES, GlobalMetadata, Node
    from netsim.importers.etstream import join_messages
    for r in range(n):
        nodes = []
        if kind == "allreduce":
            node = Node(id=0, name="ALL_REDUCE", type=NODE_TYPES["COMM_COLL_NODE"])
            node.attr.add(name="is_cpu_op", bool_val=False)
            node.attr.add(name="comm_type", int64_val=COLL_TYPES["ALL_REDUCE"])
            node.attr.add(name="comm_size", uint64_val=comm_size)
            nodes.append(node)
        elif kind == "two_comp_nodes_dependent":
            parent = Node(id=0, name="COMP_NODE", type=NODE_TYPES["COMP_NODE"], duration_micros=runtime_us)
            parent.attr.add(name="is_cpu_op", bool_val=False)
            child = Node(id=1, name="COMP_NODE", type=NODE_TYPES["COMP_NODE"], duration_micros=runtime_us)
            child.data_deps.append(0)
            child.attr.add(name="is_cpu_op", bool_val=False)
            nodes += [parent, child]
        elif kind == "metadata_and_mem":
            meta = Node(id=0, name="METADATA_NODE", type=NODE_TYPES["METADATA_NODE"])
            meta.attr.add(name="double", double_val=1.2345, doc_string="double")
            meta.attr.add(name="bool_list").bool_list.values.extend([True, False])
            mem = Node(id=1, name="MEM_LOAD_NODE", type=NODE_TYPES["MEM_LOAD_NODE"])
            mem.attr.add(name="is_cpu_op", bool_val=False)
            mem.attr.add(name="tensor_size", uint64_val=1024)
            nodes += [meta, mem]
        msgs = [GlobalMetadata(version="0.0.4").SerializeToString()] + [x.SerializeToString() for x in nodes]
        (tmp_path / f"{kind}.{r}.et").write_bytes(join_messages(msgs))
    return str(tmp_path / kind)


def test_chakra_generator_microbenchmarks_run_end_to_end(tmp_path):
    ar = _chakra_generator_traces(tmp_path, "allreduce", 8)
    a = _run(tmp_path, "astra_HGX-H100-validated.yml", ar, "analytic")
    f = _run(tmp_path, "astra_HGX-H100-validated.yml", ar, "flow")
    assert a["collective_bytes_per_iteration"] == f["collective_bytes_per_iteration"] == {"dp": 65536}
    comp = _chakra_generator_traces(tmp_path, "two_comp_nodes_dependent", 4)
    s = _run(tmp_path, "astra_Ring_4npus.yml", comp, "analytic")
    assert s["iteration_time_s"] == pytest.approx(10e-6, rel=1e-12)          # 5 us then 5 us
    mm = _chakra_generator_traces(tmp_path, "metadata_and_mem", 4)
    assert _run(tmp_path, "astra_Ring_4npus.yml", mm, "analytic")["ops"] == 4   # one MEM node per rank, 0 us


def test_alltoall_on_astra_sims_ns3_host_ring(tmp_path):
    p = tmp_path / "a2a.txt"
    p.write_text("MICRO\n1\na2a -1 1 NONE 0 1 NONE 0 1 ALLTOALL 1048576 0\n")
    # a switchless ns-3 file: hosts relay (host_forwarding), so every pair has a route around the ring
    a = _run(tmp_path, "astra_ns3_8nodes_ring_topology.txt", str(p), "analytic")
    f = _run(tmp_path, "astra_ns3_8nodes_ring_topology.txt", str(p), "flow")
    assert a["collective_bytes_per_iteration"] == f["collective_bytes_per_iteration"]
    assert a["iteration_time_s"] > 0 and f["iteration_time_s"] >= a["iteration_time_s"] * 0.99
