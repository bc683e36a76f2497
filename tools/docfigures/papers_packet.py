"""docs/reproducing-papers.md's packet-backend figures (slow, about 2 min of CPU).

The runs of the slow tests ``test_papers_apnet.py::test_queueing_alone_does_not_explain_the_gap_packet_backend``
and ``test_papers_holmes.py::test_nic_kinds_order_on_the_packet_backend`` (seed 0):

* APNet'24: VGG16-small DP on 8 one-GPU servers (100 Gb/s RoCE NICs), TCP/Cubic
  ÷ RoCEv2/DCQCN DP time without the host stack (``host_stack=False``) and
  with the default one;
* Holmes: ``gpt-3b-t2p2d8-small`` on 4 × 8 GPUs with 200 Gb/s NICs, IB =
  lossless RDMA without CC, RoCE = DCQCN (default preset), Ethernet = TCP
  Cubic: samples/s, the IB/RoCE and RoCE/Ethernet ratios, and DCQCN's cost
  (IB/RoCE − 1) in %.
"""
from __future__ import annotations

import os

from . import ROOT, Figure

SEED = 0
SLOW = True
DOC = "docs/reproducing-papers.md"
APNET_TOPOLOGY = "gpu_cluster:servers=8,gpus_per_server=1,nvswitch=false,nic_kinds=roce,nic_rates_bps=100Gbps"
HOLMES_CC = {"infiniband": "none", "roce": "dcqcn", "ethernet": "cubic"}

FIGURES = [
    Figure("apnet_packet", DOC, "TCP/Cubic ÷ RoCEv2/DCQCN DP time is **{net_only_ratio:.2f}×** with the network "
           "alone (`host_stack=False`) and **{host_stack_ratio:.2f}×** with the default host stack."),
    Figure("holmes_packet", DOC, "Cubic): {sps_infiniband:.0f} / {sps_roce:.0f} / {sps_ethernet:.0f} samples/s, "
           "strictly IB > RoCE > Ethernet (ratios {ib_over_roce:.3f} and {roce_over_eth:.3f};"),
    Figure("holmes_dcqcn_cost", DOC, "at packet level DCQCN's rate cuts cost only {dcqcn_cost_pct:.1f} %."),
]


def _workload(name: str) -> str:
    return os.path.join(ROOT, "workloads", name)


def measure() -> dict:
    """DP-time ratios and samples/s."""
    from netsim.runtime import run_training
    out = {}
    for label, hs in (("net_only", False), ("host_stack", None)):
        dp = {cc: run_training(APNET_TOPOLOGY, _workload("vgg16-small.yaml"), backend="packet", cc=cc,
                               host_stack=hs, seed=SEED, progress=False)["breakdown_s"]["dp"]
              for cc in ("dcqcn", "cubic")}
        out[f"{label}_ratio"] = dp["cubic"] / dp["dcqcn"]
    for kind, cc in HOLMES_CC.items():
        s = run_training(f"gpu_cluster:servers=4,gpus_per_server=8,nic_kinds={kind},nic_rates_bps=200Gbps",
                         _workload("gpt-3b-t2p2d8-small.yaml"), backend="packet", cc=cc, seed=SEED, progress=False)
        out[f"sps_{kind}"] = s["samples_per_s"]
    out["ib_over_roce"] = out["sps_infiniband"] / out["sps_roce"]
    out["roce_over_eth"] = out["sps_roce"] / out["sps_ethernet"]
    out["dcqcn_cost_pct"] = (out["ib_over_roce"] - 1) * 100
    return out
