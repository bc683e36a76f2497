"""Benchmarks of the flow-level backend (``netsim bench flow_...``).

* ``flow_ring_allreduce_256`` — 1 GB ring all-reduce on 256 hosts of a
  100 Gbps star (2·255 steps, 130,560 transfers): wall time, transfers per wall
  second, simulated time against 2(n−1)·(α + S/(n·B_eff)), where B_eff is the
  payload rate after headers and α the lone-transfer latency of one step.
  SimGrid 4.1 takes about 16 s for the same all-reduce on this machine (issue 6).
* ``flow_recompute_cost`` — wall cost of one max-min recomputation against the
  number of active flows (random permutations on a k=16 fat-tree).
* ``flow_gpt3b_32gpu``, ``flow_gpt_1024gpu``, ``flow_gpt_scaling`` and
  ``flow_vs_packet_gpt_small`` — training iterations through
  :func:`netsim.runtime.run_training` (skipped with a note when the runtime is
  not available).
"""
from __future__ import annotations

import gc
import os
import random
import resource
import tempfile
import time

import networkx as nx
import simpy

from . import benchmark


class _CountSink:
    """Counts records and keeps nothing (a benchmark measures the simulation)."""

    def __init__(self):
        self.count = 0

    def add(self, _row) -> None:
        self.count += 1

    def flush(self) -> None:
        pass

    close = flush


def star(n: int, rate_bps: float = 100e9, delay_ns: int = 1000) -> nx.Graph:
    """``n`` hosts ``h0..h{n-1}`` on one switch ``sw``."""
    from ..topology import validate
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for i in range(n):
        g.add_node(f"h{i}", kind="host")
        g.add_edge("sw", f"h{i}", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    return validate(g)


def ring_allreduce_star(n: int = 256, size_bytes: int = 10**9, *, csv_dir: str | None = None) -> dict:
    """Run one ring all-reduce on an ``n``-host star on the flow backend; figures."""
    from ..backends.base import TraceSinks, create_backend
    from ..collectives.api import run_collective
    from ..records import FCT_COLUMNS, CsvSink
    g = star(n)
    env = simpy.Environment()
    sink = CsvSink(os.path.join(csv_dir, "fct.csv"), FCT_COLUMNS) if csv_dir else _CountSink()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=sink))
    hosts = [f"h{i}" for i in range(n)]
    t0, c0 = time.perf_counter(), time.process_time()
    proc = run_collective(b, "allreduce", hosts, size_bytes, algorithm="ring")
    env.run()
    sink.flush()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    res = proc.value
    sim_ns = (res.end_ps - res.start_ps) / 1000
    # closed form: 2(n-1) steps, each a lone transfer of S/n on its own up/down links
    mtu, hdr = b.params["mtu_bytes"], b.params["header_bytes"]
    b_eff = 100e9 / 8 * (mtu - hdr) / mtu                 # payload bytes/s
    chunk = size_bytes / n
    step_ideal_ns = b._ideal(g, ["h0", "sw", "h1"], int(chunk), mtu, hdr)
    alpha_ns = step_ideal_ns - chunk * mtu / (mtu - hdr) / (100e9 / 8) * 1e9
    formula_ns = 2 * (n - 1) / n * size_bytes / b_eff * 1e9 + 2 * (n - 1) * alpha_ns
    return {
        "hosts": n, "size_bytes": size_bytes, "transfers": res.flows, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
        "transfers_per_wall_s": round(res.flows / wall),
        "sim_time_ns": round(sim_ns), "formula_ns": round(formula_ns),
        "formula_raw_rate_ns": round(2 * (n - 1) / n * size_bytes * 8 / 100e9 * 1e9),
        "rel_err_vs_formula": round(abs(sim_ns - formula_ns) / formula_ns, 6),
        "alpha_per_step_ns": round(alpha_ns, 1), "payload_efficiency": round((mtu - hdr) / mtu, 5),
        "recomputations": b.recomputations, "simgrid_reference_wall_s": 16.0,
        "speedup_vs_simgrid": round(16.0 / wall, 1), "target_wall_s": 1.6,
        "traces": "fct.csv streamed" if csv_dir else "records counted, not written",
    }


@benchmark("flow_ring_allreduce_256")
def bench_ring_allreduce_256() -> dict:
    """1 GB ring all-reduce, 256 hosts on a 100 Gbps star (130,560 transfers): wall vs 1.6 s."""
    out = ring_allreduce_star(256, 10**9)
    with tempfile.TemporaryDirectory() as d:
        out["wall_s_with_fct_csv"] = ring_allreduce_star(256, 10**9, csv_dir=d)["wall_s"]
    return out


@benchmark("flow_ring_allreduce_scaling")
def bench_ring_allreduce_scaling() -> dict:
    """Wall time per transfer of a 1 GB ring all-reduce on 64 ... 1,024 hosts (star, 100 Gbps).

    One traffic pattern at every size (2n(n−1) transfers): ``us_per_transfer``
    flat means wall time linear in the number of flows.
    """
    rows = {}
    for n in (64, 128, 256, 512, 1024):
        r = ring_allreduce_star(n, 10**9)
        rows[f"{n}_hosts"] = {"transfers": r["transfers"], "wall_s": r["wall_s"],
                              "us_per_transfer": round(r["wall_s"] / r["transfers"] * 1e6, 2),
                              "rel_err_vs_formula": r["rel_err_vs_formula"]}
    return rows


def recompute_cost(active_counts=(100, 1000, 4000, 16000), k: int = 16, seed: int = 1,
                   fairness: str = "maxmin") -> dict:
    """Wall time of one full recomputation with N flows active (random pairs, k-ary fat-tree).

    ``fairness="maxmin"`` times the vectorized solver; ``"port"`` the port-fair
    solver (components above ``flow_port_fair_max_flows`` fall back to max-min).
    """
    from ..backends.base import TraceSinks, create_backend
    from ..topology import fat_tree, hosts
    g = fat_tree(k)
    hs = sorted(hosts(g))
    rng = random.Random(seed)
    out = {"topology": f"fat_tree(k={k}), {len(hs)} hosts", "fairness": fairness}
    for n in active_counts:
        env = simpy.Environment()
        b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=_CountSink()), seed=seed,
                           params={"flow_fairness": fairness, "flow_port_fair_max_flows": 10**6})
        for _ in range(n):
            s, d = rng.sample(hs, 2)
            b.send(s, d, 10**9)
        full = _timed_recompute(b)
        # incremental: one more flow arrives
        s, d = rng.sample(hs, 2)
        b.send(s, d, 10**9)
        inc = _timed_recompute(b)
        out[f"active_{n}"] = {"full_recompute_ms": round(full * 1e3, 2),
                              "one_arrival_ms": round(inc * 1e3, 2),
                              "component_flows": b.solver.max_component}
    return out


def _timed_recompute(b) -> float:
    """Seconds of one recomputation of ``b``'s pending changes, garbage collector off while
    timed (as :mod:`timeit` does): a full collection of the previous sizes' heaps would
    otherwise land in the window at random."""
    dirty, b._dirty = b._dirty, set()
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        b._recompute(dirty)
        return time.perf_counter() - t0
    finally:
        gc.enable()


@benchmark("flow_recompute_cost")
def bench_recompute_cost() -> dict:
    """Cost of one rate recomputation vs active flows (max-min and port-fair solvers)."""
    return {"maxmin": recompute_cost(), "port": recompute_cost((50, 100, 250, 500), fairness="port")}


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _workload(name: str) -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "workloads", name))


def gpt_step(servers: int, *, tp: int, pp: int, dp: int, workload: str = "gpt-3b-t2p2d8.yaml",
             backend: str = "flow", measure_memory: bool = False, global_batch: int | None = None,
             seed: int = 0) -> dict:
    """One iteration of ``workload`` with the given parallelism on ``servers`` 8-GPU servers
    (``seed``: the ECMP hash seed, which decides the fabric collisions)."""
    from ..runtime import run_training
    topo = f"gpu_cluster:servers={servers},gpus_per_server=8"
    over = {"parallelism.tp": tp, "parallelism.pp": pp, "parallelism.dp": dp}
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
    for k in ("recomputations", "rate_updates", "recompute_wall_s", "max_component_flows", "port_fair_solves"):
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
                                 "peak_rss_mib", "recomputations", "rate_updates", "recompute_wall_s") if k in r}
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
    ÷ (flows / flows at 64): 1.0 = wall time linear in the number of flows.
    """
    rows = {}
    base = None
    for servers in (8, 32, 128):
        dp = servers * 8 // 32
        r = gpt_step(servers, tp=8, pp=4, dp=dp, global_batch=16 * dp)
        row = {k: r[k] for k in ("wall_s", "cpu_s", "flows", "flows_per_wall_s", "iteration_time_s",
                                 "peak_rss_mib", "recomputations", "rate_updates", "recompute_wall_s") if k in r}
        row["us_per_flow"] = round(r["wall_s"] / r["flows"] * 1e6, 2)
        row["recomputations_per_flow"] = round(r["recomputations"] / r["flows"], 3)
        base = base or (row["wall_s"], row["flows"])
        row["wall_ratio_vs_flow_ratio"] = round((row["wall_s"] / base[0]) / (row["flows"] / base[1]), 2)
        rows[f"{servers * 8}_gpus"] = row
    return rows


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
