"""HPCC's own ``topology.txt`` and ``flow.txt`` read as HPCC ships them (``simulation/mix``).

The shipped ``mix/topology.txt`` declares 65 links and then holds 256 link
lines and a five-line help text; ``mix/flow.txt`` declares 2 flows and then
holds 256 flow lines and a help text. ns-3 reads exactly the declared counts.
The files below are built in exactly that shape (the help text as HPCC writes
it), plus CRLF line ends, tabs and trailing blank lines.
"""
from __future__ import annotations

import pytest

from netsim.cli import main
from netsim.errors import InputError, TopologyError
from netsim.flowfile import load_flows
from netsim.topology import load_topology

TOPO_HELP = ("\nFirst line: total node #, switch node #, link #\nSecond line: switch node IDs...\n"
             "src0 dst0 rate delay error_rate\nsrc1 dst1 rate delay error_rate\n...\n")
FLOW_HELP = ("\nFirst line: # of flows\nsrc0 dst0 3 dst_port0 size0 start_time0\n"
             "src1 dst1 3 dst_port1 size1 start_time1\n...\n\nPlease order the flows in ascending start_time!\n")


def mix_topology() -> str:
    """``66 1 65``, switch 0, then 256 link lines 0-i and HPCC's help text (as in ``mix/topology.txt``)."""
    links = "".join(f"0 {i} 100Gbps 0.001ms 0\n" for i in range(1, 257))
    return "66 1 65\n0\n" + links + TOPO_HELP


def mix_flows() -> str:
    """``2``, then 256 flow lines i -> 1 and HPCC's help text (as in ``mix/flow.txt``)."""
    body = "".join(f"{i} 1 3 100 {200000000 if i < 4 else 5000000} 2\n" for i in range(2, 258))
    return "2\n" + body + FLOW_HELP


@pytest.fixture
def mix(tmp_path):
    d = tmp_path / "mix"
    d.mkdir()
    (d / "topology.txt").write_text(mix_topology(), encoding="utf-8")
    (d / "flow.txt").write_text(mix_flows(), encoding="utf-8")
    return d


def test_shipped_topology_reads_the_declared_65_links(mix, capsys):
    g = load_topology(str(mix / "topology.txt"))
    assert g.number_of_nodes() == 66 and g.number_of_edges() == 65
    assert g.nodes["0"]["kind"] == "switch" and g.nodes["65"]["kind"] == "host"
    assert g.has_edge("0", "65") and g.edges["0", "1"]["delay_ns"] == 1000
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "topology.txt" in err[0] and "65 links" in err[0]
    assert "ignored 196 non-blank lines after line 67" in err[0]  # 191 link lines + 5 help lines


def test_shipped_flows_read_the_declared_2_flows(mix, capsys):
    g = load_topology(str(mix / "topology.txt"))
    flows = load_flows(str(mix / "flow.txt"), g)
    assert [(f.src, f.dst, f.size_bytes, f.start_ns, f.priority) for f in flows] == [
        ("2", "1", 200000000, 2_000_000_000, 3), ("3", "1", 200000000, 2_000_000_000, 3)]
    err = [ln for ln in capsys.readouterr().err.splitlines() if "flow.txt" in ln]
    assert len(err) == 1 and "2 flows" in err[0] and "254 more flows" in err[0]


@pytest.mark.parametrize("shape", ["crlf", "tabs", "trailing_blank", "bom"])
def test_shipped_shapes(tmp_path, shape):
    text = mix_topology()
    if shape == "crlf":
        data = text.replace("\n", "\r\n").encode()
    elif shape == "tabs":
        data = text.replace(" ", "\t").encode()
    elif shape == "trailing_blank":
        data = (text + "\n\n   \n\t\n").encode()
    else:
        data = b"\xef\xbb\xbf" + text.encode()
    p = tmp_path / "topology.txt"
    p.write_bytes(data)
    g = load_topology(str(p))
    assert g.number_of_edges() == 65


def test_shipped_files_through_the_cli(mix, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["flows", str(mix / "topology.txt"), str(mix / "flow.txt"), "--out", str(out), "--backend", "flow",
               "--quiet", "--no-trace"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "Traceback" not in err
    notes = [ln for ln in err.splitlines() if ln.startswith("netsim: note:")]
    assert len(notes) == 2, err  # one per file, once
    rows = (out / "fct.csv").read_text().splitlines()
    assert len(rows) == 3


def test_fewer_links_than_declared_says_how_many(tmp_path):
    p = tmp_path / "topology.txt"
    p.write_text("5 1 6\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n0 3 100Gbps 1us 0\n0 4 100Gbps 1us 0\n"
                 + TOPO_HELP, encoding="utf-8")
    with pytest.raises(TopologyError) as exc:
        load_topology(str(p))
    msg = str(exc.value)
    assert "line 1" in msg and "declares 6 links" in msg and "holds 4" in msg


def test_overwritten_estimate_names_the_likely_cause(tmp_path):
    """traffic_gen.py writes '8138 ' then the real count '813' over it: the header says 8138."""
    g = load_topology("leaf_spine:leaves=2,spines=1,hosts_per_leaf=2")
    hosts = sorted(n for n in g if g.nodes[n]["kind"] in ("host", "gpu"))
    p = tmp_path / "flow.csv"
    body = "".join(f"{hosts[i % 2]} {hosts[2 + i % 2]} 3 100 1000 2.0\n" for i in range(813))
    p.write_text("8138 \n" + body, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_flows(str(p), g)
    msg = str(exc.value)
    assert "declares 8138 flows" in msg and "holds 813" in msg and "traffic_gen.py" in msg
    assert "set line 1 to 813" in msg


def test_header_bound_is_checked_before_allocating(tmp_path):
    """100,000,000 declared nodes with two links: an error at once, not a 3.7 GB MemoryError."""
    p = tmp_path / "topology.txt"
    p.write_text("100000000 1 2\n2\n0 2 10Gbps 1000ns 0\n1 2 10Gbps 1000ns 0\n", encoding="utf-8")
    with pytest.raises(TopologyError, match="declares 100000000 nodes but its 2 links join at most 4"):
        load_topology(str(p))


@pytest.mark.parametrize("text, needle", [
    ("3 1 2\n2\n0 2 10Gbps 1000ns 0\n\u00b9 2 10Gbps 1000ns 0\n", "field src"),
    ("3 1 2\n\u00b2\n0 2 10Gbps 1000ns 0\n1 2 10Gbps 1000ns 0\n", "bad switch id"),
    ("\u00b3 1 2\n2\n0 2 10Gbps 1000ns 0\n1 2 10Gbps 1000ns 0\n", "bad header"),
    ("3 1 2\n2\n0 2 10Gbps 1000ns 0\n1 2 10Gbps 1000ns \u00b9\n", "error_rate"),
])
def test_superscript_digits_are_one_line_errors(tmp_path, capsys, text, needle):
    p = tmp_path / "topology.txt"
    p.write_text(text, encoding="utf-8")
    rc = main(["topo", "validate", str(p)])
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert "topology.txt" in lines[0] and needle in lines[0]


def test_superscript_in_flow_file(tmp_path, capsys):
    topo = tmp_path / "topology.txt"
    topo.write_text("3 1 2\n2\n0 2 10Gbps 1000ns 0\n1 2 10Gbps 1000ns 0\n", encoding="utf-8")
    fl = tmp_path / "flow.txt"
    fl.write_text("1\n\u00b9 0 3 100 1000 2.0\n", encoding="utf-8")
    rc = main(["flows", str(topo), str(fl), "--out", str(tmp_path / "o"), "--quiet", "--backend", "analytic"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert "flow.txt" in err and "line 2" in err and "field src" in err


@pytest.mark.parametrize("head, first, n_nodes, n_links", [
    ("3 1 2\n0\n", ["0 1 1Gbps 0.001ms 0", "0 2 1Gbps 0.001ms 0"], 3, 2),
    ("6 2 5\n0 1\n", ["0 2 100Gbps 0.001ms 0", "0 3 100Gbps 0.001ms 0", "1 4 100Gbps 0.001ms 0",
                      "1 5 100Gbps 0.001ms 0", "0 1 100Gbps 0.001ms 0"], 6, 5),
])
def test_edited_copies_of_the_shipped_file(tmp_path, capsys, head, first, n_nodes, n_links):
    """Edited copies as forks of HPCC keep them: a new header and first links over the old 256 lines."""
    old = [f"0 {i} 100Gbps 0.001ms 0" for i in range(len(first) + 1, 257)]
    p = tmp_path / "topology.txt"
    p.write_text(head + "\n".join(first + old) + "\n" + TOPO_HELP, encoding="utf-8")
    g = load_topology(str(p))
    assert (g.number_of_nodes(), g.number_of_edges()) == (n_nodes, n_links)
    assert "netsim: note:" in capsys.readouterr().err


def test_a_failing_command_prints_one_line_not_the_note(mix, capsys):
    """The ignored-lines note is held while the command runs: an error stays the only stderr line."""
    bad = mix / "bad_flow.txt"
    bad.write_text("1\n2 99 3 100 1000 2\n" + FLOW_HELP, encoding="utf-8")
    rc = main(["flows", str(mix / "topology.txt"), str(bad), "--out", str(mix / "o"), "--backend", "analytic"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 2 and len(err) == 1 and "bad_flow.txt: line 2, field dst" in err[0], err


def test_a_malformed_link_line_is_named_not_only_counted(tmp_path):
    """'1 -1 ...' stopped the count at 1 and the error named only line 1's declared count."""
    p = tmp_path / "topology.txt"
    p.write_text("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 -1 100Gbps 1000ns 0\n", encoding="utf-8")
    with pytest.raises(TopologyError) as exc:
        load_topology(str(p))
    assert "holds 1" in str(exc.value) and "line 4 is not one of them (got '1 -1" in str(exc.value)


def test_a_missing_switch_id_line_is_named_as_such(tmp_path):
    """With the switch-id line left out, the first link was taken for it and the links were miscounted."""
    p = tmp_path / "topology.txt"
    p.write_text("3 1 2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", encoding="utf-8")
    with pytest.raises(TopologyError, match=r"line 2: expected 1 switch ids \(got '0 2 100Gbps"):
        load_topology(str(p))
