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
