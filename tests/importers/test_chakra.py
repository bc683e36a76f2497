"""Chakra ET import/export: round trips of netsim workloads, a hand-written all-reduce, errors."""
import json
import os

import pytest

from netsim.errors import InputError
from netsim.importers import detect_format
from netsim.importers.chakra import load_chakra, read_et
from netsim.importers.chakra_schema import COLL_TYPES, NODE_TYPES, Node
from netsim.importers.chakra_write import write_chakra
from netsim.importers.etstream import encode_varint, split_messages
from netsim.runtime.api import run_training
from netsim.runtime.job import make_builder
from netsim.topology import gpu_server, load_topology
from netsim.workloads import load_workload, place
from netsim.workloads.placement import resolve_partition

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMALL = sorted(f for f in os.listdir(os.path.join(ROOT, "workloads")) if f.endswith("-small.yaml"))
FAST = ("bert-large-small.yaml", "gpt-1.5b-t2p2d2-small.yaml", "gpt-moe-350m-small.yaml")


def _coll(nid, ctype, size, pg="0", deps=(), ctrl=(), name=None):
    n = Node(id=nid, name=name or f"coll{nid}", type=NODE_TYPES["COMM_COLL_NODE"])
    n.data_deps.extend(deps)
    n.ctrl_deps.extend(ctrl)
    n.attr.add(name="comm_type", int64_val=COLL_TYPES[ctype])
    n.attr.add(name="comm_size", int64_val=size)
    n.attr.add(name="pg_name", string_val=pg)
    return n


def _comp(nid, us, deps=()):
    n = Node(id=nid, name=f"k{nid}", type=NODE_TYPES["COMP_NODE"], duration_micros=us)
    n.data_deps.extend(deps)
    return n


def test_varint_framing_round_trip_and_truncation():
    assert encode_varint(300) == b"\xac\x02"       # protobuf encoding guide's example
    msgs = [b"", b"x" * 200, b"abc"]
    from netsim.importers.etstream import join_messages
    assert split_messages(join_messages(msgs), "f") == msgs
    with pytest.raises(InputError, match="f: message 1 at byte 1"):
        split_messages(join_messages(msgs)[:-5], "f")


def test_schema_field_numbers_match_the_published_proto():
    # et_def.proto: Node.id=1 name=2 type=3 ctrl_deps=4 data_deps=5 start_time_micros=6 duration_micros=7
    # inputs=8 outputs=9 attr=10; AttributeProto int64_val=9 string_val=29
    n = Node(id=5, type=NODE_TYPES["COMP_NODE"], duration_micros=3)
    n.data_deps.append(2)
    n.attr.add(name="a", int64_val=7)
    assert n.SerializeToString() == b"\x08\x05\x18\x04\x2a\x01\x02\x38\x03\x52\x05\x0a\x01a\x48\x07"


def _export(workload, graph, tmp_path):
    wl = load_workload(workload)
    pl = place(wl, graph)
    wl = resolve_partition(wl, pl, graph)
    ops = make_builder(wl, pl, 0).build(0)
    write_chakra(ops, pl.world_size, str(tmp_path), "job")
    return ops


def _round_trip(name, backend, tmp_path):
    g = load_topology(os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml"))
    path = os.path.join(ROOT, "workloads", name)
    ops = _export(path, g, tmp_path)
    wl = load_workload(path)
    # variability:/overlap: are run-time effects on the op graph, not ops: the export carries the graph only
    off = ({"variability": {"jitter": "none", "gpu_cv": 0, "straggler_rate": 0}, "overlap_slowdown": 0}
           if wl.variability is not None or wl.overlap_slowdown else {})
    a = run_training(g, path, backend=backend, progress=False, **off)
    b = run_training(g, str(tmp_path), backend=backend, progress=False)
    assert a["ops"] == b["ops"] == len(ops)
    assert a["collective_bytes_per_iteration"] == b["collective_bytes_per_iteration"]
    assert a["flow_bytes_per_iteration"] == b["flow_bytes_per_iteration"]
    assert a["iteration_time_s"] == b["iteration_time_s"]
    assert b["workload_format"] == "chakra"


@pytest.mark.parametrize("backend", ["analytic", "flow"])
@pytest.mark.parametrize("name", FAST)
def test_round_trip_fast(name, backend, tmp_path):
    _round_trip(name, backend, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name, backend", [(n, b) for n in SMALL if n not in FAST   # the ECMP key ignores the
                                           for b in ("analytic", "flow")])            # label (file name / "job")
def test_round_trip_every_shipped_workload(name, backend, tmp_path):
    _round_trip(name, backend, tmp_path)


def test_two_iterations_chain_each_rank(tmp_path):
    g = load_topology(os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml"))
    _export(os.path.join(ROOT, "workloads", "bert-large-small.yaml"), g, tmp_path)
    one = run_training(g, str(tmp_path), backend="analytic", progress=False)
    two = run_training(g, str(tmp_path), backend="analytic", progress=False, iterations=2)
    assert two["ops"] == 2 * one["ops"]
    t0, t1 = two["iteration_times_s"]
    assert t0 == pytest.approx(one["iteration_time_s"]) and t1 == pytest.approx(t0, rel=1e-6)


def _allreduce_trace(et_writer, n, size, groups_dir=None):
    for r in range(n):
        meta = Node(id=1, name="[pytorch|profiler|execution_trace|thread]", type=NODE_TYPES["METADATA_NODE"])
        et_writer(r, [meta, _coll(2, "ALL_REDUCE", size, ctrl=[1], name="nccl:all_reduce")])


def test_hand_written_allreduce_matches_the_ring_closed_form(et_writer, tmp_path):
    n, size = 8, 1 << 20
    _allreduce_trace(et_writer, n, size)
    (tmp_path / "comm_group.json").write_text(json.dumps({"0": list(range(n))}))
    g = gpu_server(gpus=n)
    s = run_training(g, str(tmp_path / "trace"), backend="analytic", progress=False, keep_records=True)
    sent = {}
    for rec in s["records"]["fct"]:
        sent[rec.src] = sent.get(rec.src, 0) + rec.size_bytes
    assert set(sent.values()) == {2 * (n - 1) * size // n}
    # ring: 2(n-1) steps, each S/n bytes GPU -> NVSwitch -> GPU (3.6 Tb/s, 100 ns per hop); the wire
    # carries 62 B of header per packet of at most 1500 B; store-and-forward adds one packet at the switch
    chunk = size // n
    packets = -(-chunk // (1500 - 62))
    wire = chunk + packets * 62
    step_s = wire * 8 / 3.6e12 + 1500 * 8 / 3.6e12 + 2 * 100e-9
    assert s["iteration_time_s"] == pytest.approx(2 * (n - 1) * step_s, rel=0.01)


def test_unsupported_node_type_names_node_id_and_type(et_writer, tmp_path):
    et_writer(0, [_comp(1, 5), Node(id=7, name="ckpt", type=NODE_TYPES["CHECKPOINT_NODE"])])
    with pytest.raises(InputError, match=r"trace\.0\.et: node 7 \('ckpt'\), type: node type netsim cannot "
                                         r"model \(got 'CHECKPOINT_NODE'\)"):
        load_chakra(str(tmp_path / "trace"))


def test_unsupported_collective_and_missing_member(et_writer, tmp_path):
    bad = _coll(1, "ALL_REDUCE", 0)
    bad.attr[0].int64_val = 42                     # not a CollectiveCommType value
    et_writer(0, [bad])
    with pytest.raises(InputError, match=r"node 1 \('coll1'\), attr comm_type: collective netsim cannot model "
                                         r"\(got 42\)"):
        load_chakra(str(tmp_path / "trace"))
    et_writer(0, [_coll(1, "ALL_REDUCE", 64)])
    et_writer(1, [_comp(1, 1)])
    with pytest.raises(InputError, match=r"never appears on rank\(s\) \[1\]"):
        load_chakra(str(tmp_path / "trace"))


def test_mismatched_sizes_and_unknown_deps(et_writer, tmp_path):
    et_writer(0, [_coll(1, "ALL_REDUCE", 64)])
    et_writer(1, [_coll(3, "ALL_REDUCE", 128)])
    with pytest.raises(InputError, match=r"trace\.1\.et: node 3 .*differs between ranks"):
        load_chakra(str(tmp_path / "trace"))
    et_writer(0, [_comp(1, 1, deps=[9])])
    et_writer(1, [_comp(1, 1)])
    with pytest.raises(InputError, match=r"node 1 .*data_deps/ctrl_deps.*\(got 9\)"):
        load_chakra(str(tmp_path / "trace"))


def test_send_recv_pair_and_flops_compute(et_writer, tmp_path):
    send = Node(id=2, name="send", type=NODE_TYPES["COMM_SEND_NODE"], data_deps=[1])
    send.attr.add(name="comm_dst", int32_val=1)
    send.attr.add(name="comm_size", int64_val=4096)
    recv = Node(id=5, name="recv", type=NODE_TYPES["COMM_RECV_NODE"])
    recv.attr.add(name="comm_src", int32_val=0)
    recv.attr.add(name="comm_size", int64_val=4096)
    k = Node(id=1, name="gemm", type=NODE_TYPES["COMP_NODE"])
    k.attr.add(name="num_ops", uint64_val=10**9)
    et_writer(0, [k, send])
    et_writer(1, [recv, _comp(6, 2, deps=[5])])
    with pytest.raises(InputError, match=r"node 1 \('gemm'\), attr num_ops.*peak_flops"):
        load_chakra(str(tmp_path / "trace"))
    job = load_chakra(str(tmp_path / "trace"), peak_flops=1e12)
    kinds = [(t.kind, t.collective, t.ranks, t.duration_ps) for t in job.templates]
    assert ("compute", "", (0,), 10**9) in kinds and ("pp", "send", (0, 1), 0) in kinds
    g = gpu_server(gpus=2)
    s = run_training(g, str(tmp_path / "trace"), backend="analytic", progress=False,
                     workload_overrides={"peak_flops": "1e12"})
    assert s["flow_bytes_per_iteration"] == {"pp": [4096]} and s["iteration_time_s"] > 1e-3 + 2e-6


def test_detection_and_read_back(tmp_path):
    g = gpu_server(gpus=8)
    ops = _export(os.path.join(ROOT, "workloads", "bert-large-small.yaml"), load_topology(
        os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml")), tmp_path)
    assert detect_format(str(tmp_path)) == "chakra" and detect_format(str(tmp_path / "job")) == "chakra"
    assert detect_format(os.path.join(ROOT, "workloads", "bert-large-small.yaml")) == "netsim"
    meta, nodes = read_et(str(tmp_path / "job.0.et"))
    assert meta.version == "0.0.4" and len(nodes) == sum(1 for op in ops if 0 in op.ranks)
    assert g is not None


def test_flops_from_a_gpu_model(et_writer, tmp_path):
    from netsim.importers import detect_job
    from netsim.workloads.gpus import GPUS
    k = Node(id=1, name="gemm", type=NODE_TYPES["COMP_NODE"])
    k.attr.add(name="num_ops", uint64_val=10**12)
    et_writer(0, [k])
    job = detect_job(str(tmp_path / "trace"), overrides={"gpu": "h100"})
    want = 1e12 / (GPUS["h100"].peak_flops("bf16") * GPUS["h100"].utilization)
    assert job.templates[0].duration_ps == round(want * 1e12)
    with pytest.raises(InputError, match=r"--workload-set gpu: unknown GPU model \(got 'z80'\)"):
        detect_job(str(tmp_path / "trace"), overrides={"gpu": "z80"})


def test_independent_compute_nodes_of_a_rank_run_one_at_a_time(et_writer, tmp_path):
    et_writer(0, [_comp(1, 10), _comp(2, 20), _comp(3, 5, deps=[1])])   # 2 is independent of 1 and 3
    s = run_training(gpu_server(gpus=1), str(tmp_path / "trace"), backend="analytic", progress=False)
    assert s["iteration_time_s"] == pytest.approx(35e-6)


def test_imported_runs_are_byte_identical(tmp_path):
    g = load_topology(os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml"))
    _export(os.path.join(ROOT, "workloads", "bert-large-small.yaml"), g, tmp_path / "et")
    outs = []
    for k in range(2):
        run_training(g, str(tmp_path / "et"), backend="flow", progress=False, out_dir=str(tmp_path / f"r{k}"))
        outs.append([(tmp_path / f"r{k}" / f).read_bytes() for f in ("ops.csv", "fct.csv")])
    assert outs[0] == outs[1]


def test_rank_to_gpu_mapping_file(et_writer, tmp_path):
    for r in range(2):
        et_writer(r, [_coll(1, "ALL_REDUCE", 1 << 16)])
    g = load_topology("gpu_cluster:servers=2,gpus_per_server=2,spines=0")
    mapping = tmp_path / "map.txt"
    mapping.write_text("# rank order\ns1.gpu1\ns0.gpu0\n")
    s = run_training(g, str(tmp_path / "trace"), backend="analytic", progress=False, keep_records=True,
                     workload_overrides={"gpu_map": str(mapping)})
    assert s["_placement"].gpu_of == ("s1.gpu1", "s0.gpu0")
    assert {rec.src for rec in s["records"]["fct"]} == {"s1.gpu1", "s0.gpu0"}
    mapping.write_text("s1.gpu1\n")
    with pytest.raises(InputError, match="rank mapping: needs 2 distinct GPU names"):
        run_training(g, str(tmp_path / "trace"), backend="analytic", progress=False,
                     workload_overrides={"gpu_map": str(mapping)})


def test_gather_scatter_are_point_to_point_fans_at_the_root(et_writer, tmp_path):
    n, size = 4, 1000                                  # 1000 B over 4 members: shares 250 each
    for r in range(n):
        et_writer(r, [_coll(1, "GATHER", size), _comp(2, 5, deps=[1]), _coll(3, "SCATTER", size, deps=[2])])
    job = load_chakra(str(tmp_path / "trace"))
    sends = [t for t in job.templates if t.collective == "send"]
    gather = [t for t in sends if "gather" in t.name]
    scatter = [t for t in sends if "scatter" in t.name]
    assert sorted(t.ranks for t in gather) == [(1, 0), (2, 0), (3, 0)]
    assert sorted(t.ranks for t in scatter) == [(0, 1), (0, 2), (0, 3)]
    assert sum(t.size_bytes for t in gather) == 3 * 250 and sum(t.size_bytes for t in scatter) == 3 * 250
    # the root's compute waits for the whole fan-in; a member's only for its own send
    comp = {t.ranks[0]: t for t in job.templates if t.kind == "compute"}
    assert {job.templates[d].ranks for d in comp[0].deps} == {(1, 0), (2, 0), (3, 0)}
    assert {job.templates[d].ranks for d in comp[2].deps} == {(2, 0)}
    s = run_training(load_topology("gpu_server:gpus=4"), str(tmp_path / "trace"), backend="analytic",
                     progress=False, keep_records=True)
    got = sorted((r.src, r.dst, r.size_bytes) for r in s["records"]["fct"])
    assert len(got) == 6 and {b for *_, b in got} == {250}


def test_barrier_is_a_small_allreduce_and_reduce_scatter_block_a_reduce_scatter(et_writer, tmp_path):
    from netsim.importers.chakra_fan import BARRIER_BYTES, share_bytes
    for r in range(2):
        et_writer(r, [_coll(1, "BARRIER", 0), _coll(2, "REDUCE_SCATTER_BLOCK", 4096, deps=[1])])
    job = load_chakra(str(tmp_path / "trace"))
    assert [(t.collective, t.size_bytes) for t in job.templates] == [("allreduce", BARRIER_BYTES),
                                                                       ("reducescatter", 4096)]
    assert sum(share_bytes(1001, k, 3) for k in range(3)) == 1001
