"""NVLS simulated against the ring on an 8-GPU H100 NVSwitch server (docs/collectives.md).

``gpu_server("s0", gpus=8)`` with ``nvls: true`` on its NVSwitch (450 GB/s
NVLink per GPU, 100 ns); all-reduce of 64 MiB with ``algorithm="ring"`` and
``algorithm="nvls"`` (NCCL's 128 KiB NVLS chunks, no software latency) on the
analytic and flow backends (seed 0): the simulated bus bandwidth of each and
NVLS's speed-up over the ring, against the ratio 2(n−1)/n = 1.75 of their
per-GPU link loads.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = False
N_GPUS = 8
SIZE_BYTES = 64 * 2**20

FIGURES = [
    Figure("nvls_sim", "docs/collectives.md",
           "a 64 MiB all-reduce on the 8-GPU H100 server with `nvls: true` simulates at "
           "{ring_busbw_gbps:.0f} Gbps bus bandwidth as a ring and {nvls_busbw_gbps:.0f} Gbps as NVLS on the "
           "analytic backend ({speedup:.2f}× faster; flow: {flow_speedup:.2f}×; the link-load bound is 1.75×)"),
]


def measure() -> dict:
    """Simulated busbw of ring and NVLS all-reduce (analytic) and the speed-ups (analytic, flow)."""
    from netsim.backends.base import create_backend
    from netsim.collectives import bus_bandwidth, run_collective
    from netsim.topology import gpu_server
    g = gpu_server("s0", gpus=N_GPUS)
    g.nodes["s0.nvs0"]["nvls"] = True
    nodes = [f"s0.gpu{i}" for i in range(N_GPUS)]
    t = {}
    for backend in ("analytic", "flow"):
        for algo in ("ring", "nvls"):
            be = create_backend(backend, g, seed=SEED)
            p = run_collective(be, "allreduce", nodes, SIZE_BYTES, algorithm=algo)
            be.env.run()
            t[backend, algo] = p.value.time_s
    bus = lambda s: bus_bandwidth("allreduce", N_GPUS, SIZE_BYTES, s) / 1e9   # noqa: E731
    return {"ring_busbw_gbps": bus(t["analytic", "ring"]), "nvls_busbw_gbps": bus(t["analytic", "nvls"]),
            "speedup": t["analytic", "ring"] / t["analytic", "nvls"],
            "flow_speedup": t["flow", "ring"] / t["flow", "nvls"]}
