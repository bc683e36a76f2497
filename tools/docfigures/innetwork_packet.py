"""NVLS and CollNet on the packet backend against flow (docs/collectives.md).

``gpu_server("s0", gpus=8)`` with ``nvls: true`` on its NVSwitch (450 GB/s
NVLink per GPU, 100 ns): all-reduce of 64 MiB as a ring and as NVLS on the
packet and flow backends (seed 0, RoCE without congestion control, MTU 1500):
bus bandwidths, NVLS's speed-up over the ring, packet NVLS against flow NVLS,
and the payload each GPU link carries per second of the all-reduce (S in each
direction) as a fraction of its rate. Then CollNet all-reduce of 64 MiB on
topologies/rail_sharp_8gpu.yaml (2 servers × 4 GPUs, SHARP rail switches) on
both backends.
"""
from __future__ import annotations

from . import Figure

SEED = 0
SLOW = True
N_GPUS = 8
SIZE_BYTES = 64 * 2**20
NVLINK_BPS = 3.6e12

FIGURES = [
    Figure("innetwork_packet_nvls", "docs/collectives.md",
           "on the packet backend (the NVSwitch terminates and acknowledges each GPU's flows and sends "
           "the reduced and multicast chunks as its own flows) the 64 MiB all-reduce runs at "
           "{packet_ring_busbw_gbps:.0f} Gbps as a ring and {packet_nvls_busbw_gbps:.0f} Gbps as NVLS "
           "({packet_speedup:.2f}×), {packet_vs_flow_pct:.1f} % above flow's NVLS; each GPU link moves "
           "its S of payload each way at {packet_link_util_pct:.0f} % of its rate on packet against "
           "{flow_link_util_pct:.0f} % on flow"),
    Figure("innetwork_packet_collnet", "docs/collectives.md",
           "CollNet all-reduce of 64 MiB on topologies/rail_sharp_8gpu.yaml takes {packet_collnet_us:.0f} µs "
           "on packet and {flow_collnet_us:.0f} µs on flow"),
]


def _time_s(backend: str, graph, nodes, algorithm: str) -> float:
    from netsim.backends.base import create_backend
    from netsim.collectives import run_collective
    be = create_backend(backend, graph, seed=SEED)
    p = run_collective(be, "allreduce", nodes, SIZE_BYTES, algorithm=algorithm)
    be.env.run()
    return p.value.time_s


def measure() -> dict:
    """Bus bandwidths and times of ring / NVLS / CollNet all-reduce on packet and flow."""
    import os

    from netsim.collectives import bus_bandwidth
    from netsim.topology import gpu_server, load_topology
    from . import ROOT
    g = gpu_server("s0", gpus=N_GPUS)
    g.nodes["s0.nvs0"]["nvls"] = True
    nodes = [f"s0.gpu{i}" for i in range(N_GPUS)]
    t = {(b, a): _time_s(b, g, nodes, a) for b in ("packet", "flow") for a in ("ring", "nvls")}
    rails = load_topology(os.path.join(ROOT, "topologies", "rail_sharp_8gpu.yaml"))
    gpus = sorted((n for n, k in rails.nodes(data="kind") if k == "gpu"), key=lambda x: (x.split(".")[0], x))
    bus = lambda s: bus_bandwidth("allreduce", N_GPUS, SIZE_BYTES, s) / 1e9   # noqa: E731
    util = lambda s: 100 * SIZE_BYTES * 8 / NVLINK_BPS / s                    # noqa: E731
    return {"packet_ring_busbw_gbps": bus(t["packet", "ring"]), "packet_nvls_busbw_gbps": bus(t["packet", "nvls"]),
            "packet_speedup": t["packet", "ring"] / t["packet", "nvls"],
            "packet_vs_flow_pct": 100 * (t["flow", "nvls"] / t["packet", "nvls"] - 1),
            "packet_link_util_pct": util(t["packet", "nvls"]), "flow_link_util_pct": util(t["flow", "nvls"]),
            "packet_collnet_us": 1e6 * _time_s("packet", rails, gpus, "collnet"),
            "flow_collnet_us": 1e6 * _time_s("flow", rails, gpus, "collnet")}
