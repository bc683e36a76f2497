"""Speed figures of the README and docs/flow-backend.md, as CPU seconds, counts and ratios (slow, ~1–2 min).

Wall time depends on the machine's load; the process CPU time
(``time.process_time``) much less, and a ratio of two CPU times measured in
the same run less still. So the docs state speeds as CPU seconds and
flow ÷ packet CPU ratios, and this script rechecks them loosely
(:data:`TOLERANCE`: 400 % for absolute CPU seconds and ratios against a fixed
reference, 100 % for ratios measured in one run); counts and simulated times
are deterministic and rechecked at 1 %. Measured, seed 0:

* the README's quickstart, ``netsim run topologies/leaf_spine_64gpu.yaml
  workloads/gpt-3b-t2p2d8-small.yaml --cc dcqcn`` (packet backend, traces
  written to a temporary folder): CPU seconds;
* ``netsim bench flow_ring_allreduce_256`` (1 GB ring all-reduce, 256 hosts,
  flow backend): CPU seconds without and with ``fct.csv``, transfers per CPU
  second, and the ratio to SimGrid's ~16 s (an external figure);
* ``netsim bench flow_gpt3b_32gpu`` (GPT-3B t=2 p=2 d=8 full size, flow):
  CPU seconds, flows, iteration time;
* ``netsim bench flow_vs_packet_gpt_small`` (GPT-1.5B reduced on 8 GPUs,
  GPT-3B reduced on 32 GPUs, both backends): CPU seconds, their ratio and the
  iteration times. The flow runs take tens of milliseconds, so each is the
  best of three after a warm-up run (imports, caches); the packet runs are single.

Left out: wall seconds and peak RSS (the RSS of one process that ran the
other cases first says nothing about one case), and ``flow_gpt_1024gpu``
(about 40 s of CPU by itself; docs/flow-backend.md keeps it dated).
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time

from . import ROOT, Figure

SEED = 0
SLOW = True                    # about 30 s of CPU, 1–2 min under load
FLOW_DOC, README = "docs/flow-backend.md", "README.md"
#: SimGrid's wall time for the same 256-host ring (the flow-backend benchmark's external reference, s)
SIMGRID_RING256_S = 16.0
#: repeats of each flow-backend small step (best of, after one warm-up run)
FLOW_REPEATS = 3
SMALL = {"8": ("gpu_cluster:servers=2,gpus_per_server=4", "gpt-1.5b-t2p2d2-small.yaml"),
         "32": ("gpu_cluster:servers=4,gpus_per_server=8", "gpt-3b-t2p2d8-small.yaml")}
_CPU = ("quickstart_cpu_s", "ring_cpu_s", "ring_csv_cpu_s", "ring_k_transfers_per_cpu_s", "ring_vs_simgrid",
        "gpt32_cpu_s", "small8_packet_cpu_s", "small8_flow_cpu_s", "small32_packet_cpu_s", "small32_flow_cpu_s")
TOLERANCE = {**{k: 4.0 for k in _CPU}, "small8_ratio": 1.0, "small32_ratio": 1.0}

FIGURES = [
    Figure("quickstart", README, "(about {quickstart_cpu_s:.0f} s of CPU, by `tools/docfigures/speed_tables.py`, "
           "rechecked loosely)"),
    Figure("readme_ring", README, "({ring_sim_ms:.3f} ms); {ring_cpu_s:.2f} s of CPU (`netsim bench "
           "flow_ring_allreduce_256`, [docs/flow-backend.md](docs/flow-backend.md)) |"),
    Figure("readme_gpt", README, "{small8_ratio:.0f}× less CPU time ({small8_flow_cpu_s:.2f} vs "
           "{small8_packet_cpu_s:.1f} s) |"),
    Figure("ring", FLOW_DOC, "130,560 transfers | {ring_cpu_s:.2f} s of CPU ({ring_k_transfers_per_cpu_s:.0f} k "
           "transfers per CPU second); {ring_csv_cpu_s:.2f} s with fct.csv streamed to disk;"),
    Figure("ring_simgrid", FLOW_DOC, "(SimGrid: ~16 s wall, so about {ring_vs_simgrid:.0f}×) |"),
    Figure("gpt32", FLOW_DOC, "4 × 8 GPUs | {gpt32_cpu_s:.2f} s of CPU, {gpt32_flows:,.0f} flows, iteration "
           "{gpt32_iter_s:.3f} s |"),
    Figure("small", FLOW_DOC, "8 GPUs: packet {small8_packet_cpu_s:.2f} s vs flow {small8_flow_cpu_s:.3f} s CPU "
           "({small8_ratio:.0f}×), iterations {small8_packet_ms:.4f} vs {small8_flow_ms:.4f} ms; 32 GPUs: "
           "{small32_packet_cpu_s:.2f} s vs {small32_flow_cpu_s:.3f} s ({small32_ratio:.0f}×), "
           "{small32_packet_ms:.4f} vs {small32_flow_ms:.4f} ms |"),
]


def _cpu(fn):
    """``fn()`` and the CPU seconds it took."""
    c0 = time.process_time()
    out = fn()
    return out, time.process_time() - c0


def _quickstart() -> float:
    """CPU seconds of the README's quickstart command, run in-process with traces on."""
    from netsim.cli import main
    with tempfile.TemporaryDirectory() as out:
        old = os.getcwd()
        os.chdir(ROOT)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                status, cpu = _cpu(lambda: main(["run", "topologies/leaf_spine_64gpu.yaml",
                                                 "workloads/gpt-3b-t2p2d8-small.yaml", "--cc", "dcqcn",
                                                 "--seed", str(SEED), "--out", out, "--quiet"]))
        finally:
            os.chdir(old)
    if status not in (0, None):
        raise RuntimeError(f"quickstart exited {status}: {err.getvalue().strip()}")
    return cpu


def _ring() -> dict:
    from netsim.bench.flow import ring_allreduce_star
    r = ring_allreduce_star(256, 10**9)
    with tempfile.TemporaryDirectory() as d:
        csv_cpu = ring_allreduce_star(256, 10**9, csv_dir=d)["cpu_s"]
    return {"ring_cpu_s": r["cpu_s"], "ring_csv_cpu_s": csv_cpu, "ring_sim_ms": r["sim_time_ns"] / 1e6,
            "ring_k_transfers_per_cpu_s": r["transfers"] / r["cpu_s"] / 1e3,
            "ring_vs_simgrid": SIMGRID_RING256_S / r["cpu_s"]}


def _small(gpus: str) -> dict:
    from netsim.runtime import run_training
    topo, wl = SMALL[gpus]
    path = os.path.join(ROOT, "workloads", wl)

    def step(backend):
        return lambda: run_training(topo, path, backend=backend, seed=SEED, progress=False)["iteration_time_s"]

    step("flow")()                                               # warm-up
    flow = [_cpu(step("flow")) for _ in range(FLOW_REPEATS)]
    flow_iter, flow_cpu = flow[0][0], min(c for _, c in flow)
    pkt_iter, pkt_cpu = _cpu(step("packet"))
    return {f"small{gpus}_flow_cpu_s": flow_cpu, f"small{gpus}_packet_cpu_s": pkt_cpu,
            f"small{gpus}_ratio": pkt_cpu / flow_cpu, f"small{gpus}_flow_ms": flow_iter * 1e3,
            f"small{gpus}_packet_ms": pkt_iter * 1e3}


def measure() -> dict:
    """CPU seconds, ratios, counts and simulated times of the cases above."""
    from netsim.bench.flowgpt import gpt_step
    out = {"quickstart_cpu_s": _quickstart()}
    out.update(_ring())
    g = gpt_step(4, tp=2, pp=2, dp=8)
    out.update({"gpt32_cpu_s": g["cpu_s"], "gpt32_flows": g["flows"], "gpt32_iter_s": g["iteration_time_s"]})
    for gpus in SMALL:
        out.update(_small(gpus))
    return out
