"""Training-step benchmarks: a GPT-3B step with t=2, p=2, d=8 on 32 GPUs.

* ``gpt3b_t2p2d8_analytic`` — workloads/gpt-3b-t2p2d8.yaml (full sizes:
  32 layers, h=2560, s=2048, micro-batch 4, 16 micro-batches) on 32 GPUs of
  topologies/leaf_spine_64gpu.yaml, analytic backend;
* ``gpt3b_small_packet`` — workloads/gpt-3b-t2p2d8-small.yaml, same
  parallelism and topology, reduced sizes for the packet backend (4 layers,
  h=512, s=256, V=8192, micro-batch 1, 4 micro-batches).

Figures: wall seconds, simulated iteration time, ops, flows, SimPy events
scheduled, events per wall second and that rate over the bare SimPy ceiling.
"""
from __future__ import annotations

import os
import time

from . import benchmark, simpy_ceiling

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPOLOGY = os.path.join(_ROOT, "topologies", "leaf_spine_64gpu.yaml")


def _bench(workload: str, backend: str) -> dict:
    from ..runtime import run_training
    t0 = time.perf_counter()
    s = run_training(TOPOLOGY, os.path.join(_ROOT, "workloads", workload), backend=backend, progress=False)
    wall = time.perf_counter() - t0
    events = s.get("sim_events") or 0
    ceiling = simpy_ceiling()
    return {"workload": workload, "backend": backend, "gpus": s["parallelism"]["gpus"], "wall_s": round(wall, 3),
            "iteration_time_s": s["iteration_time_s"], "apnet_iteration_time_s": s["apnet_iteration_time_s"],
            "ops": s["ops"], "flows": s["flows"], "sim_events": events,
            "events_per_s": round(events / wall) if wall > 0 else None,
            "ratio_to_simpy_ceiling": round(events / wall / ceiling, 3) if wall > 0 else None}


@benchmark("gpt3b_t2p2d8_analytic")
def gpt3b_t2p2d8_analytic() -> dict:
    """GPT-3B (2.65B params), t=2 p=2 d=8, full sizes, analytic backend."""
    return _bench("gpt-3b-t2p2d8.yaml", "analytic")


@benchmark("gpt3b_small_packet")
def gpt3b_small_packet() -> dict:
    """GPT-3B-shaped t=2 p=2 d=8 step with reduced sizes (gpt-3b-t2p2d8-small), packet backend."""
    return _bench("gpt-3b-t2p2d8-small.yaml", "packet")
