"""docs/reproducing-papers.md's Holmes rows: cross-cluster PP vs DP, NIC kinds, speed-balanced partition.

The runs of ``tests/validation/test_papers_holmes.py`` (harness
``tests/validation/papers_sim.py``, analytic backend, seed 0):

* ``two_cluster_hetero`` (32 GPUs on 400 Gb/s InfiniBand, 32 on 200 Gb/s
  Ethernet, one 100 Gb/s link between), GPT-1.5B-class (24 layers) t8 p2 d4:
  the Holmes placement (``megatron`` order, NIC-aware GPU order) vs DP across
  the slow link (``tp_pp_dp`` on the same GPUs): samples/s and bytes crossing
  the clusters in one iteration;
* the same model t8 p2 d2 on all-IB / all-RoCE / all-Ethernet 32-GPU clusters
  (200 Gb/s NICs, default host stack): samples/s and their ratios;
* the speed-balanced partition vs the even [12, 12] one, host stack on.
"""
from __future__ import annotations

from . import Figure
from ._papers import harness

SEED = 0
SLOW = True                    # six analytic runs of 64- and 32-GPU jobs: about 17 s of CPU
DOC = "docs/reproducing-papers.md"
JOB = {"model": {"preset": "gpt-1.5b", "layers": 24}, "training": {"global_batch": 32, "micro_batch": 4},
       "parallelism": {"tp": 8, "pp": 2, "dp": 4}, "compute": {"gpu": "a100"}}
KINDS = ("infiniband", "roce", "ethernet")

FIGURES = [
    Figure("pp_vs_dp", DOC, "| {holmes_sps:.1f} vs {dp_across_sps:.1f} samples/s ({pp_over_dp:.2f}×); "
           "cross-cluster bytes {holmes_cross_gb:.2f} vs {dp_across_cross_gb:.2f} GB per iteration;"),
    Figure("nic_kinds", DOC, "| {sps_infiniband:.1f} / {sps_roce:.1f} / {sps_ethernet:.1f} "
           "(t8 p2 d2 on 32 GPUs, 200 Gbps NICs) |"),
    Figure("nic_ratios", DOC, "| 1.23, 1.31, 1.62 | {ib_over_roce:.2f}, {roce_over_eth:.2f}, {ib_over_eth:.2f} |"),
    Figure("partition", DOC, "[{part_0:.0f}, {part_1:.0f}] layers: {balanced_sps:.1f} vs even [12, 12]: "
           "{even_sps:.1f} samples/s"),
]



def _cross(graph, r) -> float:
    cl = graph.nodes
    return sum(f.size_bytes for f in r.flows if cl[f.src]["cluster"] != cl[f.dst]["cluster"]) / 1e9


def _two_clusters(sim) -> dict:
    from netsim.hoststack import HostStack
    from netsim.topology import load_topology
    from netsim.workloads import load_workload
    from netsim.workloads.hetero import nic_aware_gpu_order, speed_balanced_partition
    g = load_topology(sim.topology_path("two_cluster_hetero.yaml"))
    gpus = nic_aware_gpu_order(g, 4, 8, 2)
    holmes = sim.simulate(g, dict(JOB, placement={"order": "megatron", "nic": "nic_aware"}), seed=SEED)
    across = sim.simulate(g, dict(JOB, placement={"order": "tp_pp_dp"}), gpus=gpus, seed=SEED)
    hs = HostStack()
    part = speed_balanced_partition(load_workload(JOB), g, gpus, hs)
    even = sim.simulate(g, JOB, gpus=gpus, host_stack=hs, seed=SEED)
    bal = sim.simulate(g, dict(JOB, parallelism=dict(JOB["parallelism"], partition=list(part))), gpus=gpus,
                       host_stack=hs, seed=SEED)
    return {"holmes_sps": holmes.samples_per_s, "dp_across_sps": across.samples_per_s,
            "pp_over_dp": holmes.samples_per_s / across.samples_per_s,
            "holmes_cross_gb": _cross(g, holmes), "dp_across_cross_gb": _cross(g, across),
            "part_0": part[0], "part_1": part[1], "balanced_sps": bal.samples_per_s, "even_sps": even.samples_per_s}


def _nic_kinds(sim) -> dict:
    from netsim.hoststack import HostStack
    from netsim.topology import gpu_cluster
    job = dict(JOB, parallelism={"tp": 8, "pp": 2, "dp": 2})
    sps = {k: sim.simulate(gpu_cluster(4, 8, nic_kinds=k, nic_rates_bps="200Gbps"), job, host_stack=HostStack(),
                           seed=SEED).samples_per_s for k in KINDS}
    out = {f"sps_{k}": v for k, v in sps.items()}
    out.update(ib_over_roce=sps["infiniband"] / sps["roce"], roce_over_eth=sps["roce"] / sps["ethernet"],
               ib_over_eth=sps["infiniband"] / sps["ethernet"])
    return out


def measure() -> dict:
    """Samples/s, cross-cluster GB, ratios and the balanced partition's layer counts."""
    sim = harness()
    return {**_two_clusters(sim), **_nic_kinds(sim)}
