"""``netsim export chakra`` / ``hpcc-flows`` and ``netsim run`` on imported jobs, through the CLI."""
import json
import os

from netsim.cli import main
from netsim.flowfile import load_flows
from netsim.topology import load_topology

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BERT = os.path.join(ROOT, "workloads", "bert-large-small.yaml")
TOPO = os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml")


def test_export_then_run_matches_the_yaml_run(tmp_path, capsys):
    et = tmp_path / "et"
    assert main(["export", "chakra", BERT, "--out", str(et), "--quiet"]) == 0
    assert main(["run", TOPO, BERT, "--out", str(tmp_path / "a"), "--backend", "analytic", "--quiet"]) == 0
    assert main(["run", TOPO, str(et), "--out", str(tmp_path / "b"), "--backend", "analytic", "--quiet",
                 "--no-trace"]) == 0
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert a["iteration_time_s"] == b["iteration_time_s"] and b["samples_per_s"] is None
    # re-export of the imported job writes the same traces byte for byte
    assert main(["export", "chakra", str(et), "--out", str(tmp_path / "et2"), "--quiet",
                 "--name", "bert-large-small"]) == 0
    for f in sorted(os.listdir(et)):
        if f.endswith(".et"):
            assert (et / f).read_bytes() == (tmp_path / "et2" / f).read_bytes(), f


def test_bad_format_flag_and_bad_trace_exit_2_with_one_line(tmp_path, capsys):
    rc = main(["run", TOPO, BERT, "--out", str(tmp_path / "o"), "--workload-format", "astra"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--workload-format" in err and "'astra'" in err
    (tmp_path / "t.0.et").write_bytes(b"\x05ab")
    rc = main(["run", TOPO, str(tmp_path / "t"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "t.0.et" in err and "message 0" in err


def test_hpcc_flow_txt_export_reads_back(tmp_path):
    topo = os.path.join(ROOT, "topologies", "hpcc_small", "topology.txt")
    flows = os.path.join(ROOT, "topologies", "hpcc_small", "flow.txt")
    assert main(["flows", topo, flows, "--out", str(tmp_path / "r"), "--backend", "analytic", "--quiet"]) == 0
    out = tmp_path / "flow.txt"
    assert main(["export", "hpcc-flows", str(tmp_path / "r"), "--out", str(out), "--quiet"]) == 0
    g = load_topology(topo)
    got = sorted((f.src, f.dst, f.size_bytes, f.start_ns) for f in load_flows(str(out), g))
    want = sorted((f.src, f.dst, f.size_bytes, f.start_ns) for f in load_flows(flows, g))
    assert got == want


def test_whatif_applies_to_an_imported_job_as_to_the_original(tmp_path):
    et = tmp_path / "et"
    assert main(["export", "chakra", BERT, "--out", str(et), "--quiet"]) == 0
    times = []
    for wl, d in ((BERT, "a"), (str(et), "b")):
        assert main(["run", TOPO, wl, "--out", str(tmp_path / d), "--backend", "analytic", "--quiet", "--no-trace",
                     "--straggler", "0=2", "--inject-delay", "allreduce@dp=10us"]) == 0
        times.append(json.loads((tmp_path / d / "summary.json").read_text())["iteration_time_s"])
    plain = tmp_path / "p"
    assert main(["run", TOPO, str(et), "--out", str(plain), "--backend", "analytic", "--quiet", "--no-trace"]) == 0
    assert times[0] == times[1] > json.loads((plain / "summary.json").read_text())["iteration_time_s"]
