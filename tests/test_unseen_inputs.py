"""Inputs the shipped examples never exercise: odd topologies, hand-written flow lists, bad values.

Three parts:

* bad input gives exit status 2 and one stderr line naming the file, field
  and value (no traceback, no silent default) — cases that used to crash or
  pass silently (non-finite numbers, ``args:`` not a mapping, a ``null`` node
  name, an argument a builder ignores, a 10^30-byte flow);
* invariants that hold whatever the input, checked on topologies and flow
  lists not in ``topologies/``: FCT >= ideal FCT, FCT = end - start, bytes in
  ``fct.csv`` = bytes delivered, the breakdown sums to the iteration time,
  the iteration time is the mean of the per-iteration times;
* the same inputs and seed give byte-identical files, and the ``priority``
  column means the same on every backend.
"""
from __future__ import annotations

import filecmp
import json
import math
import os
import textwrap

import pandas as pd
import pytest

from netsim.cli import main
from netsim.units import UnitError, parse_rate, parse_size, parse_time_ns

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WL = os.path.join(ROOT, "workloads")
SMALL_GPT = os.path.join(WL, "gpt-1.5b-t2p2d2-small.yaml")
SMALL_MOE = os.path.join(WL, "gpt-moe-350m-small.yaml")
HOSTS4 = "leaf_spine:leaves=2,spines=1,hosts_per_leaf=2"
#: 8 GPUs, 2 per NIC, on 4 rails behind 2 spines at 2:1 (none of this is in topologies/)
RAIL8 = "gpu_cluster:servers=2,gpus_per_server=4,gpus_per_nic=2,fabric=rail,servers_per_leaf=1,oversubscription=2"

ODD_TOPO = """\
name: odd names
link_defaults: {kind: ethernet, delay_ns: 2.5us}
nodes:
  - {name: "host A", kind: host}
  - {name: "host.b", kind: host}
  - {name: "h,c", kind: host}
  - {name: "sw 1.0", kind: switch}
links:
  - {src: "host A", dst: "sw 1.0", rate_bps: "100Gbps"}
  - {src: "host.b", dst: "sw 1.0", rate_bps: 25Gbps, delay_ns: 300ns}
  - {src: "h,c", dst: "sw 1.0", rate_bps: 40e9}
"""
ODD_FLOWS = """\
src,dst,size_bytes,start_ns,tag
host A,host.b,1MB,20us,late
"h,c",host A,64KB,10us,mid
host.b,host A,1,5us,one-byte
host A,"h,c",3MB,0,first
"""
TWO_HOSTS = "nodes: [{name: a, kind: host}, {name: b, kind: host}]\n"
LINK_AB = "links: [{src: a, dst: b, rate_bps: 1Gbps, delay_ns: 1us, kind: ethernet}]\n"


def _write(folder, name: str, text: str) -> str:
    path = os.path.join(str(folder), name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(textwrap.dedent(text))
    return path


def _error_line(capsys, argv: list[str]) -> str:
    """Run ``netsim argv``; it must exit 2 with exactly one stderr line and no traceback."""
    try:
        rc = main(argv)
    except SystemExit as exc:   # argparse errors
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- bad input: one line, the file, field and value ---------------------------------------------------------------
@pytest.mark.parametrize("value", ["1e400", "1e999ms", float("inf"), float("nan"), "-1e400"])
def test_unit_parsers_reject_non_finite_values(value):
    for parser in (parse_rate, parse_size, parse_time_ns):
        with pytest.raises(UnitError):
            parser(value)


TOPO_CASES = {
    # builder values that used to raise OverflowError or be accepted as an infinite rate
    "delay_inf": ("leaf_spine:delay_ns=1e400", ["argument delay_ns", "finite"]),
    "rate_inf": ("leaf_spine:host_rate_bps=1e400Gbps", ["argument host_rate_bps", "finite"]),
    # an error among several arguments names the one at fault, not the whole dict
    "nic_kinds": ("gpu_cluster:servers=2,nic_kinds=roce|foo", ["argument nic_kinds", "'foo'", "infiniband"]),
    "rates_count": ("gpu_cluster:servers=2,nic_rates_bps=400Gbps|200Gbps|100Gbps",
                    ["argument nic_rates_bps", "1 or 2 values"]),
    "negative_delay": ("gpu_cluster:servers=2,nic_rates_bps=1Gbps,delay_ns=-1", ["argument delay_ns", "-1"]),
    # one leaf and no spines: oversubscription / fabric rate would be silently ignored
    "oversub_no_spine": ("gpu_cluster:servers=4,oversubscription=2", ["argument oversubscription", "spines"]),
    "fabric_no_spine": ("gpu_cluster:servers=1,fabric_rate_bps=100Gbps", ["argument fabric_rate_bps", "spines"]),
    "odd_k": ("fat_tree:k=5", ["argument k", "even"]),
}


@pytest.mark.parametrize("case", sorted(TOPO_CASES))
def test_bad_builder_expression_names_the_argument(case, capsys):
    spec, needles = TOPO_CASES[case]
    line = _error_line(capsys, ["topo", "validate", spec])
    assert spec in line
    for needle in needles:
        assert needle in line, line
    assert "got {" not in line, line   # not the whole argument dict


YAML_CASES = {
    "args_list": ("builder: gpu_cluster\nargs: [1, 2]\n", ["args", "mapping"]),
    "null_name": ("nodes: [{name: null, kind: host}, {name: b, kind: host}]\n"
                  "links: [{src: b, dst: b2, rate_bps: 1Gbps, delay_ns: 1us, kind: ethernet}]\n",
                  ["nodes[0], field name", "null"]),
    "empty_name": ("nodes: [{name: '', kind: host}, {name: b, kind: host}]\n" + LINK_AB, ["nodes[0], field name"]),
    "null_src": (TWO_HOSTS + "links: [{src: ~, dst: b, rate_bps: 1Gbps, delay_ns: 1us, kind: ethernet}]\n",
                 ["links[0], field src"]),
    "link_defaults_list": ("link_defaults: [ethernet]\n" + TWO_HOSTS + LINK_AB, ["link_defaults", "mapping"]),
    "node_defaults_scalar": ("node_defaults: {host: 5}\n" + TWO_HOSTS + LINK_AB, ["node_defaults, field host"]),
    "nodes_scalar": ("nodes: 5\n" + LINK_AB, ["nodes must be a list", "got 5"]),
    "links_mapping": (TWO_HOSTS + "links: {src: a}\n", ["links must be a list"]),
    "node_attrs_scalar": ("nodes: {a: 5, b: {kind: host}}\n" + LINK_AB, ["node a", "got 5"]),
    "rate_inf": (TWO_HOSTS + "links: [{src: a, dst: b, rate_bps: .inf, delay_ns: 1us, kind: ethernet}]\n",
                 ["link a -- b, field rate_bps"]),
}


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_bad_yaml_topology_one_line(case, tmp_path, capsys):
    text, needles = YAML_CASES[case]
    path = _write(tmp_path, f"{case}.yaml", text)
    line = _error_line(capsys, ["topo", "validate", path])
    assert path in line
    for needle in needles:
        assert needle in line, line


FLOW_CASES = {
    "start_inf": ("src,dst,size_bytes,start_ns\nh0,h2,100,1e400\n", ["line 2, field start_ns", "1e400"]),
    "size_1e30": ("src,dst,size_bytes,start_ns\nh0,h2,1e30,0\n", ["line 2, field size_bytes", "too large"]),
    "size_zero_bits": ("src,dst,size_bytes,start_ns\nh0,h2,1b,0\n", ["line 2, field size_bytes"]),
    "switch_end": ("src,dst,size_bytes,start_ns\nh0,leaf1,1,0\n", ["field dst", "'leaf1'", "gpu or host"]),
    "priority": ("src,dst,size_bytes,start_ns,priority\nh0,h2,1,0,8\n", ["field priority", "0..7"]),
    "hpcc_count": ("2\n0 1 3 100 1000 2.0\n", ["line 1", "1"]),
}


@pytest.mark.parametrize("case", sorted(FLOW_CASES))
def test_bad_flow_file_one_line(case, tmp_path, capsys):
    text, needles = FLOW_CASES[case]
    path = _write(tmp_path, f"{case}.csv", text)
    line = _error_line(capsys, ["flows", HOSTS4, path, "--out", str(tmp_path / "o"), "--backend", "analytic"])
    assert path in line
    for needle in needles:
        assert needle in line, line


def test_node_mtu_error_names_the_node(tmp_path, capsys):
    topo = _write(tmp_path, "mtu.yaml", "nodes: [{name: a, kind: host, mtu_bytes: 10}, {name: b, kind: host}]\n"
                  + LINK_AB)
    flows = _write(tmp_path, "f.csv", "src,dst,size_bytes,start_ns\na,b,10KB,0\n")
    line = _error_line(capsys, ["flows", topo, flows, "--out", str(tmp_path / "o"), "--backend", "packet"])
    assert "node a" in line and "mtu_bytes" in line and "10" in line


@pytest.mark.parametrize("topo, needle", [("fat_tree:k=4", "has 0"),
                                          ("gpu_cluster:servers=1,gpus_per_server=4", "has 4")])
def test_workload_on_too_few_gpus_names_both_counts(topo, needle, tmp_path, capsys):
    line = _error_line(capsys, ["run", topo, SMALL_GPT, "--backend", "analytic", "--out", str(tmp_path / "o")])
    assert "dp·tp·pp = 8" in line and needle in line


# -- invariants ---------------------------------------------------------------------------------------------------
def _check_fct(out_dir: str, delivered_key: str = "bytes_delivered") -> pd.DataFrame:
    """fct.csv against the invariants every backend promises; returns the table."""
    fct = pd.read_csv(os.path.join(out_dir, "fct.csv"), keep_default_na=False)
    summary = json.load(open(os.path.join(out_dir, "summary.json")))
    net = summary.get("network", summary)
    assert (fct.fct_ns >= fct.ideal_fct_ns - 1).all(), fct[fct.fct_ns < fct.ideal_fct_ns - 1]
    assert (fct.end_ns - fct.start_ns == fct.fct_ns).all()
    assert int(fct.size_bytes.sum()) == net[delivered_key]
    assert len(fct) == net["completed"] == net["flows"]
    return fct


@pytest.mark.parametrize("backend", ["packet", "flow", "analytic"])
def test_odd_names_and_unordered_flows(backend, tmp_path, capsys):
    topo = _write(tmp_path, "odd.yaml", ODD_TOPO)
    flows = _write(tmp_path, "odd.csv", ODD_FLOWS)
    out = str(tmp_path / "o")
    main(["flows", topo, flows, "--out", out, "--backend", backend, "--quiet", "--no-trace"])
    fct = _check_fct(out)
    assert sorted(fct.tag) == ["first", "late", "mid", "one-byte"]
    assert set(fct.src) | set(fct.dst) == {"host A", "host.b", "h,c"}
    # the 1-byte flow is alone on its path (done before "mid" uses sw -> host A): exactly its ideal time
    one = fct[fct.tag == "one-byte"].iloc[0]
    assert one.fct_ns == one.ideal_fct_ns
    # the start times are kept as written although the file is not sorted
    assert dict(zip(fct.tag, fct.start_ns)) == {"late": 20_000, "mid": 10_000, "one-byte": 5_000, "first": 0}


@pytest.mark.parametrize("backend", ["flow", "analytic"])
def test_huge_flows_stay_above_ideal(backend, tmp_path):
    flows = _write(tmp_path, "big.csv", "src,dst,size_bytes,start_ns\nh0,h2,1PB,0\nh1,h3,1e15,3\nh0,h3,9PB,5\n")
    out = str(tmp_path / "o")
    main(["flows", HOSTS4, flows, "--out", out, "--backend", backend, "--quiet", "--no-trace"])
    fct = _check_fct(out)
    assert sorted(fct.size_bytes) == [10**15, 10**15, 9 * 10**15]


def _summary(out_dir: str) -> dict:
    with open(os.path.join(out_dir, "summary.json")) as fh:
        return json.load(fh)


@pytest.mark.parametrize("backend, workload, sets, iterations", [
    ("analytic", SMALL_MOE, [], 3),
    ("flow", SMALL_GPT, ["parallelism.zero_stage=3", "parallelism.pp=1", "parallelism.dp=4"], 2),
    ("analytic", SMALL_GPT, ["parallelism.schedule=gpipe", "training.global_batch=16"], 1),
    ("packet", SMALL_GPT, ["parallelism.dp=1", "parallelism.tp=4", "parallelism.pp=2"], 1),
])
def test_training_invariants_on_rail_with_shared_nics(backend, workload, sets, iterations, tmp_path):
    out = str(tmp_path / "o")
    argv = ["run", RAIL8, workload, "--backend", backend, "--out", out, "--quiet", "--no-trace",
            "--iterations", str(iterations)]
    for s in sets:
        argv += ["--workload-set", s]
    main(argv)
    s = _summary(out)
    _check_fct(out)
    assert len(s["iteration_times_s"]) == iterations
    assert s["iteration_time_s"] == pytest.approx(sum(s["iteration_times_s"]) / iterations, rel=1e-9)
    # the breakdown sums to the iteration time (docs/run.md), to the ps the times are kept in
    assert sum(s["breakdown_s"].values()) == pytest.approx(s["iteration_time_s"], abs=2e-12)
    assert all(v >= 0 for v in s["breakdown_s"].values())
    for it in s["breakdown_iterations_s"]:
        assert sum(it.values()) == pytest.approx(s["iteration_times_s"][s["breakdown_iterations_s"].index(it)],
                                                 abs=2e-12)
    # every rank of the placement shows up in ops.csv; one traffic-matrix block per iteration
    ops = pd.read_csv(os.path.join(out, "ops.csv"))
    assert ops["rank"].nunique() == 8
    tm = pd.read_csv(os.path.join(out, "traffic_matrix.csv"))
    assert sorted(tm.iteration.unique()) == list(range(iterations))
    fct = pd.read_csv(os.path.join(out, "fct.csv"), keep_default_na=False)
    assert int(tm.bytes.sum()) == int(fct.size_bytes.sum())


@pytest.mark.parametrize("backend", ["packet", "flow", "analytic"])
def test_same_seed_byte_identical_on_new_topology(backend, tmp_path):
    """Two runs in folders of the same name (trace.json records it) give the same bytes in every file."""
    runs = []
    for k in ("a", "b"):
        out = str(tmp_path / k / "run")
        main(["run", RAIL8, SMALL_MOE, "--backend", backend, "--cc", "dcqcn", "--seed", "7", "--out", out,
              "--quiet", "--workload-set", "parallelism.dp=4", "--workload-set", "parallelism.ep=4",
              "--workload-set", "training.global_batch=8"])
        runs.append(out)
    names = sorted(os.listdir(runs[0]))
    assert names == sorted(os.listdir(runs[1])) and "fct.csv" in names and "trace.json" in names
    for name in names:
        if name == "summary.json":
            a, b = (_summary(r) for r in runs)
            strip = lambda d: {k: strip(v) if isinstance(v, dict) else v for k, v in d.items() if "wall" not in k}
            assert strip(a) == strip(b)
        else:
            assert filecmp.cmp(os.path.join(runs[0], name), os.path.join(runs[1], name), shallow=False), name


@pytest.mark.parametrize("cc, expected", [("none", 3), ("dcqcn", 3), ("cubic", 0), ("dctcp", 0)])
def test_priority_column_agrees_across_backends(cc, expected, tmp_path):
    """A flow without a priority gets roce_priority / tcp_priority by transport on every backend."""
    flows = _write(tmp_path, "f.csv", "src,dst,size_bytes,start_ns,priority\nh0,h2,10KB,0,\nh1,h3,10KB,0,5\n")
    prios = {}
    for backend in ("packet", "flow", "analytic"):
        out = str(tmp_path / backend)
        main(["flows", HOSTS4, flows, "--out", out, "--backend", backend, "--cc", cc, "--quiet", "--no-trace"])
        fct = _check_fct(out).sort_values("src")
        prios[backend] = list(fct.priority)
    assert prios["packet"] == [expected, 5]
    assert prios["flow"] == prios["packet"] and prios["analytic"] == prios["packet"]


def test_analytic_priority_follows_set(tmp_path):
    flows = _write(tmp_path, "f.csv", "src,dst,size_bytes,start_ns\nh0,h2,10KB,0\n")
    out = str(tmp_path / "o")
    main(["flows", HOSTS4, flows, "--out", out, "--backend", "analytic", "--set", "roce_priority=5", "--quiet"])
    assert list(_check_fct(out).priority) == [5]


@pytest.mark.parametrize("spec", [
    "fat_tree:k=6",
    "gpu_cluster:servers=4,gpus_per_server=2,gpus_per_nic=2,fabric=rail,oversubscription=3,servers_per_leaf=2",
    "gpu_cluster:servers=3,servers_per_leaf=1,spines=1,nic_rates_bps=400Gbps|200Gbps|100Gbps,nic_kinds=roce",
    "gpu_cluster:servers=2,nvswitch=false,gpus_per_server=3,gpus_per_nic=2",
    "gpu_server:gpus=4",
])
def test_topo_show_json_counts_match_the_graph(spec, capsys):
    from netsim.topology import load_topology
    g = load_topology(spec)
    main(["topo", "show", spec, "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert (shown["nodes"], shown["links"]) == (g.number_of_nodes(), g.number_of_edges())
    kinds: dict = {}
    for _, k in g.nodes(data="kind"):
        kinds[k] = kinds.get(k, 0) + 1
    assert shown["node_kinds"] == kinds
    assert sum(v["count"] for v in shown["link_kinds"].values()) == g.number_of_edges()
    assert shown["connected"] is True


@pytest.mark.parametrize("k", [4, 6])
def test_fat_tree_bisection_is_full(k, capsys):
    """A k-ary fat tree is rearrangeably non-blocking: bisection = hosts/2 x link rate."""
    main(["topo", "show", f"fat_tree:k={k},rate_bps=25Gbps", "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert shown["node_kinds"] == {"host": k**3 // 4, "switch": 5 * k * k // 4}
    assert shown["bisection_bps"] == pytest.approx(k**3 / 8 * 25e9)
