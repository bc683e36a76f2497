"""Benchmarks of training steps on the flow-level backend (``netsim bench flow_gpt...``).

* ``flow_gpt3b_32gpu``, ``flow_gpt_1024gpu`` — one GPT-3B iteration at real
  sizes on 32 and 1,024 GPUs (issue 6 targets: ≤ 10 s, ≤ 300 s and 4 GiB);
* ``flow_gpt_scaling``, ``flow_gpt_weak_scaling`` — wall time against GPUs
  and flows (64, 256, 1,024 GPUs), with a fit of wall time as linear in the
  flows inside a server and the flows crossing a switch;
* ``flow_vs_packet_gpt_small`` — packet vs flow backend on the reduced steps;
* ``opgraph_gpt175b_8192gpu`` — generating (and wiring) the op graph of one
  GPT-3 175 B step with t=8 p=16 d=64 on 8,192 GPUs, no simulation;
* ``flow_gpt175b_8192gpu`` — that step on the flow backend (issue 22 target:
  ≤ 5 minutes, ≤ 8 GiB).

All go through :func:`netsim.runtime.run_training`.
"""
from __future__ import annotations

import math
import os
import resource
import time

from . import benchmark


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _workload(name: str) -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "workloads", name))


#: GPT-3 175B (Brown et al. 2020, Table 2.1: 96 layers, d_model 12,288, 96 heads, context 2,048) with
#: global batch 1,536 (Narayanan et al. SC'21, Table 1, the 175 B row) and micro-batch 1 (one sequence
#: per micro-batch: 24 per pipeline at d=64), as workload overrides of ``gpt-3b-t2p2d8.yaml``
GPT175B_OVERRIDES = {"model": {"name": "gpt-175b", "layers": 96, "hidden": 12288, "heads": 96, "seq_len": 2048,
                               "vocab": 50257},
                     "training.global_batch": 1536, "training.micro_batch": 1}


def gpt_step(servers: int, *, tp: int, pp: int, dp: int, workload: str = "gpt-3b-t2p2d8.yaml",
             backend: str = "flow", measure_memory: bool = False, global_batch: int | None = None,
             seed: int = 0, topology: str | None = None, overrides: dict | None = None) -> dict:
    """One iteration of ``workload`` with the given parallelism on ``servers`` 8-GPU servers
    (``seed``: the ECMP hash seed, which decides the fabric collisions; ``topology``: a builder
    expression instead of the two-tier ``gpu_cluster``; ``overrides``: more workload fields)."""
    from ..runtime import run_training
    topo = topology or f"gpu_cluster:servers={servers},gpus_per_server=8"
    over = {"parallelism.tp": tp, "parallelism.pp": pp, "parallelism.dp": dp, **(overrides or {})}
    if global_batch is not None:
        over["training.global_batch"] = global_batch
    if measure_memory:
        import tracemalloc
        tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    s = run_training(topo, _workload(workload), backend=backend, progress=False, workload_overrides=over,
                     seed=seed)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    out = {"gpus": servers * 8, "topology": topo, "workload": workload, "tp": tp, "pp": pp, "dp": dp,
           "backend": backend, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "iteration_time_s": s["iteration_time_s"],
           "flows": s["flows"], "flows_per_wall_s": round(s["flows"] / wall),
           "peak_rss_mib": round(_peak_rss_mib(), 1)}
    if measure_memory:
        import tracemalloc
        out["tracemalloc_peak_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
        tracemalloc.stop()
    net = s.get("network", {})
    for k in ("switched_flows", "recomputations", "completion_instants", "rate_updates", "recompute_wall_s",
              "max_component_flows", "port_fair_solves"):
        if k in net:
            out[k] = net[k]
    return out


@benchmark("flow_gpt3b_32gpu")
def bench_gpt3b_32gpu() -> dict:
    """GPT-3B, t=2 p=2 d=8, one iteration at real sizes on 4 x 8 GPUs (target <= 10 s)."""
    out = gpt_step(4, tp=2, pp=2, dp=8)
    out["target_wall_s"] = 10.0
    return out


@benchmark("flow_gpt_1024gpu")
def bench_gpt_1024gpu() -> dict:
    """GPT-3B, t=8 p=4 d=32 on 128 x 8 GPUs (leaf-spine): target <= 300 s, <= 4 GiB."""
    out = gpt_step(128, tp=8, pp=4, dp=32)
    out["target_wall_s"] = 300.0
    out["target_peak_mib"] = 4096
    return out


@benchmark("flow_gpt_scaling")
def bench_gpt_scaling() -> dict:
    """Wall time vs GPUs (64, 256, 1,024; t=8 p=4, d = GPUs/32, global batch 512) and vs flows.

    ``us_per_flow`` is wall µs per flow; ``us_per_flow_vs_64`` its ratio to the
    64-GPU run (1.0 = wall time linear in the number of flows).
    """
    rows = {}
    first = None
    for servers in (8, 32, 128):
        r = gpt_step(servers, tp=8, pp=4, dp=servers * 8 // 32)
        row = {k: r[k] for k in ("wall_s", "cpu_s", "flows", "flows_per_wall_s", "iteration_time_s",
                                 "peak_rss_mib", "recomputations", "completion_instants", "rate_updates", "recompute_wall_s")
               if k in r}
        row["us_per_flow"] = round(r["wall_s"] / r["flows"] * 1e6, 2)
        row["recomputations_per_flow"] = round(r["recomputations"] / r["flows"], 3)
        first = first or row["us_per_flow"]
        row["us_per_flow_vs_64"] = round(row["us_per_flow"] / first, 2)
        rows[f"{servers * 8}_gpus"] = row
    return rows


@benchmark("flow_gpt_weak_scaling")
def bench_gpt_weak_scaling() -> dict:
    """Wall time vs flows when every GPU does the same work (64, 256, 1,024 GPUs).

    GPT-3B, t=8 p=4, d = GPUs/32 and global batch 16·d (4 micro-batches of 4
    per data-parallel rank), so the flows of a GPU are the same at every size
    and their number grows with the cluster; the 1,024-GPU run is the one of
    ``flow_gpt_1024gpu``. ``wall_ratio_vs_flow_ratio`` is (wall / wall at 64)
    ÷ (flows / flows at 64): 1.0 = wall time linear in the number of flows;
    ``loglog_slope_vs_64`` the exponent α of wall ∝ flows^α between 64 GPUs and
    this size (1.0 = linear). ``cost_per_flow_class``: wall time fitted as
    linear in the flows inside a server and those crossing a switch (the DP
    rings' share of the latter grows with d), with the fit's largest error.
    """
    rows = {}
    base = None
    for servers in (8, 32, 128):
        dp = servers * 8 // 32
        r = gpt_step(servers, tp=8, pp=4, dp=dp, global_batch=16 * dp)
        row = {k: r[k] for k in ("wall_s", "cpu_s", "flows", "switched_flows", "flows_per_wall_s", "iteration_time_s",
                                 "peak_rss_mib", "recomputations", "completion_instants", "rate_updates",
                                 "recompute_wall_s") if k in r}
        row["us_per_flow"] = round(r["wall_s"] / r["flows"] * 1e6, 2)
        row["recomputations_per_flow"] = round(r["recomputations"] / r["flows"], 3)
        base = base or (row["wall_s"], row["flows"])
        row["wall_ratio_vs_flow_ratio"] = round((row["wall_s"] / base[0]) / (row["flows"] / base[1]), 2)
        if row["flows"] != base[1]:
            row["loglog_slope_vs_64"] = round(math.log(row["wall_s"] / base[0]) / math.log(row["flows"] / base[1]), 3)
        rows[f"{servers * 8}_gpus"] = row
    rows["cost_per_flow_class"] = _class_fit(list(rows.values()))
    return rows


def _class_fit(rows: list[dict]) -> dict:
    """Least-squares fit wall_s = a·(flows inside a server) + b·(flows crossing a switch) over
    ``rows``: µs per flow of each class and the largest relative error of the fit (a small
    error = wall time linear in the flows of each class; the mix of classes is the workload's)."""
    import numpy as np
    if len(rows) < 3 or any("switched_flows" not in r for r in rows):
        return {}
    x = np.array([[r["flows"] - r["switched_flows"], r["switched_flows"]] for r in rows], dtype=float)
    y = np.array([r["wall_s"] for r in rows])
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    err = np.abs(x @ coef - y) / y
    return {"us_per_local_flow": round(float(coef[0]) * 1e6, 2), "us_per_switched_flow": round(float(coef[1]) * 1e6, 2),
            "switched_share": [round(r["switched_flows"] / r["flows"], 4) for r in rows],
            "max_fit_rel_err": round(float(err.max()), 3)}


@benchmark("flow_vs_packet_gpt_small")
def bench_flow_vs_packet_small() -> dict:
    """Packet vs flow backend on the reduced GPT steps (8 and 32 GPUs): speed-up and agreement."""
    from ..runtime import run_training
    out = {}
    for topo, wl in (("gpu_cluster:servers=2,gpus_per_server=4", "gpt-1.5b-t2p2d2-small.yaml"),
                     ("gpu_cluster:servers=4,gpus_per_server=8", "gpt-3b-t2p2d8-small.yaml")):
        row = {}
        for be in ("flow", "packet"):
            t0, c0 = time.perf_counter(), time.process_time()
            s = run_training(topo, _workload(wl), backend=be, progress=False)
            row[be] = {"wall_s": round(time.perf_counter() - t0, 3), "cpu_s": round(time.process_time() - c0, 3),
                       "iteration_time_s": s["iteration_time_s"], "flows": s["flows"]}
        row["speedup"] = round(row["packet"]["cpu_s"] / row["flow"]["cpu_s"], 1)
        row["iteration_rel_diff"] = round(abs(row["flow"]["iteration_time_s"] - row["packet"]["iteration_time_s"])
                                          / row["packet"]["iteration_time_s"], 5)
        out[wl] = row
    return out


def opgraph_generation(servers: int, *, tp: int, pp: int, dp: int, topology: str,
                       overrides: dict | None = None) -> dict:
    """CPU seconds to generate and wire iteration 0's op graph (what :class:`Executor` does before
    the first event), without simulating it; ``ops`` and dependency edges for scale."""
    import simpy

    from ..runtime.job import make_builder
    from ..runtime.executor import Executor
    from ..topology import load_topology
    from ..workloads import load_workload, place
    from ..workloads.placement import resolve_partition
    over = {"parallelism.tp": tp, "parallelism.pp": pp, "parallelism.dp": dp, **(overrides or {})}
    graph = load_topology(topology)
    wl = load_workload(_workload("gpt-3b-t2p2d8.yaml"), overrides=over)
    pl = place(wl, graph)
    wl = resolve_partition(wl, pl, graph)

    class _NoNetwork:                      # the executor reads only ``env`` before the first event runs
        env = simpy.Environment()

    c0 = time.process_time()
    ex = Executor(_NoNetwork(), make_builder(wl, pl, 0), pl.gpu_of)
    ex.iterations, ex.finished = 1, _NoNetwork.env.event()
    ex._generate(0)
    cpu = time.process_time() - c0
    ops = ex.iteration_ops[0]
    return {"gpus": servers * 8, "topology": topology, "ops": len(ops), "dependency_edges": sum(op.pending for op in ops),
            "cpu_s": round(cpu, 2), "us_per_op": round(cpu / len(ops) * 1e6, 3), "peak_rss_mib": round(_peak_rss_mib(), 1)}


@benchmark("opgraph_gpt175b_8192gpu")
def bench_opgraph_175b_8192gpu() -> dict:
    """Op-graph generation of one GPT-3 175 B step, t=8 p=16 d=64 on gpu_clos3 (8,192 GPUs; 8.4 M ops)."""
    return opgraph_generation(1024, tp=8, pp=16, dp=64, topology="gpu_clos3:servers=1024",
                              overrides=GPT175B_OVERRIDES)


@benchmark("flow_gpt175b_8192gpu")
def bench_gpt175b_8192gpu() -> dict:
    """One GPT-3 175 B step, t=8 p=16 d=64 on gpu_clos3 (8,192 GPUs), flow backend: target ≤ 300 s, ≤ 8 GiB."""
    out = gpt_step(1024, tp=8, pp=16, dp=64, topology="gpu_clos3:servers=1024", overrides=GPT175B_OVERRIDES)
    out["target_wall_s"] = 300.0
    out["target_peak_mib"] = 8192
    return out
