"""Benchmarks of the flow-level backend (``netsim bench flow_...``).

* ``flow_ring_allreduce_256`` — 1 GB ring all-reduce on 256 hosts of a
  100 Gbps star (2·255 steps, 130,560 transfers): wall time, transfers per wall
  second, simulated time against 2(n−1)·(α + S/(n·B_eff)), where B_eff is the
  payload rate after headers and α the lone-transfer latency of one step.
  SimGrid 4.1 takes about 16 s for the same all-reduce on this machine (issue 6).
* ``flow_recompute_cost`` — wall cost of one max-min recomputation against the
  number of active flows (random permutations on a k=16 fat-tree).
* ``flow_dp_rings_1024gpu`` — the contended worst case: 32 concurrent
  32-rank ring all-reduces across a 1,024-GPU leaf-spine, every hop on the
  fabric, lossless (port fairness and PFC head-of-line pauses).

The training-step benchmarks are in :mod:`netsim.bench.flowgpt`.
"""
from __future__ import annotations

import gc
import os
import random
import tempfile
import time

import networkx as nx
import simpy

from ..sinks import Sink
from . import benchmark


class _CountSink(Sink):
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
        "recomputations": b.net.recomputations, "simgrid_reference_wall_s": 16.0,
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
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        b.net.recompute()
        return time.perf_counter() - t0
    finally:
        gc.enable()


@benchmark("flow_recompute_cost")
def bench_recompute_cost() -> dict:
    """Cost of one rate recomputation vs active flows (max-min and port-fair solvers)."""
    return {"maxmin": recompute_cost(), "port": recompute_cost((50, 100, 250, 500), fairness="port")}


def dp_rings(servers: int = 128, size_bytes: int = 16_000_000, groups: int = 32) -> dict:
    """``groups`` concurrent ring all-reduces of ``size_bytes`` on a ``servers`` × 8-GPU
    ``gpu_cluster`` leaf-spine, ranks placed as data-parallel groups of t=8, p=4 (rank r of
    group g on server ``g // 8 + 4r``, GPU ``g % 8``): every ring hop crosses the fabric and
    ECMP collisions on the 800 Gb/s leaf uplinks couple the rings into components."""
    from ..backends.base import TraceSinks, create_backend
    from ..collectives.api import run_collective
    from ..topology import load_topology
    g = load_topology(f"gpu_cluster:servers={servers},gpus_per_server=8")
    env = simpy.Environment()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=_CountSink()))
    step = servers // 32 if servers >= 32 else 1
    procs = []
    for grp in range(groups):
        nodes = [f"s{grp // 8 + step * r}.gpu{grp % 8}" for r in range(32) if grp // 8 + step * r < servers]
        procs.append(run_collective(b, "allreduce", nodes, size_bytes, algorithm="ring"))
    t0, c0 = time.perf_counter(), time.process_time()
    env.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    st = b.stats()
    n = len(nodes)
    hop = b.router.path(nodes[0], nodes[1])
    hop_bps = min(g.edges[u, v]["rate_bps"] for u, v in zip(hop, hop[1:]))
    bound_ns = 2 * (n - 1) / n * size_bytes * 8 / hop_bps * 1e9   # each rank at its path's bottleneck
    return {"gpus": servers * 8, "rings": groups, "ranks": n, "size_bytes": size_bytes, "flows": st["flows"],
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "us_per_flow": round(wall / st["flows"] * 1e6, 1),
            "recomputations": st["recomputations"], "component_solves": st["component_solves"],
            "port_fair_solves": st["port_fair_solves"], "max_component_flows": st["max_component_flows"],
            "recompute_wall_s": st["recompute_wall_s"], "sim_time_ns": st["sim_time_ns"],
            "nic_bound_ns": round(bound_ns), "slowdown_vs_nic_bound": round(st["sim_time_ns"] / bound_ns, 3)}


@benchmark("flow_dp_rings_1024gpu")
def bench_dp_rings() -> dict:
    """32 concurrent 16 MB ring all-reduces of 32 ranks on 128 x 8 GPUs, all on the fabric (worst case).

    Every flow crosses the leaf-spine; ECMP collisions couple the rings into
    port-fair components of 10-43 flows re-solved at nearly every completion.
    """
    return dp_rings()
