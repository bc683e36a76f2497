"""Trial 9: an outside user's inputs that no other test uses (hand-written files under data9/).

Every test states what a hand computation, a closed form or the docs say, and
is a strict xfail on the commit the trial ran on (a691e7b): a defect reported
to the lead, which passes once fixed.
"""
from __future__ import annotations

import csv
import json
import os

import pytest

from netsim.cli import main
from tests.trial.trialcli import run_cli as _cli

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data9")
INT64_MAX = 2**63 - 1


def _d(name: str) -> str:
    return os.path.join(DATA, name)


def _rows(out_dir, name="ops.csv") -> list[dict]:
    with open(os.path.join(out_dir, name), encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_time_beyond_int64_ns_is_refused_or_kept_exact_native(tmp_path, capsys):
    # 1e13 s = 1e22 ns > int64's 9.22e18 ns.  Either the workload field is bounded (netsim bounds sizes and flow
    # starts at 2^53) and the run exits 2 naming compute.optimizer, or the typed tables keep the value.
    rc, err = _cli(["run", _d("star4.yaml"), _d("optimizer_1e13s.yaml"), "--backend", "flow", "--out", tmp_path,
                    "--quiet", "--no-trace"], capsys)
    if rc == 2:
        assert len(err) == 1 and "compute.optimizer" in err[0]
        return
    assert rc == 0
    from netsim.analysis import load_run
    ops = load_run(str(tmp_path)).ops
    assert (ops["end_ns"] >= ops["start_ns"]).all()
    assert ops["end_ns"].max() >= 10**22


def test_a_time_beyond_int64_ns_is_refused_or_kept_exact_simai(tmp_path, capsys):
    # SimAI reads fwd_compute into a uint64 (max 1.8e19); 1e20 ns cannot come from a SimAI file, and it is past
    # int64 ns: an error naming line 3, field fwd_compute -- or exact typed tables.
    rc, err = _cli(["run", _d("star4.yaml"), _d("simai_huge_compute.txt"), "--backend", "analytic", "--out",
                    tmp_path, "--quiet", "--no-trace"], capsys)
    if rc == 2:
        assert len(err) == 1 and "line 3" in err[0] and "fwd_compute" in err[0]
        return
    assert rc == 0
    from netsim.analysis import load_run
    ops = load_run(str(tmp_path)).ops
    assert (ops["end_ns"] >= 0).all()


def test_compare_warns_about_an_interrupted_run(tmp_path, capsys):
    # interrupted_run/: `netsim run star4.yaml dp4.yaml --backend packet --iterations 20` stopped by SIGINT after
    # ~9 s (status 'interrupted', 4 flows of 24 per iteration finished).  docs/analysis.md: a folder with another
    # status than complete is reported as incomplete; compare's percentiles are over the finished flows only.
    done = tmp_path / "done"
    rc, _ = _cli(["run", _d("star4.yaml"), _d("dp4.yaml"), "--backend", "flow", "--out", done, "--quiet",
                  "--no-trace"], capsys)
    assert rc == 0
    rc, err = _cli(["compare", _d("interrupted_run"), done], capsys)
    assert rc in (0, 2)
    assert any("interrupted_run" in ln and ("incomplete" in ln or "interrupted" in ln) for ln in err)


def test_export_hpcc_flows_of_an_interrupted_run_says_so(tmp_path, capsys):
    # The flows still in flight at the interrupt are not in fct.csv, so a replay of this flow.txt is not the run.
    rc, err = _cli(["export", "hpcc-flows", _d("interrupted_run"), "--out", tmp_path / "flow.txt"], capsys)
    assert rc == 2 or any("interrupted" in ln or "incomplete" in ln for ln in err)


def test_duplicate_layer_names_are_refused_or_give_unique_ops(tmp_path, capsys):
    # docs/topology.md / workloads.md: duplicate node names and keys are errors; docs/run.md says an op name is
    # unique within the iteration (fct.csv, the trace and --inject-delay by group key on it).
    rc, err = _cli(["run", _d("star4.yaml"), _d("dup_layers.yaml"), "--backend", "analytic", "--out", tmp_path,
                    "--quiet", "--no-trace"], capsys)
    if rc == 2:
        assert len(err) == 1 and "layer_list" in err[0] and "l0" in err[0]
        return
    rows = [(r["rank"], r["iteration"], r["op"]) for r in _rows(tmp_path)]
    assert len(rows) == len(set(rows))


def test_moe_section_without_any_moe_layer_is_refused(tmp_path, capsys):
    # docs/workloads.md: every n-th layer is MoE (layers n-1, 2n-1, ...): with n = 9 and 4 layers there is none, so
    # model.moe and parallelism.ep are options the run cannot honour -> exit 2 naming model.moe.every.
    rc, err = _cli(["run", "gpu_cluster:servers=2,gpus_per_server=4", _d("moe_every_beyond_layers.yaml"),
                    "--backend", "analytic", "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    assert rc == 2 and len(err) == 1 and "model.moe.every" in err[0]


@pytest.mark.parametrize("workload", ["aicb_count0.csv", "micro0.txt", "chakra_metadata_only"])
def test_an_imported_job_without_operations_is_a_one_line_error(tmp_path, capsys, workload):
    # aicb_count0.csv: its one all_reduce row has count 0; micro0.txt: SimAI MICRO of a 0-byte all-reduce;
    # chakra_metadata_only/: 4 ranks of one METADATA_NODE each.  Nothing to simulate: exit 2, one line naming
    # the file (as a netsim workload with nothing in it is refused).
    rc, err = _cli(["run", _d("star4.yaml"), _d(workload), "--backend", "flow", "--out", tmp_path, "--quiet",
                    "--no-trace"], capsys)
    assert rc == 2 and len(err) == 1 and workload in err[0]


# Fixed (trialfix): flow and analytic capped the WIRE rate at 42 Gb/s (2,000,404 / 1,999,017 ns, +4.4 %, the
# header share 62/1438); with the cap in wire bits (HostCost.wire_cap_bps) they give 1,918,398 / 1,916,892 ns.
@pytest.mark.parametrize("backend", ["packet", "flow", "analytic"])
def test_kernel_tcp_cap_is_on_payload_bytes_on_every_backend(tmp_path, capsys, backend):
    # netsim.hoststack: tcp_cpu_ns_per_byte = 8/42 ns per byte the CPU handles (Cai et al.'s 42 Gb/s goodput per
    # core); its own closed form HostStack.message_time_ns = 10 us + size * 8 / 42e9 on the payload.  One 10 MB
    # h0 -> h4 flow over 2 x 1 us, 100G links: 10 us + 1,904,762 ns + 2 us = 1,916,762 ns (+ < 0.1 % of packet
    # serialisation).  The packet backend gives 1,918,280; flow and analytic charge the 62-byte headers too.
    from netsim.hoststack import HostStack
    rc, _ = _cli(["flows", _d("inc4.yaml"), _d("one10.csv"), "--backend", backend, "--cc", "cubic", "--set",
                  "host_stack=on", "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    assert rc == 0
    expect_ns = HostStack().message_time_ns("tcp", 10_000_000, 100e9) + 2_000
    (row,) = _rows(tmp_path, "fct.csv")
    assert int(row["fct_ns"]) == pytest.approx(expect_ns, rel=0.01)


def test_repeated_straggler_of_one_rank_cannot_pass_the_factor_bound(tmp_path, capsys):
    # simai_data_compute.txt: DATA, one row of 1 + 2 + 3 ms compute and a 1000 B all-reduce (6.012 ms).  docs/whatif.md:
    # 0 < FACTOR <= 10^4 (MAX_STRAGGLER_FACTOR: "a rank 10^4 x slower is a stopped rank").  Two flags for one
    # rank are either an error naming the rank, or their product is held to the same bound.
    rc, err = _cli(["run", _d("star4.yaml"), _d("simai_data_compute.txt"), "--backend", "analytic", "--out",
                    tmp_path, "--quiet", "--no-trace", "--straggler", "1=10000", "--straggler", "1=10000"], capsys)
    assert rc == 2 and len(err) == 1 and "--straggler" in err[0]


@pytest.mark.parametrize("setting", ["jitter_cv=0.5", "straggler_factor=3"])
def test_a_variability_setting_that_switches_nothing_on_is_refused(tmp_path, capsys, setting):
    # docs/workloads.md: jitter_cv is the CV of the `jitter` law (none by default); straggler_factor applies to
    # the straggler_rate share of ops (0 by default).  Given alone, the run is the deterministic one: an option
    # the run does not honour -> exit 2, one line naming the key and the switch it needs (jitter /
    # straggler_rate).  (Measured the same for straggler_factor=3: 6.012 ms, no 'variability' block.)
    rc, err = _cli(["run", _d("star4.yaml"), _d("simai_data_compute.txt"), "--backend", "analytic", "--out",
                    tmp_path, "--quiet", "--no-trace", "--variability", setting], capsys)
    assert rc == 2 and len(err) == 1 and setting.split("=")[0] in err[0]


def test_gpu_map_naming_a_switch_is_refused_at_the_map(tmp_path, capsys):
    # gpu_map_with_switch.txt: G3, G2, sw, G0 (rank 2 on the switch).  A netsim workload's placement.gpus with
    # 'sw' is refused naming placement.gpus and the value; the importer option should be refused as precisely.
    rc, err = _cli(["run", _d("star4.yaml"), _d("simai_data_compute.txt"), "--backend", "analytic", "--out",
                    tmp_path, "--quiet", "--no-trace", "--workload-set",
                    "gpu_map=" + _d("gpu_map_with_switch.txt")], capsys)
    assert rc == 2 and len(err) == 1
    assert ("gpu_map" in err[0] or "gpu_map_with_switch.txt" in err[0]) and "'sw'" in err[0]


def test_simai_size_beyond_2p53_names_file_line_and_field(tmp_path, capsys):
    # simai_size_2p60.txt line 3: fwd_bytes = 1152921504606846976 (2^60) on a TP group of 2; netsim's sizes stop at
    # 2^53 (docs/topology.md, flow files).  The importer should say so for the row: file, line 3, fwd_bytes.
    rc, err = _cli(["run", _d("star4.yaml"), _d("simai_size_2p60.txt"), "--backend", "analytic", "--out", tmp_path,
                    "--quiet", "--no-trace"], capsys)
    assert rc == 2 and len(err) == 1
    assert "simai_size_2p60.txt" in err[0] and "line 3" in err[0] and "fwd_bytes" in err[0]


@pytest.mark.parametrize("backend", ["packet", "flow"])
def test_hpcc_fct_of_a_run_with_a_self_send(tmp_path, capsys, backend):
    # docs/topology.md: a row with src == dst is a self-send, a local copy every backend completes at once (FCT 0).
    # fct.txt (HPCC's format) is derived from fct.csv; the self-send either gets its zero line or is left out
    # with a note -- the h1 -> h4 line must be there.
    rc, err = _cli(["flows", _d("inc4.yaml"), _d("self_send.csv"), "--backend", backend, "--out", tmp_path,
                    "--quiet", "--no-trace", "--hpcc-fct"], capsys)
    assert rc == 0, err
    with open(os.path.join(tmp_path, "fct.txt")) as f:
        lines = [ln.split() for ln in f if ln.strip()]
    assert any(int(ln[4]) == 1_000_000 and int(ln[6]) > 0 for ln in lines)


def test_bisection_of_an_odd_endpoint_count_splits_every_endpoint(capsys):
    # hpcc_3hosts_topology.txt: hosts 0, 1, 2 on switch 3 at 100, 40 and 25 Gbps.  Max flow by hand: {0} -> {1, 2}
    # = min(100, 40 + 25) = 65 Gbps; {0, 1} -> {2} = 25 Gbps.  40 Gbps (0 -> 1 alone) is neither bisection.
    rc = main(["topo", "show", _d("hpcc_3hosts_topology.txt"), "--json"])
    assert rc in (0, None)
    bis = json.loads(capsys.readouterr().out)["bisection_bps"]
    assert bis in (65e9, 25e9)


@pytest.mark.parametrize("cc, param", [("dcqcn", "hpcc.eta=0.5"), ("none", "dcqcn.g=0.5")])
def test_cc_param_of_an_algorithm_the_run_never_uses_is_refused(tmp_path, capsys, cc, param):
    # docs/packet.md: `--cc-param dcqcn.g=...` applies to the named algorithm -- in `netsim flows` a row's cc column
    # may pick it; in `netsim run` every flow runs --cc, so a parameter of another algorithm is an option the run
    # cannot honour: exit 2, one line naming --cc-param and the algorithm.  (--cc none --cc-param g=0.5 is refused.)
    rc, err = _cli(["run", _d("star4.yaml"), _d("dp4.yaml"), "--backend", "flow", "--cc", cc, "--cc-param", param,
                    "--out", tmp_path, "--quiet", "--no-trace"], capsys)
    assert rc == 2 and len(err) == 1 and "--cc-param" in err[0] and param.split(".")[0] in err[0]


def test_node_defaults_for_an_unknown_kind_is_refused(capsys):
    # docs/topology.md: node_defaults is "per node kind"; kinds are gpu, host, nic, nvswitch, pcie_switch, switch.
    # A misspelt attribute *name* is an error naming the closest one; a misspelt kind should be too.
    rc, err = _cli(["topo", "validate", _d("node_defaults_typo.yaml")], capsys)
    assert rc == 2 and len(err) == 1 and "node_defaults" in err[0] and "swich" in err[0]
