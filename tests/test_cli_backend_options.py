"""The same ``--set`` options mean the same thing on every backend (through the CLI).

The host-stack model (netsim.hoststack) caps one kernel-TCP connection at about 42 Gbit/s
(Cai et al., SIGCOMM 2021). The packet backend is the reference: the analytic backend must
apply the same cap to the same flows (those leaving through a NIC or an Ethernet/InfiniBand
link), whether the model is switched on by ``--set host_stack=on`` or by a ``host.KEY``.
"""
from __future__ import annotations

import csv
import json
import os

import pytest

from netsim.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTS = os.path.join(ROOT, "topologies", "leaf_spine_hosts.yaml")
WORKLOAD = os.path.join(ROOT, "workloads", "bert-large-small.yaml")
GPU_ETH = "gpu_cluster:servers=4,gpus_per_server=1,nic_kinds=ethernet,spines=0"


def _fct_ns(tmp_path, flow_file, backend, *sets) -> int:
    out = tmp_path / "_".join((backend,) + sets).replace("=", "-")
    argv = ["flows", HOSTS, str(flow_file), "--out", str(out), "--backend", backend, "--cc", "cubic", "--quiet"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0
    with open(out / "fct.csv", newline="", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    return int(row["fct_ns"])


@pytest.mark.parametrize("setting", ["host_stack=on", "host.tcp_streams=1"])
def test_flows_host_stack_on_analytic_as_on_packet(tmp_path, setting):
    f = tmp_path / "one.csv"
    f.write_text("src,dst,size_bytes,start_ns\nh0,h4,10MB,0\n", encoding="utf-8")
    plain = {b: _fct_ns(tmp_path, f, b) for b in ("analytic", "packet")}
    capped = {b: _fct_ns(tmp_path, f, b, setting) for b in ("analytic", "packet")}
    for b in plain:  # 100 Gbit/s link vs ~42 Gbit/s per TCP connection: > 2x slower
        assert capped[b] > 2 * plain[b], (b, plain[b], capped[b])
    assert capped["analytic"] == pytest.approx(capped["packet"], rel=0.10)


@pytest.mark.parametrize("setting", ["host_stack=on", "host.tcp_streams=1"])
def test_flows_host_stack_on_flow_as_on_packet(tmp_path, setting):
    """``netsim flows --backend flow`` used to ignore the host stack (856 us instead of ~1.9 ms)."""
    f = tmp_path / "one.csv"
    f.write_text("src,dst,size_bytes,start_ns\nh0,h4,10MB,0\n", encoding="utf-8")
    plain = _fct_ns(tmp_path, f, "flow")
    capped = {b: _fct_ns(tmp_path, f, b, setting) for b in ("flow", "packet")}
    assert capped["flow"] > 2 * plain
    assert capped["flow"] == pytest.approx(capped["packet"], rel=0.10)


def _dp_s(tmp_path, backend, *sets) -> float:
    out = tmp_path / ("run_" + "_".join((backend,) + sets).replace("=", "-"))
    argv = ["run", GPU_ETH, WORKLOAD, "--backend", backend, "--out", str(out), "--quiet"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0
    with open(out / "summary.json", encoding="utf-8") as fh:
        return json.load(fh)["breakdown_s"]["dp"]


@pytest.mark.parametrize("sets", [(), ("host.tcp_streams=4",)], ids=["default", "4-streams"])
def test_run_dp_time_agrees_across_backends(tmp_path, sets):
    dp = {b: _dp_s(tmp_path, b, *sets) for b in ("analytic", "packet")}
    assert dp["analytic"] == pytest.approx(dp["packet"], rel=0.15)


def test_run_host_stack_off_is_honoured(tmp_path):
    on = _dp_s(tmp_path, "analytic", "host_stack=on")
    off = _dp_s(tmp_path, "analytic", "host_stack=off")
    assert off * 3 < on  # 400 Gbit/s Ethernet NIC vs ~42 Gbit/s kernel TCP


# --- --hpcc-fct: every backend writes HPCC's fct.txt and the node-id map beside it -------------------------
HPCC_DIR = os.path.join(ROOT, "topologies", "hpcc_small")
DUMBBELL = os.path.join(ROOT, "topologies", "dumbbell.yaml")


def _fct_txt(tmp_path, topo, flows, backend) -> tuple[list[list[str]], list[dict], dict]:
    out = tmp_path / f"hpcc_{backend}"
    assert main(["flows", topo, flows, "--out", str(out), "--backend", backend, "--hpcc-fct", "--quiet",
                 "--no-trace"]) == 0
    lines = [ln.split() for ln in (out / "fct.txt").read_text(encoding="utf-8").splitlines()]
    with open(out / "fct.csv", newline="", encoding="utf-8") as fh:
        recs = list(csv.DictReader(fh))
    with open(out / "fct_nodes.csv", newline="", encoding="utf-8") as fh:
        nodes = {r["hpcc_ip"]: r for r in csv.DictReader(fh)}
    return lines, recs, nodes


def test_hpcc_fct_on_every_backend_agrees_with_packet(tmp_path):
    """Same flows, addresses, ports, sizes, starts and standalone FCT on all three; FCT within 5 % of packet."""
    topo, flows = os.path.join(HPCC_DIR, "topology.txt"), os.path.join(HPCC_DIR, "flow.txt")
    got = {b: _fct_txt(tmp_path, topo, flows, b)[0] for b in ("packet", "flow", "analytic")}
    key = {b: sorted((ln[0], ln[1], ln[2], ln[3], ln[4], ln[5], ln[7]) for ln in rows) for b, rows in got.items()}
    assert len(key["packet"]) == 6
    assert key["flow"] == key["packet"] and key["analytic"] == key["packet"]
    fct = {b: {(ln[0], ln[1], ln[5]): int(ln[6]) for ln in rows} for b, rows in got.items()}
    for b in ("flow", "analytic"):
        for k, v in fct["packet"].items():
            assert fct[b][k] == pytest.approx(v, rel=0.05), (b, k)


@pytest.mark.parametrize("backend", ["flow", "analytic", "packet"])
def test_hpcc_fct_addresses_map_back_to_node_names(tmp_path, backend):
    flows = tmp_path / "f.csv"
    flows.write_text("src,dst,size_bytes,start_ns\nleft0,right1,100KB,0\nleft1,right0,50KB,1us\n"
                     "left0,right1,10KB,2us\n", encoding="utf-8")
    lines, recs, nodes = _fct_txt(tmp_path, DUMBBELL, str(flows), backend)
    named = sorted((nodes[ln[0]]["node"], nodes[ln[1]]["node"], int(ln[4]), int(ln[5])) for ln in lines)
    assert named == sorted((r["src"], r["dst"], int(r["size_bytes"]), int(r["start_ns"])) for r in recs)
    # HPCC gives each (src, dst) pair's flows ports 10000, 10001, ... in start order
    ports = sorted((int(ln[5]), int(ln[2])) for ln in lines if nodes[ln[0]]["node"] == "left0")
    assert [p for _, p in ports] == [10000, 10001]
    for ip, row in nodes.items():  # the address is HPCC's rule applied to the id written beside it
        i = int(row["node_id"])
        assert int(ip, 16) == 0x0B000001 + ((i // 256) << 16) + ((i % 256) << 8)


# --- options a backend cannot honour exit 2 (netsim/cli/args.py) ---------------------------------------------
def test_flow_ignores_list_is_what_the_flow_backend_never_reads():
    """FLOW_IGNORES must stay true: a key the flow backend starts to read must leave the list."""
    import glob
    import re
    from netsim.network.params import SIM_PARAMS
    from netsim.honours import ANALYTIC_HONOURS, FLOW_IGNORES
    src = "".join(open(f, encoding="utf-8").read() for f in glob.glob(os.path.join(ROOT, "netsim", "backends",
                                                                                     "flow", "*.py")))
    for key in FLOW_IGNORES:
        assert key in SIM_PARAMS and not re.search(rf"['\"]{key}['\"]", src), key
    assert all(k in SIM_PARAMS for k in ANALYTIC_HONOURS)


@pytest.mark.parametrize("backend, argv_extra, needle", [
    ("flow", ["--set", "ecn=off"], "--set ecn: --backend flow cannot honour it"),
    ("flow", ["--set", "routing=spray"], "--set routing: --backend flow cannot honour it"),
    ("flow", ["--set", "buffer_bytes=1MB"], "--set buffer_bytes: --backend flow cannot honour it"),
    ("analytic", ["--set", "pfc=off"], "--set pfc: --backend analytic cannot honour it"),
    ("flow", ["--set", "pfc=off"], "--set pfc: --backend flow cannot honour it: it models lossless RoCE"),
    ("flow", ["--set", "lossless_priorities=0,3"], "--set lossless_priorities: --backend flow cannot honour"),
    ("flow", ["--set", "roce_priority=0"], "--set roce_priority: --backend flow cannot honour it"),
    ("flow", ["--set", "tcp_priority=3"], "--set tcp_priority: --backend flow cannot honour it"),
    ("flow", ["--cc", "dctcp", "--set", "ecn_kmin_bytes=5KB"], "--set ecn_kmin_bytes: --backend flow cannot honour"),
    # only the flow backend's fluid DCQCN reads ECN thresholds: with any other cc they changed nothing (were accepted)
    ("flow", ["--cc", "cubic", "--set", "ecn_kmin_bytes=5KB"], "--set ecn_kmin_bytes: --backend flow cannot honour "
                                                               "it with --cc cubic"),
    ("flow", ["--cc", "hpcc", "--set", "ecn_kmax_bytes=50KB"], "--set ecn_kmax_bytes: --backend flow cannot honour"),
    ("flow", ["--set", "ecn_pmax.3=0.5"], "--set ecn_pmax.3: --backend flow cannot honour it with --cc none"),
    ("analytic", ["--cc", "dcqcn", "--cc-param", "g=0.5"], "--cc-param g=0.5: --backend analytic cannot honour"),
])
def test_options_a_backend_cannot_honour_exit_2(tmp_path, capsys, backend, argv_extra, needle):
    f = tmp_path / "one.csv"
    f.write_text("src,dst,size_bytes,start_ns\nh0,h4,10KB,0\n", encoding="utf-8")
    rc = main(["flows", HOSTS, str(f), "--out", str(tmp_path / "o"), "--backend", backend, "--quiet", *argv_extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "o").exists()  # rejected before anything ran


def test_flow_ecn_thresholds_accepted_when_a_flow_runs_dcqcn(tmp_path, capsys):
    f = tmp_path / "mixed.csv"     # --cc none, but one flow's cc column is dcqcn: its marking reads them
    f.write_text("src,dst,size_bytes,start_ns,cc\nh0,h4,10KB,0,dcqcn\nh1,h4,10KB,0,\n", encoding="utf-8")
    assert main(["flows", HOSTS, str(f), "--out", str(tmp_path / "o"), "--backend", "flow", "--quiet",
                 "--set", "ecn_kmin_bytes=5KB"]) == 0
    assert main(["flows", HOSTS, str(f), "--out", str(tmp_path / "o2"), "--backend", "flow", "--quiet",
                 "--cc", "dcqcn", "--set", "ecn_kmin_bytes=5KB"]) == 0


def test_run_backend_flow_rejects_ecn_thresholds_without_dcqcn(tmp_path, capsys):
    rc = main(["run", GPU_ETH, WORKLOAD, "--backend", "flow", "--out", str(tmp_path / "o"), "--quiet",
               "--cc", "swift", "--set", "ecn_kmin_bytes=5KB"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--set ecn_kmin_bytes: --backend flow cannot honour it with --cc swift" \
        in err[0], err


def test_run_backend_flow_rejects_pfc_off(tmp_path, capsys):
    rc = main(["run", GPU_ETH, WORKLOAD, "--backend", "flow", "--out", str(tmp_path / "o"), "--quiet",
               "--set", "pfc=off"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--set pfc: --backend flow cannot honour it" in err[0], err


# --- the same rule through the Python API and for node attributes (netsim/honours.py) ------------------------
def _graph():
    from netsim.topology import load_topology
    return load_topology(HOSTS)


def _incast(n: int = 7, size: str = "1MB"):
    from netsim.flowfile import FlowSpec
    from netsim.units import parse_size
    return [FlowSpec(f"h{i}", "h0", parse_size(size), 0, None, "", None) for i in range(1, n + 1)]


@pytest.mark.parametrize("params, attr, needle", [
    ({"pfc": "off"}, None, "--set pfc: --backend flow cannot honour"),
    ({"buffer_bytes": "1MB"}, None, "--set buffer_bytes: --backend flow cannot honour"),
    ({}, ("buffer_bytes", "1MB"), "node leaf0, attribute buffer_bytes: --backend flow cannot honour"),
    ({}, ("pfc", False), "node leaf0, attribute pfc: --backend flow cannot honour"),
])
def test_run_flows_api_rejects_what_flow_cannot_honour(params, attr, needle):
    from netsim.errors import InputError
    from netsim.simulate import run_flows
    g = _graph()
    if attr:
        g.nodes["leaf0"][attr[0]] = attr[1]
    with pytest.raises(InputError) as exc:
        run_flows(g, _incast(1), backend="flow", cc="dcqcn", params=params)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def _mean_fct_ns(backend: str, params=None, node_attrs=None) -> float:
    from netsim.simulate import run_flows
    g = _graph()
    for n in g.nodes:
        if g.nodes[n].get("kind") == "switch":
            g.nodes[n].update(node_attrs or {})
    recs = run_flows(g, _incast(), backend=backend, cc="dcqcn", params=params)["records"]
    return sum(r.fct_ns if hasattr(r, "fct_ns") else r["fct_ns"] for r in recs) / len(recs)


@pytest.fixture(scope="module")
def incast_default():
    return {b: _mean_fct_ns(b) for b in ("packet", "flow")}


@pytest.mark.parametrize("params, node_attrs", [
    ({"ecn_kmin_bytes": "5KB", "ecn_kmax_bytes": "50KB"}, None),   # packet 725 -> 1378 us, flow 732 -> 1328 us
    ({"ecn_kmin_bytes.3": "5KB", "ecn_kmax_bytes.3": "50KB"}, None),  # RoCE's priority (3) only: same
    ({"ecn_pmax": "1.0"}, None),                                    # packet 1057 us, flow 1032 us
    (None, {"ecn_kmin_bytes": 5000, "ecn_kmax_bytes": 50000}),      # as switch attributes: as --set
], ids=["kmin-kmax", "kmin-kmax-prio3", "pmax", "node-attrs"])
def test_flow_ecn_thresholds_move_dcqcn_incast_as_on_packet(incast_default, params, node_attrs):
    """7->1 DCQCN incast of 1 MB: marking earlier slows both backends alike (flow ignored them: 732 us)."""
    got = {b: _mean_fct_ns(b, params, node_attrs) for b in ("packet", "flow")}
    for b in got:
        assert got[b] > 1.3 * incast_default[b], (b, incast_default[b], got[b])
    assert got["flow"] == pytest.approx(got["packet"], rel=0.10)


def test_flow_ecn_threshold_of_another_priority_changes_nothing(incast_default):
    """``ecn_kmin_bytes.2`` is not RoCE's priority (3): neither backend moves."""
    params = {"ecn_kmin_bytes.2": "5KB", "ecn_kmax_bytes.2": "50KB"}
    for b in ("packet", "flow"):
        assert _mean_fct_ns(b, params) == pytest.approx(incast_default[b], rel=1e-9)


def test_run_flows_api_rejects_ecn_thresholds_with_dctcp_on_flow():
    from netsim.errors import InputError
    from netsim.simulate import run_flows
    with pytest.raises(InputError, match="--set ecn_kmin_bytes: --backend flow cannot honour it with --cc dctcp"):
        run_flows(_graph(), _incast(1), backend="flow", cc="dctcp", params={"ecn_kmin_bytes": "5KB"})


@pytest.mark.parametrize("params", [{"header_bytes": "200"}, {"mtu_bytes": "600"}])
def test_flow_header_and_mtu_move_a_lone_flow_as_on_packet(params):
    """More header bytes per payload byte: a lone 1 MB flow is slower by the same factor on both."""
    from netsim.simulate import run_flows

    def fct(backend, p=None):
        (r,) = run_flows(_graph(), _incast(1), backend=backend, cc="none", params=p)["records"]
        return r.fct_ns if hasattr(r, "fct_ns") else r["fct_ns"]
    ratio = {b: fct(b, params) / fct(b) for b in ("packet", "flow")}
    assert ratio["packet"] > 1.05 and ratio["flow"] == pytest.approx(ratio["packet"], rel=0.02), ratio
