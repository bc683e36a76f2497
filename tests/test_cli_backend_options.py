"""The same ``--set`` options mean the same thing on every backend (through ``netsim run``).

The host-stack model (``--set host_stack=on`` / ``host.KEY``, netsim.hoststack) caps a kernel-TCP
connection at about 42 Gbit/s; a 4-GPU DP ring over 400 Gbit/s Ethernet NICs therefore slows
down by the ratio of the rates on the packet backend (the reference) and must on the analytic
one too, within 15 % of the packet backend's exposed DP time.
"""
from __future__ import annotations

import json
import os

import pytest

from netsim.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOAD = os.path.join(ROOT, "workloads", "bert-large-small.yaml")
TOPO = "gpu_cluster:servers=4,gpus_per_server=1,nic_kinds=ethernet,spines=0"


def _dp_s(tmp_path, backend, *sets) -> float:
    out = tmp_path / "_".join((backend,) + sets).replace("=", "-")
    argv = ["run", TOPO, WORKLOAD, "--backend", backend, "--out", str(out), "--quiet"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0
    with open(out / "summary.json", encoding="utf-8") as fh:
        return json.load(fh)["breakdown_s"]["dp"]


@pytest.mark.parametrize("setting", ["host_stack=on", "host.tcp_streams=1"])
def test_host_stack_setting_is_honoured_by_analytic_like_packet(tmp_path, setting):
    plain = {b: _dp_s(tmp_path, b) for b in ("analytic", "packet")}
    capped = {b: _dp_s(tmp_path, b, setting) for b in ("analytic", "packet")}
    for b in plain:
        assert capped[b] > 5 * plain[b], (b, plain[b], capped[b])  # 400 Gbit/s NIC vs ~42 Gbit/s TCP
    assert capped["analytic"] == pytest.approx(capped["packet"], rel=0.15)
