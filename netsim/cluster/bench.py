"""Benchmark of a cluster run (``netsim bench cluster_gpt3b_4x32``; issue 18's speed target).

Four GPT-3B jobs (``workloads/gpt-3b-t2p2d8.yaml``, 32 GPUs each, ``packed``)
on a 128-GPU leaf-spine, flow backend, one iteration each, no alone-runs:
target ≤ 30 s. Registered with :func:`netsim.bench.benchmark` when
:mod:`netsim.cli.bench` imports this module (the cluster layer sits above
``netsim.bench``, so ``netsim.bench`` cannot import it itself).
"""
from __future__ import annotations

import os
import time

from ..bench import benchmark

#: the benchmark's fabric: 16 servers of 8 GPUs, 2 servers per leaf, 4 spines, RoCE NICs
TOPOLOGY = "gpu_cluster:servers=16,gpus_per_server=8,servers_per_leaf=2,spines=4,nic_kinds=roce"
#: wall-time target of issue 18 (s)
TARGET_WALL_S = 30.0


def _workload(name: str) -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "workloads", name))


@benchmark("cluster_gpt3b_4x32")
def bench_cluster_gpt3b_4x32() -> dict:
    """Four GPT-3B jobs of 32 GPUs on one 128-GPU leaf-spine, flow backend, one iteration (target <= 30 s)."""
    from .api import run_cluster
    wl = _workload("gpt-3b-t2p2d8.yaml")
    cluster = {"jobs": [{"name": f"j{i}", "workload": wl, "placement": "packed"} for i in range(4)]}
    t0, c0 = time.perf_counter(), time.process_time()
    s = run_cluster(TOPOLOGY, cluster, backend="flow", alone=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    times = [j["iteration_time_s"] for j in s["jobs"].values()]
    return {"topology": TOPOLOGY, "jobs": 4, "gpus_per_job": 32, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "flows": s["flows"], "flows_per_wall_s": round(s["flows"] / wall),
            "iteration_time_s_min": min(times), "iteration_time_s_max": max(times), "target_wall_s": TARGET_WALL_S}
