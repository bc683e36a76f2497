"""Flow vs packet backend on collectives and training steps ("Other scenarios" of docs/flow-backend.md).

* ring all-reduce of 8 MB over 4 GPUs on 4 servers (one GPU per server of
  ``gpu_cluster:servers=4,gpus_per_server=2``, every step crosses the fabric):
  completion time on each backend, and per-flow FCT errors;
* one iteration of ``workloads/gpt-1.5b-t2p2d2-small.yaml`` on
  ``gpu_cluster:servers=2,gpus_per_server=4`` (t=2, p=2, d=2, 8 GPUs);
* lossy Cubic: 16-to-1 incast of 1 MB, PFC off, 1 MB buffer — mean-FCT and
  last-completion errors, packet drops.
Packet and flow defaults, ``--cc none`` unless named, seed 0.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "validation"))  # flow_scenarios

import os

from . import ROOT, Figure

SEED = 0
SLOW = True
DOC = "docs/flow-backend.md"
RING_TOPO = "gpu_cluster:servers=4,gpus_per_server=2"
GPT_TOPO, GPT_WORKLOAD = "gpu_cluster:servers=2,gpus_per_server=4", "workloads/gpt-1.5b-t2p2d2-small.yaml"

FIGURES = [
    Figure("ring", DOC, "| ring all-reduce 8 MB, 4 GPUs on 4 servers (`gpu_cluster:servers=4,gpus_per_server=2`) "
           "| {ring_flow_us:.1f} µs | {ring_packet_us:.1f} µs | {ring_err:.1%} (per flow: median "
           "{ring_median:.1%}, p95 {ring_p95:.1%}) | ≤ 5 % ✓ |"),
    Figure("gpt", DOC, "| GPT-1.5B reduced, t=2 p=2 d=2, 8 GPUs — iteration | {gpt_flow_ms:.4f} ms | "
           "{gpt_packet_ms:.4f} ms | {gpt_err:.2%} | ≤ 5 % ✓ |"),
    Figure("cubic_lossy", DOC, "| lossy Cubic incast 16-to-1 × 1 MB, PFC off, 1 MB buffer ({cubic_drops:.0f} drops) "
           "| – | – | mean FCT {cubic_mean:.1%}, last {cubic_last:.1%} | ≤ 15 % ✓ |"),
    Figure("cubic_prose", DOC, "it meets the lossy criteria (mean {cubic_mean:.1%}, last {cubic_last:.1%})"),
    Figure("readme_gpt", "README.md", "| small GPT step (GPT-1.5B reduced, t=2 p=2 d=2, 8 GPUs), flow vs packet "
           "backend | packet backend | iteration time {gpt_err:.2%} apart;"),
]


def _ring(backend):
    import simpy

    from netsim.backends.base import TraceSinks, create_backend
    from flow_scenarios import load_graph
    from netsim.collectives.api import run_collective
    from netsim.records import ListSink
    from netsim.topology import gpus
    g = load_graph(RING_TOPO)
    env, sink = simpy.Environment(), ListSink()
    b = create_backend(backend, g, env=env, cc="none", seed=SEED, sinks=TraceSinks(fct=sink))
    proc = run_collective(b, "allreduce", gpus(g)[::2], 8_000_000, algorithm="ring")
    env.run()
    res = proc.value
    return (res.end_ps - res.start_ps) / 1e6, sorted(sink.rows, key=lambda r: (r.step, r.src))


def _gpt(backend):
    from netsim.runtime import run_training
    return run_training(GPT_TOPO, os.path.join(ROOT, GPT_WORKLOAD), backend=backend, seed=SEED,
                        progress=False)["iteration_time_s"]


def _lossy_cubic() -> dict:
    from flow_scenarios import compare_fct, incast, load_graph, run_flows_on
    sc = incast(16, 1_000_000)
    g = load_graph(sc.topology)
    params = {"pfc": "off", "buffer_bytes": "1MB"}
    f = run_flows_on("flow", g, sc.flows, cc="cubic", params=params, seed=SEED)[0]
    p, st, _ = run_flows_on("packet", g, sc.flows, cc="cubic", params=params, seed=SEED)
    c = compare_fct(f, p)
    return {"cubic_mean": c["mean_fct_rel_err"], "cubic_last": c["last_completion_rel_err"],
            "cubic_drops": st.get("drops", 0)}


def measure() -> dict:
    """Times in µs / ms, errors as fractions, drops as a count."""
    from flow_scenarios import compare_fct
    (tf, rf), (tp, rp) = _ring("flow"), _ring("packet")
    c = compare_fct(rf, rp)
    out = {"ring_flow_us": tf, "ring_packet_us": tp, "ring_err": abs(tf - tp) / tp,
           "ring_median": c["median_rel_err"], "ring_p95": c["p95_rel_err"]}
    gf, gp = _gpt("flow"), _gpt("packet")
    out.update({"gpt_flow_ms": gf * 1e3, "gpt_packet_ms": gp * 1e3, "gpt_err": abs(gf - gp) / gp})
    out.update(_lossy_cubic())
    return out
