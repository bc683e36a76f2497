"""Ring all-reduce bus bandwidth on one 8-GPU NVSwitch server (README and docs/collectives.md).

``gpu_server("s0", gpus=8)`` (each GPU on one NVLink to the NVSwitch), ring
all-reduce of 64 MiB and 1 GiB on the packet and analytic backends, seed 0;
bus bandwidth as nccl-tests defines it (algbw × 2(n − 1)/n), as a fraction of
the GPU's NVLink rate.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = True
N_GPUS = 8
SIZES = {"64mib": 64 * 2**20, "1gib": 2**30}

FIGURES = [
    Figure("collectives_64mib", "docs/collectives.md",
           "64 MiB → busbw {64mib_packet_gbps:.0f} Gbps = **{64mib_packet_frac:.1%}** of the link rate (analytic "
           "{64mib_analytic_gbps:.0f} Gbps = {64mib_analytic_frac:.1%}); packet/analytic time {64mib_ratio:.3f}"),
    Figure("readme_1gib", "README.md", "| nccl-tests busbw ≥ 90 % of NVLink rate | {1gib_packet_frac:.1%} |"),
]


def _time_s(backend, graph, nodes, size):
    from netsim.backends.base import create_backend
    from netsim.collectives import run_collective
    be = create_backend(backend, graph, seed=SEED)
    p = run_collective(be, "allreduce", nodes, size)
    be.env.run()
    return p.value.time_s


def measure() -> dict:
    """busbw (Gb/s and fraction of the NVLink rate) per size and backend, and the time ratio."""
    from netsim.collectives import bus_bandwidth
    from netsim.topology import gpu_server
    g = gpu_server("s0", gpus=N_GPUS)
    nodes = [f"s0.gpu{i}" for i in range(N_GPUS)]
    link = g.edges["s0.gpu0", "s0.nvs0"]["rate_bps"]
    out = {}
    for key, size in SIZES.items():
        t = {b: _time_s(b, g, nodes, size) for b in ("packet", "analytic")}
        for b, ts in t.items():
            bb = bus_bandwidth("allreduce", N_GPUS, size, ts)
            out[f"{key}_{b}_gbps"], out[f"{key}_{b}_frac"] = bb / 1e9, bb / link
        out[f"{key}_ratio"] = t["packet"] / t["analytic"]
    return out
