"""Ring all-reduce bus bandwidth on one 8-GPU NVSwitch server (README and docs/collectives.md).

``gpu_server("s0", gpus=8)`` (each GPU on one NVLink to the NVSwitch), ring
all-reduce on the packet and analytic backends, seed 0; bus bandwidth as
nccl-tests defines it (algbw × 2(n − 1)/n).

* without software latency, 64 MiB and 1 GiB, as a fraction of the GPU's NVLink rate;
* with NCCL's software latency (``sw_latency="nccl"``: ring/Simple on NVLink, 8.4 us
  per call + 3.4 us per step, tuning.cc), 8 KiB … 512 MiB, packet (network defaults: an ACK
  on an NVLink-only path is one 16-byte flit, ``nvlink_ack_bytes``), analytic and the closed form ``launch + 2(n−1)(a + step) + 2(n−1)/n · 8S/B``.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = True
N_GPUS = 8
SIZES = {"64mib": 64 * 2**20, "1gib": 2**30}
#: sizes of the software-latency table: key -> (bytes, label)
LAT_SIZES = {"8k": (8 * 2**10, "8 KiB"), "128k": (128 * 2**10, "128 KiB"), "2m": (2 * 2**20, "2 MiB"),
             "32m": (32 * 2**20, "32 MiB"), "512m": (512 * 2**20, "512 MiB")}
PACKET_LAT_PARAMS: dict = {}

FIGURES = [
    Figure("collectives_64mib", "docs/collectives.md",
           "64 MiB → busbw {64mib_packet_gbps:.0f} Gbps = **{64mib_packet_frac:.1%}** of the link rate (analytic "
           "{64mib_analytic_gbps:.0f} Gbps = {64mib_analytic_frac:.1%}); packet/analytic time {64mib_ratio:.3f}"),
    Figure("readme_1gib", "README.md", "| nccl-tests busbw ≥ 90 % of NVLink rate | {1gib_packet_frac:.1%} |"),
] + [
    Figure(f"sw_latency_{key}", "docs/collectives.md",
           f"| {label} | {{lat_{key}_packet_gbps:.1f}} | {{lat_{key}_analytic_gbps:.1f}} | "
           f"{{lat_{key}_closed_gbps:.1f}} | {{lat_{key}_packet_vs_analytic:+.2%}} |")
    for key, (_, label) in LAT_SIZES.items()
]


def _run(backend, graph, nodes, size, params=None, **kw):
    from netsim.backends.base import create_backend
    from netsim.collectives import run_collective
    be = create_backend(backend, graph, seed=SEED, params=params or {})
    p = run_collective(be, "allreduce", nodes, size, **kw)
    be.env.run()
    return be, p.value.time_s


def _latency_table(g, nodes) -> dict:
    from netsim.collectives import bus_bandwidth, closed_form_time_s
    from netsim.collectives.protocol import nccl_latency
    lat = nccl_latency("allreduce", "ring", "simple")
    out = {}
    for key, (size, _) in LAT_SIZES.items():
        be, t_a = _run("analytic", g, nodes, size, sw_latency="nccl")
        _, t_p = _run("packet", g, nodes, size, PACKET_LAT_PARAMS, sw_latency="nccl")
        a, b = be.path_alpha_beta(nodes[0], nodes[1])
        t_c = lat.launch_ns * 1e-9 + closed_form_time_s("allreduce", "ring", N_GPUS, size, b,
                                                        a + lat.step_ns * 1e-9)
        for name, t in (("packet", t_p), ("analytic", t_a), ("closed", t_c)):
            out[f"lat_{key}_{name}_gbps"] = bus_bandwidth("allreduce", N_GPUS, size, t) / 1e9
        out[f"lat_{key}_packet_vs_analytic"] = t_a / t_p - 1.0        # busbw ratio - 1
    return out


def measure() -> dict:
    """busbw per size and backend without and with software latency, and the time ratios."""
    from netsim.collectives import bus_bandwidth
    from netsim.topology import gpu_server
    g = gpu_server("s0", gpus=N_GPUS)
    nodes = [f"s0.gpu{i}" for i in range(N_GPUS)]
    link = g.edges["s0.gpu0", "s0.nvs0"]["rate_bps"]
    out = {}
    for key, size in SIZES.items():
        t = {b: _run(b, g, nodes, size)[1] for b in ("packet", "analytic")}
        for b, ts in t.items():
            bb = bus_bandwidth("allreduce", N_GPUS, size, ts)
            out[f"{key}_{b}_gbps"], out[f"{key}_{b}_frac"] = bb / 1e9, bb / link
        out[f"{key}_ratio"] = t["packet"] / t["analytic"]
    out.update(_latency_table(g, nodes))
    return out
