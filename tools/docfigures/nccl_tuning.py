"""NCCL's algorithm/protocol choice on an 8-GPU H100 NVSwitch server (docs/collectives.md).

``gpu_server("s0", gpus=8)`` (450 GB/s NVLink per GPU); all-reduce sizes 8 KiB …
1 GiB. Per size: the choice of NCCL's tuning model (netsim.collectives.tuning,
constants of NCCL commit b6475625) as a code (:data:`CODES`) and its predicted
time, without and with ``nvls: true`` on the NVSwitch; and the bus bandwidth
the analytic backend simulates with ``algorithm="auto"``, ``protocol="auto"``,
``sw_latency="nccl"`` (seed 0).
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = False
N_GPUS = 8
#: (algorithm, protocol) -> code printed in the table (docs/collectives.md gives the legend)
CODES = {("ring", "ll"): 1, ("ring", "ll128"): 2, ("ring", "simple"): 3, ("tree", "ll"): 4,
         ("tree", "ll128"): 5, ("tree", "simple"): 6, ("nvls", "simple"): 7, ("collnet", "simple"): 8}
SIZES = {"8k": (8 * 2**10, "8 KiB"), "32k": (32 * 2**10, "32 KiB"), "128k": (128 * 2**10, "128 KiB"),
         "512k": (512 * 2**10, "512 KiB"), "2m": (2 * 2**20, "2 MiB"), "8m": (8 * 2**20, "8 MiB"),
         "32m": (32 * 2**20, "32 MiB"), "128m": (128 * 2**20, "128 MiB"), "512m": (512 * 2**20, "512 MiB"),
         "1g": (2**30, "1 GiB")}

FIGURES = [
    Figure(f"choice_{key}", "docs/collectives.md",
           f"| {label} | {{{key}_code:.0f}} | {{{key}_time_us:.1f}} | {{{key}_sim_busbw_gbps:.0f}} | "
           f"{{{key}_nvls_code:.0f}} | {{{key}_nvls_time_us:.1f}} |")
    for key, (_, label) in SIZES.items()
] + [
    Figure("nvls_speedup", "docs/collectives.md",
           "with NVLS enabled the model picks it from {nvls_first_kib:.0f} KiB up, {nvls_speedup_1g:.2f}× faster "
           "than its ring choice at 1 GiB"),
]


def measure() -> dict:
    """Model choice code and time (nvls off / on) and simulated auto busbw per size."""
    from netsim.backends.base import create_backend
    from netsim.collectives import bus_bandwidth, run_collective, tuning
    from netsim.collectives.protocol import topology_facts
    from netsim.topology import gpu_server
    g = gpu_server("s0", gpus=N_GPUS)
    nodes = [f"s0.gpu{i}" for i in range(N_GPUS)]
    g_nvls = gpu_server("s0", gpus=N_GPUS)
    g_nvls.nodes["s0.nvs0"]["nvls"] = True
    facts, facts_nvls = topology_facts(g, nodes), topology_facts(g_nvls, nodes)
    out = {}
    for key, (size, _) in SIZES.items():
        for suffix, f in (("", facts), ("_nvls", facts_nvls)):
            best = tuning.choose("allreduce", size, f)
            out[f"{key}{suffix}_code"] = CODES[(best.algorithm, best.protocol)]
            out[f"{key}{suffix}_time_us"] = best.time_us(size)
        be = create_backend("analytic", g, seed=SEED)
        p = run_collective(be, "allreduce", nodes, size, algorithm="auto", protocol="auto", sw_latency="nccl")
        be.env.run()
        out[f"{key}_sim_busbw_gbps"] = bus_bandwidth("allreduce", N_GPUS, size, p.value.time_s) / 1e9
    nvls_sizes = [size for key, (size, _) in SIZES.items() if out[f"{key}_nvls_code"] == CODES[("nvls", "simple")]]
    out["nvls_first_kib"] = min(nvls_sizes) / 1024
    out["nvls_speedup_1g"] = out["1g_time_us"] / out["1g_nvls_time_us"]
    return out
