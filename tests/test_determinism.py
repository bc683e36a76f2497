"""Same inputs and seed -> byte-identical outputs, through the CLI (fresh runs in one process).

``netsim flows`` (packet backend, cubic and dcqcn) and ``netsim run`` (analytic
and packet backends, a small workload across servers so ECMP matters) are run
twice with the same seed: every trace file is byte-identical and summary.json
is identical once the wall-clock fields (any key containing ``wall``) are
removed. With other seeds the ECMP hash changes, so some flows take other
spines: the router's choices and the traces differ for at least one seed.
"""
from __future__ import annotations

import json
import os

import pytest

from netsim.cli import main
from netsim.topology import Router, load_topology

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTS = os.path.join(ROOT, "topologies", "leaf_spine_hosts.yaml")
WORKLOAD = os.path.join(ROOT, "workloads", "bert-large-small.yaml")
# 4 one-GPU servers, one per leaf, 2 spines: the DP ring crosses the spines (ECMP)
GPU_FABRIC = "gpu_cluster:servers=4,gpus_per_server=1,servers_per_leaf=1,spines=2"

FLOW_FILES = ("fct.csv", "queues.csv", "pfc.csv", "cc.csv")
RUN_FILES = ("fct.csv", "ops.csv", "traffic_matrix.csv", "message_sizes.csv")


def _strip_wall(obj):
    if isinstance(obj, dict):
        return {k: _strip_wall(v) for k, v in obj.items() if "wall" not in k}
    if isinstance(obj, list):
        return [_strip_wall(v) for v in obj]
    return obj


def _summary(d) -> dict:
    with open(os.path.join(d, "summary.json"), encoding="utf-8") as fh:
        return _strip_wall(json.load(fh))


def _bytes(d, name) -> bytes:
    with open(os.path.join(d, name), "rb") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def flow_file(tmp_path_factory) -> str:
    """Cross-leaf permutation (h_i -> h_{i+4}) plus a 4-to-1 incast on the shipped leaf-spine of hosts."""
    p = tmp_path_factory.mktemp("det") / "flows.csv"
    rows = ["src,dst,size_bytes,start_ns"]
    rows += [f"h{i},h{(i + 4) % 16},200KB,{i * 100}" for i in range(16)]
    rows += [f"h{i},h1,100KB,2000" for i in (8, 9, 12, 13)]
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(p)


def _flows(tmp_path, flow_file, cc, seed, tag):
    out = str(tmp_path / f"{cc}_{seed}_{tag}")
    assert main(["flows", HOSTS, flow_file, "--out", out, "--cc", cc, "--seed", str(seed), "--quiet"]) == 0
    return out


@pytest.mark.parametrize("cc", ["cubic", "dcqcn"])
def test_flows_same_seed_byte_identical(cc, flow_file, tmp_path):
    a = _flows(tmp_path, flow_file, cc, 1, "a")
    b = _flows(tmp_path, flow_file, cc, 1, "b")
    for name in FLOW_FILES:
        assert _bytes(a, name) == _bytes(b, name), name
    assert len(_bytes(a, "fct.csv").splitlines()) == 21  # header + 20 flows
    assert _summary(a) == _summary(b)


@pytest.mark.parametrize("cc", ["cubic", "dcqcn"])
def test_flows_other_seeds_change_ecmp(cc, flow_file, tmp_path):
    base = _bytes(_flows(tmp_path, flow_file, cc, 1, "a"), "fct.csv")
    others = [_bytes(_flows(tmp_path, flow_file, cc, s, "a"), "fct.csv") for s in (2, 3)]
    assert any(o != base for o in others), "fct.csv identical for seeds 1, 2, 3: is the ECMP hash seeded?"


def test_router_seed_changes_ecmp_choice():
    g = load_topology(HOSTS)
    pairs = [(f"h{i}", f"h{(i + 4) % 16}") for i in range(16)]
    picks = {seed: [Router(g, seed=seed).path(s, d, fid) for fid, (s, d) in enumerate(pairs)] for seed in range(4)}
    again = [Router(g, seed=0).path(s, d, fid) for fid, (s, d) in enumerate(pairs)]
    assert picks[0] == again  # deterministic, no per-process hash randomization
    assert any(picks[s] != picks[0] for s in (1, 2, 3))
    for p in picks[0]:  # cross-leaf: host, leaf, spine, leaf, host
        assert len(p) == 5 and p[2].startswith("spine")


@pytest.mark.parametrize("backend, cc", [("analytic", "none"), ("packet", "dcqcn")])
def test_run_same_seed_byte_identical(backend, cc, tmp_path):
    outs = []
    for tag in ("a", "b"):
        out = str(tmp_path / tag)
        assert main(["run", GPU_FABRIC, WORKLOAD, "--out", out, "--backend", backend, "--cc", cc,
                     "--seed", "3", "--quiet"]) == 0
        outs.append(out)
    for name in RUN_FILES:
        assert _bytes(outs[0], name) == _bytes(outs[1], name), name
    s = _summary(outs[0])
    assert s == _summary(outs[1])
    assert s["flows"] > 0 and s["iteration_time_s"] > 0


def _cli_subprocess(args, hashseed: int) -> None:
    import subprocess
    import sys
    env = dict(os.environ, PYTHONHASHSEED=str(hashseed))
    r = subprocess.run([sys.executable, "-m", "netsim", *args], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


def test_separate_processes_with_other_str_hash_seeds_agree(flow_file, tmp_path):
    """Python randomizes str hashes per process: outputs must not depend on it (crc32, sorted orders)."""
    outs = {}
    for h in (1, 2):
        f, r = str(tmp_path / f"flows{h}"), str(tmp_path / f"run{h}")
        _cli_subprocess(["flows", HOSTS, flow_file, "--out", f, "--cc", "dcqcn", "--seed", "5", "--quiet"], h)
        _cli_subprocess(["run", GPU_FABRIC, WORKLOAD, "--out", r, "--backend", "analytic", "--seed", "5",
                         "--quiet"], h)
        outs[h] = (f, r)
    for name in FLOW_FILES:
        assert _bytes(outs[1][0], name) == _bytes(outs[2][0], name), name
    for name in RUN_FILES:
        assert _bytes(outs[1][1], name) == _bytes(outs[2][1], name), name
    assert _summary(outs[1][0]) == _summary(outs[2][0])
    assert _summary(outs[1][1]) == _summary(outs[2][1])
