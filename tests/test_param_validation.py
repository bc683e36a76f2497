"""One parameter validation for every backend, and the value-level checks of issue 15 §2.

Each case below was silently accepted, crashed or hung before: it must now exit 2 with one
stderr line naming the flag or file, the field and the value, on every backend alike. The
declarations themselves are checked too: every numeric parameter has bounds, and its default
passes them.
"""
from __future__ import annotations

import json
import os
import time

import pytest

from netsim.cli import main
from netsim.errors import InputError
from netsim.params import MAX_EXACT, MAX_RATE_BPS, Param, ParamTable, parse_exact_size, parse_priorities

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DUMBBELL = os.path.join(ROOT, "topologies", "dumbbell.yaml")
BACKENDS = ("packet", "flow", "analytic")
FLOWS = "src,dst,size_bytes,start_ns\nleft0,right0,100KB,0\nleft1,right1,64KB,0\n"
GPT = """\
model: {preset: gpt-1.5b, layers: 2, hidden: 128, heads: 4, seq_len: 64, vocab: 1024}
training: {global_batch: 4, micro_batch: 1}
parallelism: {tp: 2, dp: 2}
"""
MOE = """\
model: {preset: gpt-350m, layers: 2, hidden: 128, heads: 4, seq_len: 64, vocab: 1024,
        moe: {experts: 4, top_k: 2, every: 2}}
training: {global_batch: 8, micro_batch: 2}
parallelism: {dp: 4, ep: 4}
"""
WL_TOPO = "gpu_cluster:servers=2,gpus_per_server=2"


def _write(folder, name, text):
    path = os.path.join(str(folder), name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _error_line(capsys, argv) -> str:
    """``netsim argv`` must exit 2 with exactly one stderr line and no traceback; returns the line."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _flows(tmp_path, backend, *extra, topo=DUMBBELL):
    return ["flows", topo, _write(tmp_path, "f.csv", FLOWS), "--out", tmp_path / "out", "--backend", backend,
            "--quiet", "--no-trace", *extra]


def _all_tables():
    from netsim.backends.analytic import ANALYTIC_PARAMS
    from netsim.backends.flow.settings import FLOW_PARAMS
    from netsim.network.params import SIM_PARAMS
    from netsim.hoststack import HOST_PARAMS
    from netsim.transport.cc.base import REGISTRY
    from netsim.transport.cc.config import _load_all
    _load_all()
    return [SIM_PARAMS, FLOW_PARAMS, ANALYTIC_PARAMS, HOST_PARAMS] + [c.PARAMS for _, c in sorted(REGISTRY.items())]


NUMERIC = [(t.title, p) for t in _all_tables() for p in t if p.kind in ("int", "float", "size", "time", "rate")]


# -- the declarations ------------------------------------------------------------------------------
@pytest.mark.parametrize("title,p", NUMERIC, ids=[f"{t}.{p.name}" for t, p in NUMERIC])
def test_every_numeric_param_rejects_non_finite_and_out_of_bounds(title, p):
    lo, hi = p.bounds()
    assert lo <= hi <= (MAX_RATE_BPS if p.kind == "rate" else MAX_EXACT)
    if p.default is not None:
        assert lo <= p.parse(p.default) <= hi
    for bad in ("nan", "inf", "-inf", float("nan"), float("inf"), "1/0", True, [1], str(int(hi) * 2 + 1)):
        with pytest.raises(InputError):
            p.parse(bad)


def test_a_declaration_without_bounds_or_with_a_bad_default_is_refused():
    with pytest.raises(ValueError, match="minimum"):
        ParamTable("t", [Param("x", 1.0, "float", "doc", "src")])
    with pytest.raises(ValueError, match="default"):
        ParamTable("t", [Param("p", 2.0, "float", "doc", "src", minimum=0, maximum=1)])


def test_exact_sizes_and_integers():
    # 2^53 + 1 went through a float and came back as 2^53
    assert parse_exact_size(9007199254740993) == 9007199254740993
    assert parse_exact_size("9007199254740993") == 9007199254740993
    assert parse_exact_size("1.5KiB") == 1536 and parse_exact_size("8b") == 1 and parse_exact_size("0.001MB") == 1000
    for bad in (2.5, "2.5", "1b", "-1", "1.5B"):
        with pytest.raises(ValueError):
            parse_exact_size(bad)
    size = Param("s_bytes", 0, "size", "d", "s")
    with pytest.raises(InputError, match="out of range"):
        size.parse(MAX_EXACT + 1)
    count = Param("n", 1, "int", "d", "s", minimum=1)
    assert count.parse("9007199254740991") == 9007199254740991   # 2^53 - 1, exact
    for bad in ("1e300", "2.5", 2.5, "\u00b9", float("inf"), "0"):
        with pytest.raises(InputError):
            count.parse(bad)
    assert parse_priorities("4,3;3") == "3,4" and parse_priorities([0, 7]) == "0,7"
    for bad in ("a,b", "8", "-1", "\u00b3"):
        with pytest.raises(ValueError):
            parse_priorities(bad)


# -- --set, --cc-param, node attributes: every backend ---------------------------------------------
SET_CASES = ["buffer_bytes=abc", "buffer_bytes=-1", "ecn_pmax=2", "lossless_priorities=a,b", "ecn_pmax=nan",
             "buffer_alpha=nan", "host.tcp_cpu_ns_per_byte=nan", "initial_rto_rtts=nan", "initial_rto_rtts=inf",
             "buffer_bytes=2.5", "ecn_kmin_bytes.3=inf", "mtu_bytes=1e400"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("assignment", SET_CASES)
def test_set_is_checked_alike_on_every_backend(tmp_path, capsys, backend, assignment):
    line = _error_line(capsys, _flows(tmp_path, backend, "--set", assignment))
    key, value = assignment.split("=")
    assert "--set" in line and key.removeprefix("host.") in line and repr(value) in line, line


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cc,assignment", [("dcqcn", "g=nan"), ("dctcp", "g=nan"), ("dcqcn", "g=1/0"),
                                           ("cubic", "c=nan"), ("cubic", "c=inf"), ("dcqcn", "rai_bps=0")])
def test_cc_param_is_checked_alike_on_every_backend(tmp_path, capsys, backend, cc, assignment):
    line = _error_line(capsys, _flows(tmp_path, backend, "--cc", cc, "--cc-param", assignment))
    assert "--cc-param" in line and assignment.split("=")[0] in line, line


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("attr", ["scheduler: -0.5", "ecn_pmax: .nan", "buffer_bytes: -1", "pfc: maybe"])
def test_node_attributes_are_checked_on_every_backend_naming_the_file(tmp_path, capsys, backend, attr):
    with open(DUMBBELL, encoding="utf-8") as fh:
        text = fh.read().replace("{name: switch_left, kind: switch}", "{name: switch_left, kind: switch, %s}" % attr)
    topo = _write(tmp_path, "t.yaml", text)
    line = _error_line(capsys, _flows(tmp_path, backend, topo=topo))
    assert topo in line and "switch_left" in line and attr.split(":")[0] in line, line


def test_a_valid_set_still_runs_on_every_backend(tmp_path, capsys):
    """Valid values run where the backend models them; flow and analytic reject buffer_bytes (netsim/cli/args.py:
    an option a backend cannot honour exits 2 rather than being silently ignored)."""
    for backend in BACKENDS:
        argv = [str(a) for a in _flows(tmp_path, backend, "--set", "lossless_priorities=4,3",
                                       "--set", "ecn_pmax=1/4", "--set", "buffer_bytes=16MB")]
        if backend == "packet":
            assert main(argv) == 0
        else:
            assert main(argv) == 2 and f"--backend {backend} cannot honour it" in capsys.readouterr().err


# -- what-if flags, workloads, builders, topologies, failed flows ----------------------------------
@pytest.mark.parametrize("flag,value", [("--straggler", "0=inf"), ("--straggler", "0=1e300"),
                                        ("--straggler", "\u00b9=2"), ("--degrade-link", "s0.nic0:leaf0=inf"),
                                        ("--degrade-link", "s0.nic0:leaf0=nan@1us"),
                                        ("--inject-delay", "allreduce@dp=1e290s")])
def test_whatif_values(tmp_path, capsys, flag, value):
    wl = _write(tmp_path, "wl.yaml", GPT)
    line = _error_line(capsys, ["run", WL_TOPO, wl, "--out", tmp_path / "o", "--backend", "analytic", "--quiet",
                                "--no-trace", flag, value])
    assert flag in line and repr(value.split("=")[-1].split("@")[0]) in line or value.split("=")[0] in line, line


WL_CASES = [(GPT, "collectives: {dp: {chunk_bytes: 2.5}}", "chunk_bytes"),
            (GPT, "collectives: {dp: {chunk_bytes: 1}}", "chunk_bytes"),
            (GPT.replace("dp: 2}", "dp: 2, bucket_bytes: 9007199254740993}"), "", "bucket_bytes"),
            (GPT, "compute: {optimizer_bytes_per_param: .inf}", "optimizer_bytes_per_param"),
            (GPT.replace("vocab: 1024}", "vocab: 1024, ffn_hidden: .inf}"), "", "ffn_hidden"),
            (GPT, "compute: {peak_flops: .inf}", "peak_flops"),
            (MOE.replace("every: 2}", "every: 2, skew_decay_iterations: .nan}"), "", "skew_decay_iterations")]


@pytest.mark.parametrize("doc,extra,field", WL_CASES, ids=[c[2] + str(i) for i, c in enumerate(WL_CASES)])
def test_workload_values(tmp_path, capsys, doc, extra, field):
    wl = _write(tmp_path, "wl.yaml", doc + extra + "\n")
    line = _error_line(capsys, ["run", WL_TOPO, wl, "--out", tmp_path / "o", "--backend", "analytic", "--quiet",
                                "--no-trace"])
    assert wl in line and field in line, line


@pytest.mark.parametrize("expr", ["leaf_spine:leaves=99999999999", "gpu_cluster:servers=18446744073709551616",
                                  "fat_tree:k=400", "gpu_cluster:spines=0"])
def test_builder_sizes_are_bounded_before_building(capsys, expr):
    t0 = time.perf_counter()
    line = _error_line(capsys, ["topo", "validate", expr])
    assert time.perf_counter() - t0 < 5 and expr in line, line


def test_estimated_nodes_match_the_builders():
    from netsim.topology import load_topology
    from netsim.topology.buildspec import estimated_nodes, parse_value
    exact = ["dumbbell:n_left=3,n_right=1", "leaf_spine:leaves=3,spines=2,hosts_per_leaf=5", "fat_tree:k=6"]
    upper = ["gpu_server:gpus=8,gpus_per_nic=2", "gpu_cluster:servers=3,gpus_per_server=4,gpus_per_nic=2",
             "two_clusters:servers_a=2,servers_b=3,gpus_per_server=2"]
    for expr in exact + upper:
        name, _, rest = expr.partition(":")
        args = {k: parse_value(v) for k, v in (a.split("=") for a in rest.split(","))}
        n = load_topology(expr).number_of_nodes()
        est = estimated_nodes(name, args)
        assert est == n if expr in exact else n <= est <= 2 * n, (expr, n, est)


def test_topo_validate_rejects_a_disconnected_file(tmp_path, capsys):
    text = ("nodes: [{name: a, kind: host}, {name: b, kind: host}, {name: c, kind: host}, {name: d, kind: host}]\n"
            "links: [{src: a, dst: b, rate_bps: 1Gbps, delay_ns: 1us, kind: ethernet},\n"
            "        {src: c, dst: d, rate_bps: 1Gbps, delay_ns: 1us, kind: ethernet}]\n")
    path = _write(tmp_path, "two.yaml", text)
    line = _error_line(capsys, ["topo", "validate", path])
    assert path in line and "not connected" in line, line


def test_failed_flows_are_not_a_quiet_exit_0(tmp_path, capsys):
    flows = _write(tmp_path, "f.csv", "src,dst,size_bytes,start_ns\nh0,h2,100KB,0\n")
    out = tmp_path / "o"
    line = _error_line(capsys, ["flows", "leaf_spine:leaves=2,spines=1,hosts_per_leaf=2,host_rate_bps=10Mbps", flows,
                                "--out", out, "--quiet", "--no-trace", "--set", "min_rto_ns=10us",
                                "--set", "max_rto_ns=10us", "--set", "max_timeouts=0"])
    with open(out / "summary.json") as fh:
        summary = json.load(fh)
    assert summary["failed"] == 1 and summary["completed"] == 0
    assert summary["status"].startswith("failed") and "0 of 1" in line, line


def test_flow_csv_sizes_are_exact(tmp_path, capsys):
    """2^53 + 1 bytes used to be rounded to 2^53 (the limit) and simulated."""
    flows = _write(tmp_path, "big.csv", "src,dst,size_bytes,start_ns\nleft0,right0,9007199254740993,0\n")
    line = _error_line(capsys, ["flows", DUMBBELL, flows, "--out", tmp_path / "o", "--backend", "analytic",
                                "--quiet", "--no-trace"])
    assert flows in line and "size_bytes" in line and "9007199254740993" in line, line


def test_red_kmin_above_kmax_is_an_error(tmp_path, capsys):
    """Regression (issue #14, trial): Kmin 500 KB > Kmax 100 KB ran as step marking at Kmin."""
    from netsim.cli import main
    from netsim.network.params import node_overrides, resolve_params
    with pytest.raises(InputError, match=r"ecn_kmin_bytes/ecn_kmax_bytes: RED needs Kmin <= Kmax"):
        resolve_params({"ecn_kmin_bytes": "500KB", "ecn_kmax_bytes": "100KB"})
    with pytest.raises(InputError, match=r"node sw, attributes ecn_kmin_bytes.3/ecn_kmax_bytes.3"):
        node_overrides({"ecn_kmin_bytes.3": 9000, "ecn_kmax_bytes.3": 8000}, node="sw")
    assert resolve_params({"ecn_kmin_bytes": "100KB", "ecn_kmax_bytes": "100KB"})["ecn_kmin_bytes"] == 100_000
    assert resolve_params({"ecn_kmin_bytes": "500KB"})["ecn_kmin_bytes"] == 500_000   # Kmax from the CC/defaults
    f = tmp_path / "f.csv"
    f.write_text("src,dst,size_bytes,start_ns\nleft0,right0,100KB,0\n")
    assert main(["flows", "dumbbell:n_left=1,n_right=1", str(f), "--out", str(tmp_path / "o"), "--cc", "dctcp",
                 "--set", "ecn_kmin_bytes=500KB", "--set", "ecn_kmax_bytes=100KB"]) == 2
    assert "RED needs Kmin <= Kmax" in capsys.readouterr().err
