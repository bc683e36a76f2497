"""Holmes (Yang et al., arXiv 2312.03549): training across clusters with heterogeneous NICs.

Paper: cross-cluster pipeline parallelism — only pipeline (point-to-point) traffic crosses the slow
inter-cluster Ethernet, DP/TP stay inside the fast clusters — beats running data parallelism across
the slow link; NIC-aware groups; a partition balanced by stage speed.
netsim: the shipped two-cluster topology (cluster A: 32 GPUs on 400 Gbps InfiniBand, cluster B:
32 GPUs on 200 Gbps Ethernet, one 100 Gbps link between them), a GPT-1.5B-class job t=8 p=2 d=4,
analytic backend.
"""
import pytest

from netsim.topology import load_topology
from netsim.workloads.hetero import nic_aware_gpu_order, stage_clusters

from papers_sim import report, simulate, topology_path

JOB = {"model": {"preset": "gpt-1.5b", "layers": 24}, "training": {"global_batch": 32, "micro_batch": 4},
       "parallelism": {"tp": 8, "pp": 2, "dp": 4}, "compute": {"gpu": "a100"}}


@pytest.fixture(scope="module")
def graph():
    return load_topology(topology_path("two_cluster_hetero.yaml"))


def test_pp_across_clusters_beats_dp_across(graph):
    gpus = nic_aware_gpu_order(graph, 4, 8, 2)
    assert stage_clusters(graph, gpus, 4, 8, 2) == ["infiniband", "ethernet"]
    holmes = simulate(graph, dict(JOB, placement={"order": "megatron", "nic": "nic_aware"}))
    assert list(holmes.placement.gpu_of) == gpus
    # DP slowest-varying: each DP group has 2 ranks in cluster A and 2 in B -> the ring crosses the slow link
    dp_across = simulate(graph, dict(JOB, placement={"order": "tp_pp_dp"}), gpus=gpus)
    for r in (holmes, dp_across):
        cross = sum(f.size_bytes for f in r.flows
                    if graph.nodes[f.src]["cluster"] != graph.nodes[f.dst]["cluster"])
        kinds = {f.group_kind for f in r.flows if graph.nodes[f.src]["cluster"] != graph.nodes[f.dst]["cluster"]}
        r.cross = (cross, kinds)
    assert holmes.cross[1] == {"pp"}                     # only pipeline traffic crosses the clusters
    assert "dp" in dp_across.cross[1]
    assert holmes.samples_per_s > 1.2 * dp_across.samples_per_s
    report("Holmes", "PP across clusters vs DP across the slow link (samples/s)", "PP across wins",
           f"{holmes.samples_per_s:.1f} vs {dp_across.samples_per_s:.1f} "
           f"({holmes.samples_per_s / dp_across.samples_per_s:.2f}x); cross-cluster bytes "
           f"{holmes.cross[0] / 1e9:.2f} GB vs {dp_across.cross[0] / 1e9:.2f} GB")


PAPER = {"infiniband": 99.23, "roce": 80.54, "ethernet": 61.32}


def test_nic_kinds_order_ib_roce_ethernet():
    """Same GPT job on all-IB / all-RoCE / all-Ethernet versions of one 32-GPU cluster (200 Gbps NICs).

    Transports follow the NIC: InfiniBand and RoCE are RDMA (no host cost), Ethernet is kernel TCP
    (per-message cost, ~42 Gbit/s per connection: netsim.hoststack).
    """
    from netsim.hoststack import HostStack
    from netsim.topology import gpu_cluster
    job = {"model": {"preset": "gpt-1.5b", "layers": 24}, "training": {"global_batch": 32, "micro_batch": 4},
           "parallelism": {"tp": 8, "pp": 2, "dp": 2}, "compute": {"gpu": "a100"}}
    sps = {k: simulate(gpu_cluster(4, 8, nic_kinds=k, nic_rates_bps="200Gbps"), job,
                       host_stack=HostStack()).samples_per_s for k in PAPER}
    assert sps["infiniband"] >= sps["roce"] > sps["ethernet"]
    report("Holmes", "samples/s IB / RoCE / Ethernet", " / ".join(f"{v}" for v in PAPER.values()),
           " / ".join(f"{sps[k]:.1f}" for k in PAPER))
    report("Holmes", "ratios IB/RoCE, RoCE/Ethernet, IB/Ethernet",
           f"{PAPER['infiniband'] / PAPER['roce']:.2f}, {PAPER['roce'] / PAPER['ethernet']:.2f}, "
           f"{PAPER['infiniband'] / PAPER['ethernet']:.2f}",
           f"{sps['infiniband'] / sps['roce']:.2f}, {sps['roce'] / sps['ethernet']:.2f}, "
           f"{sps['infiniband'] / sps['ethernet']:.2f} (IB = RoCE: no congestion in the analytic model)")


@pytest.mark.slow  # long validation run (> 7 s); run with -m slow
def test_speed_balanced_partition_beats_even(graph):
    from netsim.hoststack import HostStack
    from netsim.workloads import load_workload
    from netsim.workloads.hetero import speed_balanced_partition, stage_time_s
    gpus = nic_aware_gpu_order(graph, 4, 8, 2)
    hs = HostStack()
    part = speed_balanced_partition(load_workload(JOB), graph, gpus, hs)
    assert part[0] > part[1]                     # the Ethernet-side stage gets fewer layers
    even = simulate(graph, JOB, gpus=gpus, host_stack=hs)
    bal = simulate(graph, dict(JOB, parallelism=dict(JOB["parallelism"], partition=list(part))), gpus=gpus,
                   host_stack=hs)
    assert bal.samples_per_s > even.samples_per_s
    report("Holmes", "self-adapting partition vs even (samples/s)", "balanced stages are faster",
           f"{list(part)}: {bal.samples_per_s:.1f} vs [12, 12]: {even.samples_per_s:.1f}")


@pytest.mark.slow
def test_nic_kinds_order_on_the_packet_backend():
    """The same comparison at packet level: IB = lossless RDMA without congestion control (cc none),
    RoCE = RDMA with DCQCN, Ethernet = TCP Cubic (no host-stack costs at packet level yet)."""
    from netsim.runtime import run_training
    from papers_sim import workload_path
    runs = {"infiniband": "none", "roce": "dcqcn", "ethernet": "cubic"}
    sps = {}
    for kind, cc in runs.items():
        s = run_training(f"gpu_cluster:servers=4,gpus_per_server=8,nic_kinds={kind},nic_rates_bps=200Gbps",
                         workload_path("gpt-3b-t2p2d8-small.yaml"), backend="packet", cc=cc, progress=False)
        sps[kind] = s["samples_per_s"]
    assert sps["infiniband"] > sps["roce"] > sps["ethernet"]
    report("Holmes", "packet backend samples/s IB / RoCE / Ethernet (gpt-3b-t2p2d8-small)",
           " / ".join(f"{v}" for v in PAPER.values()), " / ".join(f"{sps[k]:.0f}" for k in PAPER) +
           f" (ratios {sps['infiniband'] / sps['roce']:.3f}, {sps['roce'] / sps['ethernet']:.3f})")
