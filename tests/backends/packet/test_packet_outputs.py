"""run_flows / netsim flows: files written, determinism, HPCC fct.txt, bad input -> exit 2."""
import json
import os

import pytest

import cc_fixtures  # noqa: F401
from netsim.cli import main
from netsim.flowfile import FlowSpec
from netsim.simulate import CC_COLUMNS, PFC_COLUMNS, QUEUE_COLUMNS, run_flows
from netsim.records import FCT_COLUMNS
from netsim.topology.builders import dumbbell, leaf_spine

FILES = ("fct.csv", "queues.csv", "pfc.csv", "cc.csv")


def _flows():
    return [FlowSpec(f"left{i}", "right0", 300_000 + 1000 * i, 2000 * i, tag=f"t{i}") for i in range(4)] + \
           [FlowSpec("left0", "right1", 200_000, 500, cc="_test_roce_ecn")]


def _run(tmp, seed, **kw):
    g = dumbbell(4, 2)
    params = {"ecn_kmin_bytes": "10KB", "ecn_kmax_bytes": "100KB", "ecn_pmax": 0.5, "queue_sample_ns": "2us",
              "cc_sample_ns": "5us"}
    return run_flows(g, _flows(), params=params, seed=seed, out_dir=str(tmp), **kw)


def test_outputs_written_with_contract_columns(tmp_path):
    s = _run(tmp_path, 0, hpcc_fct=True)
    heads = {f: open(tmp_path / f).readline().strip().split(",") for f in FILES}
    assert tuple(heads["fct.csv"]) == FCT_COLUMNS
    assert tuple(heads["queues.csv"]) == QUEUE_COLUMNS
    assert tuple(heads["pfc.csv"]) == PFC_COLUMNS
    assert tuple(heads["cc.csv"]) == CC_COLUMNS
    summ = json.load(open(tmp_path / "summary.json"))
    for key in ("flows", "completed", "bytes_delivered", "drops", "ecn_marks", "cnps", "pfc_pauses",
                "pfc_pause_time_ns", "retransmitted_bytes", "jain_fairness", "sim_time_ns", "events", "wall_time_s"):
        assert key in summ
    assert summ["flows"] == summ["completed"] == 5
    assert summ["bytes_delivered"] == sum(f.size_bytes for f in _flows())
    assert summ["ecn_marks"] > 0 and summ["cnps"] > 0
    rows = open(tmp_path / "fct.csv").read().splitlines()[1:]
    assert len(rows) == 5
    # HPCC fct.txt: sip dip sport dport size start fct standalone, hex addresses 0x0b000001+...
    lines = open(tmp_path / "fct.txt").read().splitlines()
    assert len(lines) == 5
    for ln in lines:
        sip, dip, sport, dport, size, start, fct, alone = ln.split()
        assert len(sip) == 8 and int(sip, 16) & 0xFF == 0x01 and int(sip, 16) >> 24 == 0x0B
        assert int(sport) >= 10000 and int(fct) > 0 and int(alone) > 0
    # the HPCC FCT runs to the last ACK, so it exceeds ours (last byte at the receiver)
    ours = {int(r.split(",")[3]): int(r.split(",")[6]) for r in rows}
    assert all(int(ln.split()[6]) > ours[int(ln.split()[4])] for ln in lines)


def test_same_seed_byte_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    sa = _run(a, 7)
    sb = _run(b, 7)
    for f in FILES:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    ja, jb = json.load(open(a / "summary.json")), json.load(open(b / "summary.json"))
    ja.pop("wall_time_s"), jb.pop("wall_time_s")
    assert ja == jb
    sa.pop("wall_time_s"), sb.pop("wall_time_s")
    assert sa == sb


def test_spray_and_error_rate_deterministic(tmp_path):
    g = leaf_spine(2, 2, 2)
    g.edges["leaf0", "spine0"]["error_rate"] = 0.002
    flows = [FlowSpec("h0", "h2", 500_000, 0), FlowSpec("h1", "h3", 500_000, 0)]
    out = []
    for d in ("x", "y"):
        run_flows(g, flows, params={"routing": "spray"}, cc="_test_tcp", seed=5, out_dir=str(tmp_path / d))
        out.append((tmp_path / d / "fct.csv").read_bytes())
    assert out[0] == out[1]


def test_python_api_without_out_dir_returns_records():
    s = run_flows(dumbbell(1, 1), [FlowSpec("left0", "right0", 10_000, 0)])
    assert s["completed"] == 1 and s["records"][0].size_bytes == 10_000


def _cli(tmp_path, capsys, *args):
    rc = main(list(args))
    err = capsys.readouterr().err
    return rc, err


def test_cli_runs_and_prints(tmp_path, capsys):
    f = tmp_path / "f.csv"
    f.write_text("src,dst,size_bytes,start_ns\nleft0,right0,100KB,0\nleft1,right0,100KB,0\n")
    rc = main(["flows", "dumbbell:n_left=2,n_right=1", str(f), "--out", str(tmp_path / "o"),
               "--set", "ecn_kmin_bytes.3=20KB", "--cc-param", "window_bytes=50KB"])
    out = capsys.readouterr().out
    assert rc == 0 and "completed 2" in out
    assert os.path.exists(tmp_path / "o" / "summary.json")


@pytest.mark.parametrize("args,expect", [
    (["--set", "bufer_bytes=1MB"], "bufer_bytes"),
    (["--set", "buffer_bytes=10Gbsp"], "10Gbsp"),
    (["--set", "ecn_kmin_bytes.9=1KB"], "ecn_kmin_bytes.9"),
    (["--set", "routing=magic"], "magic"),
    (["--cc", "nosuchcc"], "nosuchcc"),
    (["--cc-param", "window_bytes=lots"], "lots"),
    (["--cc-param", "nosuch_key=1"], "nosuch_key"),
])
def test_cli_bad_options_exit_2_one_line(tmp_path, capsys, args, expect):
    f = tmp_path / "f.csv"
    f.write_text("src,dst,size_bytes,start_ns\nleft0,right0,1000,0\n")
    rc, err = _cli(tmp_path, capsys, "flows", "dumbbell:n_left=1,n_right=1", str(f), "--out", str(tmp_path / "o"),
                   "--quiet", *args)
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and expect in err and "Traceback" not in err


@pytest.mark.parametrize("body,expect", [
    ("src,dst,size_bytes,start_ns\nleft0,nowhere,1000,0\n", "nowhere"),
    ("src,dst,size_bytes,start_ns\nleft0,right0,0,0\n", "size"),
    ("src,dst,size_bytes,start_ns\nleft0,right0,10Gbsp,0\n", "10Gbsp"),
    ("", "empty"),
    ("left0,right0,1000,0\n", "f.csv"),
    ("src,dst,size_bytes,start_ns\nleft0,island,1000,0\n", "island"),
    ("src,dst,size_bytes,start_ns\nleft0,switch_left,1000,0\n", "switch_left"),
])
def test_cli_bad_flow_files_exit_2_one_line(tmp_path, capsys, body, expect):
    topo = tmp_path / "t.yaml"
    topo.write_text("name: t\nlink_defaults: {kind: ethernet, delay_ns: 1us}\nnodes:\n"
                    "  - {name: left0, kind: host}\n  - {name: right0, kind: host}\n  - {name: island, kind: host}\n"
                    "  - {name: switch_left, kind: switch}\n"
                    "links:\n  - {src: left0, dst: switch_left, rate_bps: 100Gbps}\n"
                    "  - {src: right0, dst: switch_left, rate_bps: 100Gbps}\n")
    f = tmp_path / "f.csv"
    f.write_text(body)
    rc, err = _cli(tmp_path, capsys, "flows", str(topo), str(f), "--out", str(tmp_path / "o"), "--quiet")
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and expect in err and "Traceback" not in err


@pytest.mark.parametrize("topo,expect", [
    ("nodes:\n  - {name: a, kind: host}\n  - {name: b, kind: toaster}\nlinks:\n"
     "  - {src: a, dst: b, rate_bps: 100Gbps, delay_ns: 1us, kind: ethernet}\n", "toaster"),
    ("nodes:\n  - {name: a, kind: host}\n  - {name: b, kind: host}\nlinks:\n"
     "  - {src: a, dst: b, rate_bps: 0, delay_ns: 1us, kind: ethernet}\n", "rate_bps"),
    ("nodes:\n  - {name: a, kind: host}\n  - {name: b, kind: host}\nlinks:\n"
     "  - {src: a, dst: b, rate_bps: 100Gbps, delay_ns: 1us, kind: carrier_pigeon}\n", "carrier_pigeon"),
])
def test_cli_bad_topology_exit_2_one_line(tmp_path, capsys, topo, expect):
    t = tmp_path / "t.yaml"
    t.write_text("name: t\n" + topo)
    f = tmp_path / "f.csv"
    f.write_text("src,dst,size_bytes,start_ns\na,b,1000,0\n")
    rc, err = _cli(tmp_path, capsys, "flows", str(t), str(f), "--out", str(tmp_path / "o"), "--quiet")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and expect in err
