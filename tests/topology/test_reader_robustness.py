"""File readers on hostile input (issue 15 §2): exit status 2 and one stderr line through the real CLI.

Each case used to end in a traceback (superscripts, 1,000-deep YAML, a
128 KiB CSV field), a two-line message (a NUL byte in YAML), a silent wrong
answer (a size of 2**53 + 1 rounded to 2**53; node attributes the flow and
analytic backends ignored) or a message blaming the wrong thing (a flow
file's ``cc`` blamed on ``--cc``; node attributes without the file).
"""
from __future__ import annotations

import os

import pytest

from netsim.cli import main
from netsim.flowfile import MAX_FLOW_BYTES, load_flows
from netsim.topology import load_topology

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DUMBBELL = os.path.join(ROOT, "topologies", "dumbbell.yaml")
WORKLOAD = os.path.join(ROOT, "workloads", "gpt-1.5b-t2p2d2-small.yaml")
GPU8 = "gpu_cluster:servers=1,gpus_per_server=8"
HEAD = "src,dst,size_bytes,start_ns"

NODE_TOPO = """\
link_defaults: {kind: ethernet, delay_ns: 1us}
nodes:
  - {name: a, kind: host}
  - {name: b, kind: host}
  - {name: sw, kind: switch, %s}
links:
  - {src: a, dst: sw, rate_bps: 10Gbps}
  - {src: b, dst: sw, rate_bps: 10Gbps}
"""
_GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
<key id="k" for="node" attr.name="kind" attr.type="string"/>
<key id="ek" for="edge" attr.name="kind" attr.type="string"/>
<key id="r" for="edge" attr.name="rate_bps" attr.type="%s"/>
<key id="d" for="edge" attr.name="delay_ns" attr.type="double"/>
<graph edgedefault="undirected">
<node id="a"><data key="k">host</data></node><node id="b"><data key="k">%s</data></node>
<edge source="a" target="b"><data key="ek">ethernet</data>%s<data key="d">1</data></edge>
</graph></graphml>
"""


def one_line_error(capsys, argv) -> str:
    rc = main([a for a in argv])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, f"exit {rc}: {err}"
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


def _flows(tmp_path, text: str, name: str = "f.csv") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def _argv(role: str, path, tmp_path) -> list:
    """The command reading ``path`` as a topology, workload, sweep file or --cc-params-file."""
    out = str(tmp_path / "o")
    return {"topology": ["topo", "validate", str(path)],
            "workload": ["run", GPU8, str(path), "--out", out, "--backend", "analytic", "--quiet"],
            "sweep": ["sweep", str(path), "--out", out, "--dry-run"],
            "cc-params": ["flows", DUMBBELL, _flows(tmp_path, f"{HEAD}\nleft0,right0,1000,0\n"), "--out", out,
                          "--cc", "dcqcn", "--cc-params-file", str(path), "--quiet"]}[role]


def _deep_block(n: int) -> str:
    return "".join("  " * i + "k:\n" for i in range(n)) + "  " * n + "v: 1\n"


@pytest.mark.parametrize("text", [pytest.param(_deep_block(1000), marks=pytest.mark.slow),
                                  pytest.param("nodes: " + "[" * 1000 + "]" * 1000 + "\n", marks=pytest.mark.slow),
                                  _deep_block(80)], ids=["block-1000", "flow-1000", "block-80"])
@pytest.mark.parametrize("role", ["topology", "workload", "sweep", "cc-params"])
def test_deep_yaml(tmp_path, capsys, text, role):
    p = tmp_path / "deep.yaml"
    p.write_text(text, encoding="utf-8")
    line = one_line_error(capsys, _argv(role, p, tmp_path))
    assert "deep.yaml" in line and "nested deeper than 64 levels" in line


def test_1000_deep_topology_is_one_line(tmp_path, capsys):
    """PyYAML's composer runs out of stack (a 3,001-line RecursionError before): one line (~2 s)."""
    p = tmp_path / "deep.yaml"
    p.write_text(_deep_block(1000), encoding="utf-8")
    assert "nested deeper than 64 levels" in one_line_error(capsys, _argv("topology", p, tmp_path))


@pytest.mark.parametrize("role", ["topology", "workload", "sweep", "cc-params"])
def test_nul_byte_in_yaml(tmp_path, capsys, role):
    p = tmp_path / "nul.yaml"
    p.write_bytes(b"name: x\nnodes: []\x00\nlinks: []\n")
    line = one_line_error(capsys, _argv(role, p, tmp_path))
    assert "nul.yaml" in line and ("line 2: not valid YAML (unacceptable character #x0000)" in line
                                   or "NUL byte" in line)


def test_csv_field_over_128_kib(tmp_path, capsys):
    f = _flows(tmp_path, f"{HEAD},tag\nleft0,right0,1000,0,{'x' * 140_000}\n")
    line = one_line_error(capsys, ["flows", DUMBBELL, f, "--out", str(tmp_path / "o"), "--backend", "analytic"])
    assert "f.csv: line 2" in line and "131072" in line


@pytest.mark.parametrize("size, ok", [("9007199254740993", False), ("9007199254740992", True),
                                      ("9007199254740991", True), ("8TiB", True), ("1e99999999", False)])
def test_sizes_are_exact_integers(tmp_path, size, ok):
    g = load_topology(DUMBBELL)
    f = _flows(tmp_path, f"{HEAD}\nleft0,right0,{size},0\n")
    if ok:
        (spec,) = load_flows(f, g)
        assert spec.size_bytes == (int(size) if size.isdigit() else 8 * 2**40) <= MAX_FLOW_BYTES
    else:
        with pytest.raises(Exception, match="size_bytes") as exc:
            load_flows(f, g)
        assert size in str(exc.value)


def test_size_2_53_plus_1_through_the_cli(tmp_path, capsys):
    f = _flows(tmp_path, f"{HEAD}\nleft0,right0,9007199254740993,0\n")
    line = one_line_error(capsys, ["flows", DUMBBELL, f, "--out", str(tmp_path / "o"), "--backend", "analytic"])
    assert "line 2, field size_bytes" in line and "9007199254740993" in line and "2**53" in line


def test_start_times_are_exact(tmp_path):
    g = load_topology(DUMBBELL)
    # exact decimal arithmetic (a float would be a few ns off); starts stay within MAX_START_NS (2**53 ps)
    f = _flows(tmp_path, f"{HEAD}\nleft0,right0,1000,9007199.254739ms\nleft0,right0,1000,2.000000001s\n")
    assert [s.start_ns for s in load_flows(f, g)] == [9007199254739, 2000000001]


def test_flow_cc_column_is_blamed_on_the_file(tmp_path, capsys):
    f = _flows(tmp_path, f"{HEAD},cc\nleft0,right0,1000,0,dcqcn\nleft0,right0,1000,0,DCQCN\n")
    line = one_line_error(capsys, ["flows", DUMBBELL, f, "--out", str(tmp_path / "o"), "--backend", "analytic"])
    assert "f.csv: line 3, field cc" in line and "'DCQCN'" in line and "did you mean dcqcn" in line
    assert "--cc:" not in line


@pytest.mark.parametrize("attr, needle", [("scheduler: -0.5", "strict, dwrr"), ("ecn_pmax: 2", "<= 1"),
                                          ("pfc: maybe", "on/off"), ("lossless_priorities: a", "0..7"),
                                          ("buffer_alpha: abc", "number"), ("buffer_bytes: -1", "negative")])
@pytest.mark.parametrize("backend", ["flow", "analytic", "packet"])
def test_node_attribute_errors_name_the_file_on_every_backend(tmp_path, capsys, attr, needle, backend):
    topo = tmp_path / "topo.yaml"
    topo.write_text(NODE_TOPO % attr, encoding="utf-8")
    f = _flows(tmp_path, f"{HEAD}\na,b,1000,0\n")
    line = one_line_error(capsys, ["flows", str(topo), f, "--out", str(tmp_path / "o"), "--backend", backend])
    key = attr.split(":")[0]
    assert f"topo.yaml: node sw, field {key}" in line and needle in line


@pytest.mark.parametrize("rate_type, node_kind, rate, needle", [
    ("double", "switch", '<data key="r">abc</data>', "link a -- b, field rate_bps: not a GraphML double"),
    ("string", "switch", '<data key="r">fast</data>', "link a -- b, field rate_bps: bad unit string"),
    ("double", "switch", '<data key="r">NaN</data>', "field rate_bps: must be finite"),
    ("double", "switch", "", "missing field rate_bps"),
    ("complex", "switch", '<data key="r">1</data>', "key rate_bps: unknown GraphML attribute type"),
    ("double", "router", '<data key="r">1e9</data>', "node b, field kind"),
])
def test_graphml_oddities(tmp_path, capsys, rate_type, node_kind, rate, needle):
    p = tmp_path / "t.graphml"
    p.write_text(_GRAPHML % (rate_type, node_kind, rate), encoding="utf-8")
    line = one_line_error(capsys, ["topo", "validate", str(p)])
    assert "t.graphml" in line and needle in line


@pytest.mark.parametrize("name, text, needle", [
    ("topology.txt", "3 1 100000000\n2\n0 2 10Gbps 1000ns 0\n1 2 10Gbps 1000ns 0\n", "declares 100000000 links"),
    ("flow.txt", "100000000\n0 1 3 100 1000 2.0\n", "declares 100000000 flows"),
])
def test_huge_declared_counts_fail_at_once(tmp_path, capsys, name, text, needle):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    topo = os.path.join(ROOT, "topologies", "hpcc_small", "topology.txt")
    argv = (["topo", "validate", str(p)] if name == "topology.txt" else
            ["flows", topo, str(p), "--out", str(tmp_path / "o"), "--backend", "analytic"])
    line = one_line_error(capsys, argv)
    assert needle in line and "holds" in line


@pytest.mark.parametrize("start", ["0.5", "1.5ns", "1ps", "0.0000000005s"])
def test_start_below_whole_ns_is_refused_like_fractional_sizes(tmp_path, capsys, start):
    # 0.5 ns used to become 0 silently while 0.5 bytes was refused
    f = _flows(tmp_path, f"{HEAD}\nleft0,right0,1000,0\nleft0,right0,1000,{start}\n")
    line = one_line_error(capsys, ["flows", DUMBBELL, f, "--out", str(tmp_path / "o"), "--backend", "analytic"])
    assert "line 3, field start_ns" in line and "not a whole number of ns" in line and repr(start) in line


def test_hpcc_start_seconds_below_whole_ns_are_refused(tmp_path):
    from netsim.errors import InputError
    g = load_topology(DUMBBELL)
    f = tmp_path / "flow.txt"
    f.write_text("1\nleft0 right0 3 100 1000 2.0000000005\n", encoding="utf-8")
    with pytest.raises(InputError, match="field start_s.*not a whole number of ns"):
        load_flows(str(f), g)
