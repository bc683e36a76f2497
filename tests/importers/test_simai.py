"""SimAI / AICB workload files: parsing quirks, mapping to groups, pipeline sends, closed forms, errors."""
import pytest

from netsim.errors import InputError
from netsim.importers import detect_format
from netsim.importers.simai import load_simai
from netsim.runtime.api import run_training
from netsim.topology import gpu_cluster, gpu_server

HIDDEN, SEQ, LAYERS, FFN, VOCAB, BF16 = 4096, 4096, 32, 11008, 32000, 2   # Llama-2-7B, micro-batch 1


def llama7b_rows(tp: int):
    """AICB-style rows of Megatron Llama-7B with tensor parallelism ``tp`` (no sequence parallelism)."""
    act = SEQ * HIDDEN * BF16                       # activations all-reduced by row-parallel layers
    layer_params = (4 * HIDDEN * HIDDEN + 3 * HIDDEN * FFN) // tp
    rows = [("embedding_layer", 180_000, "ALLREDUCE", act, 1, "NONE", 0, 1, "NONE", 0)]
    for i in range(LAYERS):
        rows.append((f"attention_layer{i}", 1_020_000, "ALLREDUCE", act, 2_040_000, "ALLREDUCE", act,
                     1_020_000, "NONE", 0))
        rows.append((f"mlp_layer{i}", 1_350_000, "ALLREDUCE", act, 2_700_000, "ALLREDUCE", act, 1_350_000,
                     "ALLREDUCE", layer_params * BF16))
    rows.append(("embedding_grads", 1, "NONE", 0, 1, "NONE", 0, 1, "ALLREDUCE", VOCAB * HIDDEN * BF16 // tp))
    return rows


def write_simai(path, header, rows, sep="\t", eol="\n", trailing=""):
    lines = [header, str(len(rows))]
    for r in rows:
        lines.append(sep.join(str(x) for x in (r[0], -1) + tuple(r[1:]) + (0,)[:12 - 2 - len(r[1:])]) + trailing)
    path.write_text(eol.join(lines) + eol, newline="")
    return str(path)


def aicb_header(tp, ep=1, pp=1, ga=1, gpus=8, pp_comm=0, vpp=LAYERS):
    """AICB's header line (AICB writes its layer count as ``vpp``)."""
    return (f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: {ep} pp: {pp} vpp: {vpp} "
            f"ga: {ga} all_gpus: {gpus} checkpoints: 0 checkpoint_initiates: 0 pp_comm: {pp_comm}")


def test_micro_allreduce_bytes_and_ring_closed_form(tmp_path):
    n, size = 8, 1 << 20
    path = tmp_path / "microAllReduce.txt"
    path.write_bytes(b"MICRO\r\n1\r\nallreduce\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1048576\t1\r\n")
    assert detect_format(str(path)) == "simai"
    s = run_training(gpu_server(gpus=n), str(path), backend="analytic", progress=False, keep_records=True)
    sent = {}
    for rec in s["records"]["fct"]:
        sent[rec.src] = sent.get(rec.src, 0) + rec.size_bytes
    assert len(sent) == n and set(sent.values()) == {2 * (n - 1) * size // n}
    chunk = size // n
    wire = chunk + -(-chunk // (1500 - 62)) * 62
    step_s = wire * 8 / 3.6e12 + 1500 * 8 / 3.6e12 + 2 * 100e-9
    assert s["iteration_time_s"] == pytest.approx(2 * (n - 1) * step_s, rel=0.01)


def test_llama7b_tp2_runs_on_flow_and_bytes_per_group_equal_row_sums(tmp_path):
    tp, gpus = 2, 8
    rows = llama7b_rows(tp)
    path = write_simai(tmp_path / "llama7b.txt", aicb_header(tp, gpus=gpus), rows, sep="\t", eol="\r\n",
                       trailing=" ")
    s = run_training(gpu_cluster(servers=2, gpus_per_server=4), path, backend="flow", progress=False)
    tp_row_bytes = sum(r[3] + r[6] for r in rows if r[2] != "NONE")      # fwd + ig on TP
    dp_row_bytes = sum(r[9] for r in rows if r[8] != "NONE")            # wg on DP
    n_tp, n_dp = gpus // tp, tp                                         # group instances
    assert s["collective_bytes_per_iteration"] == {"tp": n_tp * tp_row_bytes, "dp": n_dp * dp_row_bytes}
    # ring all-reduce: each of the n members sends 2(n-1)/n of the buffer
    dp = gpus // tp
    assert s["flow_bytes_per_iteration"]["tp"] == [n_tp * 2 * (tp - 1) * tp_row_bytes]
    assert s["flow_bytes_per_iteration"]["dp"][0] == pytest.approx(n_dp * 2 * (dp - 1) * dp_row_bytes, rel=1e-6)
    compute_ns = sum(r[1] + r[4] + r[7] for r in rows)
    assert s["iteration_time_s"] > compute_ns * 1e-9      # compute ticks are ns: 0.15 s of compute


def test_ga_is_not_applied_twice_and_update_is_an_optimizer_op(tmp_path):
    rows = [("l0", 10, "ALLREDUCE", 4096, 10, "NONE", 0, 10, "ALLREDUCE", 8192),
            ("l1", 10, "ALLREDUCE", 4096, 10, "NONE", 0, 10, "NONE", 0)]
    path = write_simai(tmp_path / "w.txt", aicb_header(2, ga=4, gpus=4), rows)
    job = load_simai(path)
    colls = [t for t in job.templates if t.collective]
    assert len([t for t in colls if t.kind == "tp"]) == 2 * 2          # 2 rows x 2 TP groups, not x ga
    assert len([t for t in colls if t.kind == "dp"]) == 2              # 1 row x 2 DP groups
    assert [t.kind for t in job.templates].count("compute") == 4 * 6   # 4 ranks x 2 rows x (fwd, ig, wg)


def test_pipeline_is_explicit_sends_per_micro_batch_block(tmp_path):
    rows = [("l0", 100, "NONE", 0, 100, "NONE", 0, 100, "NONE", 0),
            ("l1", 100, "NONE", 0, 100, "NONE", 0, 100, "ALLREDUCE", 1024)] * 2      # ga = 2 blocks
    path = write_simai(tmp_path / "pp.txt", aicb_header(1, pp=2, ga=2, gpus=4, pp_comm=65536, vpp=1), rows)
    job = load_simai(path)
    sends = [t for t in job.templates if t.collective == "send"]
    # 2 pipelines (dp = 2) x 2 blocks x (forward + backward)
    assert len(sends) == 8 and {t.size_bytes for t in sends} == {65536}
    assert {t.ranks for t in sends} == {(0, 2), (2, 0), (1, 3), (3, 1)}
    s = run_training(gpu_server(gpus=4), path, backend="analytic", progress=False)
    assert s["flow_bytes_per_iteration"]["pp"] == [8 * 65536]
    assert s["iteration_time_s"] > 2 * 4 * 300e-9       # each stage: 4 rows x 300 ns, stages in sequence


def test_ep_and_dp_ep_suffixes_pick_expert_groups(tmp_path):
    rows = [("moe", 10, "ALLTOALL_EP", 4096, 10, "ALLTOALL_EP", 4096, 10, "ALLREDUCE_DP_EP", 2048)]
    job = load_simai(write_simai(tmp_path / "moe.txt", aicb_header(1, ep=2, gpus=8), rows))
    a2a = {t.ranks for t in job.templates if t.collective == "alltoall"}
    assert a2a == {(0, 1), (2, 3), (4, 5), (6, 7)}
    edp = {t.ranks for t in job.templates if t.collective == "allreduce"}
    assert edp == {(0, 2, 4, 6), (1, 3, 5, 7)}


@pytest.mark.parametrize("text, match", [
    ("HYBRID_DLRM\n1\n" + "x -1 1 NONE 0 1 NONE 0 1 NONE 0 0\n", r"line 1, field policy.*'HYBRID_DLRM'"),
    ("MICRO\n1\nx -1 1 NONE 0 1 NONE 0 1 ALLREDUCE_NVLS 5 0\n", r"line 3, field wg_comm.*'ALLREDUCE_NVLS'"),
    ("MICRO\n2\nx -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 5 0\n", r"line 3: 2 rows of 12 fields announced, 12 fields found"),
    ("MICRO\n1\nx -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 5 0\nextra row\n", r"line 4: text after the 1 announced"),
    ("MICRO\n1\nx -1 1.5 NONE 0 1 NONE 0 1 ALLREDUCE 5 0\n", r"line 3, field fwd_compute.*'1.5'"),
])
def test_errors_name_file_line_field_value(tmp_path, text, match):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(InputError, match=r"bad\.txt: " + match):
        load_simai(str(p), world=8)


AICB_COLS = "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count"


def test_aicb_csv_ordered_collectives_per_group(tmp_path):
    from netsim.importers.aicb_csv import load_aicb_csv
    p = tmp_path / "llama_workload.csv"
    # AICB's layout: init rows, epoch_end, then each iteration's rows and an epoch_end
    p.write_text("\r\n".join([
        AICB_COLS,
        "CommType.barrier,CommGroup.all_nodes,8,0,init.model_setup,None,None,None,None,None,None,1",
        "CommType.all_reduce,CommGroup.dp_group,4,8,init.model_setup,None,None,,None,None,None,1",
        "CommType.epoch_end,None,None,0,,None,None,,None,None,None,1",
        "CommType.all_reduce,CommGroup.tp_group,2,16777216.0,forward_step,None,None,None,None,None,None,1",
        "computation,all_nodes,8,0,forward_step,-1,-1,,-1,-1,-1,1",
        "CommType.reduce_scatter,CommGroup.dp_group,4,4194304,step,None,None,None,None,None,None,2",
        "CommType.epoch_end,None,None,0,,None,None,,None,None,None,1",
        "CommType.all_reduce,CommGroup.tp_group,2,16777216.0,forward_step,None,None,None,None,None,None,1",
        "CommType.reduce_scatter,CommGroup.dp_group,4,4194304,step,None,None,None,None,None,None,2",
        "CommType.epoch_end,None,None,0,,None,None,,None,None,None,1", ""]))
    from netsim.importers import detect_format
    assert detect_format(str(p)) == "aicb-csv"
    job = load_aicb_csv(str(p), world=8)
    assert job.parallelism == {"dp": 4, "tp": 2, "pp": 1}
    colls = [(t.kind, t.collective, t.size_bytes) for t in job.templates]
    assert colls == [("tp", "allreduce", 16777216)] * 4 + [("dp", "reducescatter", 4194304)] * 4
    assert any("computation" in n for n in job.notes) and any("2 init rows" in n for n in job.notes)
    assert any("1 more iterations" in n and "differ" not in n for n in job.notes)
    s = run_training(gpu_cluster(servers=2, gpus_per_server=4), str(p), backend="analytic", progress=False)
    assert s["collective_bytes_per_iteration"] == {"tp": 4 * 16777216, "dp": 4 * 4194304}


def test_aicb_csv_rows_after_the_last_epoch_end_are_dropped_with_a_note(tmp_path):
    """Regression: a row after epoch_end (no train stage) joined the iteration; AICB counts it in no iteration."""
    from netsim.importers.aicb_csv import load_aicb_csv
    p = tmp_path / "tail_workload.csv"
    p.write_text("\n".join([
        AICB_COLS,
        "CommType.epoch_end,None,None,0,,None,None,,None,None,None,1",
        "CommType.all_reduce,CommGroup.dp_group,8,1048576,step,None,None,,None,None,None,1",
        "CommType.epoch_end,None,None,0,,None,None,,None,None,None,1",
        "CommType.all_reduce,CommGroup.tp_group,1,99,forward_step,None,None,,None,None,None,1", ""]))
    job = load_aicb_csv(str(p), world=8)
    assert [(t.collective, t.size_bytes) for t in job.templates] == [("allreduce", 1048576)]
    assert any("1 rows after the last epoch_end skipped" in n and "line 5" in n for n in job.notes)
    only_init = tmp_path / "init_workload.csv"
    only_init.write_text(AICB_COLS + "\nCommType.all_reduce,CommGroup.dp_group,8,8,init.model_setup,None,None,,"
                         "None,None,None,1\nCommType.epoch_end,None,None,0,,None,None,,None,None,None,1\n")
    with pytest.raises(InputError, match=r"init_workload\.csv: line 3, field comm_type: no training iteration"):
        load_aicb_csv(str(only_init), world=8)


def test_aicb_csv_pipeline_rows_are_an_error(tmp_path):
    from netsim.importers.aicb_csv import load_aicb_csv
    p = tmp_path / "pp_workload.csv"
    p.write_text(AICB_COLS + "\nCommType.isend,CommGroup.pp_group,2,1024,train.forward,1,0,,,,,1\n")
    with pytest.raises(InputError, match=r"pp_workload\.csv: line 2, field comm_type.*'CommType.isend'"):
        load_aicb_csv(str(p), world=8)


def test_header_quirks_pp_comm_without_colon_checkpoints_and_unknown_tokens(tmp_path):
    p = tmp_path / "q.txt"
    p.write_text("HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 4 ga: 1 all_gpus: 2 "
                 "checkpoints: 2 0 1 checkpoint_initiates: 1 1 pp_comm 4096 extra_flag\n"
                 "1\n\n  l0 -1 5 NONE 0 5 NONE 0 5 NONE 0 0   \n\n")
    job = load_simai(str(p), vpp=1)          # one row cannot hold vpp = 4 model chunks
    sends = [t for t in job.templates if t.collective == "send"]
    assert {t.size_bytes for t in sends} == {4096} and len(sends) == 2
    assert any("vpp = 1 from --workload-set" in n for n in job.notes) and any("checkpoints" in n for n in job.notes)
    with pytest.raises(InputError, match=r"q\.txt: line 1, field ga: interleaved 1F1B \(vpp = 4\) needs ga "
                                         r"divisible by pp = 2 \(got 1\)"):
        load_simai(str(p))
    assert any("extra_flag" in n for n in job.notes)


def test_a_job_on_an_hpcc_topology_uses_its_hosts_as_npus(tmp_path):
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = tmp_path / "micro.txt"
    p.write_text("MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8000000 1\n")
    s = run_training(os.path.join(root, "topologies", "hpcc_small", "topology.txt"), str(p), backend="analytic",
                     progress=False)
    n = 8
    assert s["parallelism"]["gpus"] == n and s["flow_bytes_per_iteration"]["dp"] == [2 * (n - 1) * 8000000]


def test_data_policy_has_only_wg_collectives_on_all_ranks(tmp_path):
    p = tmp_path / "data.txt"
    p.write_text("DATA\n2\nconv1 -1 100 ALLREDUCE 999 100 ALLREDUCE 999 100 ALLREDUCE 4096 0\n"
                 "fc -1 100 NONE 0 100 NONE 0 100 ALLREDUCE 8192 0\n")
    job = load_simai(str(p), world=4)
    colls = [(t.ranks, t.size_bytes) for t in job.templates if t.collective]
    assert colls == [((0, 1, 2, 3), 8192), ((0, 1, 2, 3), 4096)]      # backward order, fwd/ig slots ignored


def test_update_delay_follows_every_collective_as_in_simai_layer(tmp_path):
    """SimAI's Layer counts each fwd/ig/wg collective finished ``update`` ticks after its last byte."""
    rows = [("l0", 1000, "ALLREDUCE", 1 << 20, 1000, "ALLREDUCE", 1 << 20, 1000, "NONE", 0)]
    times = {}
    for upd in (0, 50_000):
        p = write_simai(tmp_path / f"u{upd}.txt", aicb_header(2, gpus=2), [rows[0] + (upd,)])
        times[upd] = run_training(gpu_server(gpus=2), p, backend="analytic", progress=False)["iteration_time_s"]
    # fwd and ig collectives are blocking: each holds the rank's compute 50 us longer (the old import: once)
    assert times[50_000] - times[0] == pytest.approx(2 * 50e-6, abs=1e-12)


@pytest.mark.parametrize("backend", ["analytic", "flow"])
def test_simai_via_chakra_equals_simai_direct_with_update(tmp_path, backend):
    """Regression: with update > 0 the Chakra re-import serialised the update delays with compute (+53 %)."""
    from netsim.importers.chakra_write import workload_ops, write_chakra
    rows = [r + (200_000,) for r in llama7b_rows(2)[:7]]
    p = write_simai(tmp_path / "u.txt", aicb_header(2, gpus=8), rows)
    topo = gpu_cluster(servers=2, gpus_per_server=4)
    name, world, ops = workload_ops(p, topo)
    write_chakra(ops, world, str(tmp_path / "et"), name)
    a = run_training(topo, p, backend=backend, progress=False)
    b = run_training(topo, str(tmp_path / "et"), backend=backend, progress=False)
    assert a["ops"] == b["ops"] and a["iteration_time_s"] == b["iteration_time_s"]
    assert a["collective_bytes_per_iteration"] == b["collective_bytes_per_iteration"]


def test_trailing_exposed_comm_is_classified_by_its_kind(tmp_path):
    """Regression: the time after a rank's last compute op (a trailing DP all-reduce) went to ``other``."""
    p = tmp_path / "micro.txt"
    p.write_text("MICRO\n1\nallreduce -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 0\n")
    s = run_training(gpu_server(gpus=8), str(p), backend="analytic", progress=False)
    bd = s["breakdown_s"]
    assert bd["dp"] == pytest.approx(s["iteration_time_s"], rel=1e-12) and bd["other"] == 0
    rows = [("l0", 100_000, "NONE", 0, 100_000, "NONE", 0, 100_000, "ALLREDUCE", 64 << 20)]
    q = write_simai(tmp_path / "dp.txt", aicb_header(1, gpus=8), rows)
    s = run_training(gpu_server(gpus=8), q, backend="analytic", progress=False)
    bd = s["breakdown_s"]
    assert bd["compute"] == pytest.approx(300e-6, rel=1e-9) and bd["other"] == 0
    assert bd["compute"] + bd["dp"] == pytest.approx(s["iteration_time_s"], rel=1e-12) and bd["dp"] > 0


def _pipeline_file(tmp_path, vpp, name):
    rows = [(f"l{i}", 1_000_000, "NONE", 0, 1_000_000, "NONE", 0, 1_000_000, "NONE", 0) for i in range(4)]
    rows = [("embedding_layer",) + rows[0][1:]] + rows[1:]
    return write_simai(tmp_path / name, aicb_header(1, pp=2, ga=2, gpus=2, pp_comm=1, vpp=vpp), rows * 2)


@pytest.mark.parametrize("vpp,chunks", [(1, 1), (2, 2)])
def test_vpp_runs_interleaved_1f1b_with_its_bubble(tmp_path, vpp, chunks):
    """p = 2 stages, m = 2 micro-batches of 4 rows: (m·v + p − 1) chunk passes of t_F + t_B each."""
    path = _pipeline_file(tmp_path, vpp, f"v{vpp}.txt")
    job = load_simai(path)
    sends = [t for t in job.templates if t.collective == "send"]
    assert len(sends) == 2 * 2 * (2 * chunks - 1)             # micro-batches x directions x virtual-stage hops
    s = run_training(gpu_server(gpus=2), path, backend="analytic", progress=False)
    p, m, rows_per_chunk = 2, 2, 4 // chunks
    t_chunk = rows_per_chunk * 3e-3                              # fwd + ig + wg of 1 ms each per row
    assert s["iteration_time_s"] == pytest.approx((m * chunks + p - 1) * t_chunk, rel=1e-3)


def test_aicb_head_and_tail_rows_run_once_around_the_micro_batches(tmp_path):
    head = [("grad_gather", 1, "NONE", 0, 1, "NONE", 0, 1, "ALLGATHER", 4096)]
    block = [("embedding_layer", 10, "NONE", 0, 10, "NONE", 0, 10, "NONE", 0),
             ("attention_row", 10, "NONE", 0, 10, "NONE", 0, 10, "ALLREDUCE", 8192)]
    tail = [("cross_entropy1", 0, "ALLREDUCE", 64, 0, "NONE", 0, 0, "NONE", 0)]
    path = write_simai(tmp_path / "ht.txt", aicb_header(2, pp=2, ga=2, gpus=8, pp_comm=4096.0, vpp=1),
                       head + block * 2 + tail)
    job = load_simai(path)
    gathers = [t for t in job.templates if t.collective and "grad_gather" in t.name]
    assert len(gathers) == 2 * 2           # once per iteration on each DP group (tp 2 x pp 2 of them)
    # the head's gradient all-gather is the last collective on every DP group
    dp = [t for t in job.templates if t.kind == "dp"]
    assert all("grad_gather" in t.name for t in dp[-4:])
    assert {t.size_bytes for t in job.templates if t.collective == "send"} == {4096}


def test_breakdown_sums_to_the_iteration_with_update_delays_beside_compute(tmp_path):
    """Regression: a wg update delay overlapping the next compute was counted twice (sum > iteration)."""
    rows = [r + (200_000,) for r in llama7b_rows(2)[:7]]
    p = write_simai(tmp_path / "u.txt", aicb_header(2, gpus=8), rows)
    s = run_training(gpu_cluster(servers=2, gpus_per_server=4), p, backend="analytic", progress=False)
    assert sum(s["breakdown_s"].values()) == pytest.approx(s["iteration_time_s"], rel=1e-9)
