"""docs/reproducing-papers.md's APNet'24 rows on traffic repetition, mapping and weak scaling.

The runs of ``tests/validation/test_papers_apnet.py`` (analytic backend, seed 0):

* ``gpt-3b-t2p2d8-small`` on ``gpu_cluster`` 4 × 8 GPUs (100 Gb/s RoCE), 3
  iterations: the traffic matrix (bytes per GPU pair) must be the same each
  iteration (else :func:`measure` raises); its pair count and GB;
* GPT-1.5B-class (8 layers) t4 p2 d4 on the same cluster, ``deepspeed`` order
  (TP inside a server) vs ``dp_tp_pp`` (TP spans servers): TP comm time and
  iteration time in ms;
* weak scaling of ResNet50 and VGG16 DP over 4/8/16/32 GPUs of the APNet
  testbed stand-in (8 servers × 4 RTX3090-class GPUs on PCIe sharing a 100 Gb/s
  NIC), 32 samples per GPU: per-GPU throughput ÷ that at 4 GPUs, DP comm time.
"""
from __future__ import annotations

from . import Figure
from ._papers import harness

SEED = 0
SLOW = True                    # eleven analytic runs: 1.5-5 s (load), more than the default run can spare
DOC = "docs/reproducing-papers.md"
SCALES = (4, 8, 16, 32)

FIGURES = [
    Figure("dense", DOC, "identical over 3 iterations (GPT-3B-small t2p2d8, {dense_pairs:.0f} GPU pairs, "
           "{dense_gb:.2f} GB/iteration)"),
    Figure("mapping", DOC, "TP comm {map_tp_default_ms:.1f} → {map_tp_custom_ms:.1f} ms, iteration "
           "{map_it_default_ms:.1f} → {map_it_custom_ms:.1f} ms when TP spans servers"),
    Figure("weak", DOC, "ResNet50 {resnet50_sf_4:.3f} / {resnet50_sf_8:.3f} / {resnet50_sf_16:.3f} / "
           "{resnet50_sf_32:.3f} at 4/8/16/32 (DP comm {resnet50_comm_ms_4:.1f} → {resnet50_comm_ms_32:.1f} ms); "
           "VGG16 {vgg16_sf_32:.3f} at 32 (DP comm {vgg16_comm_ms_4:.1f} → {vgg16_comm_ms_32:.1f} ms,"),
]


def _dense(sim) -> dict:
    from netsim.topology import gpu_cluster
    r = sim.simulate(gpu_cluster(4, 8, nic_kinds="roce", nic_rates_bps="100Gbps"),
                     sim.workload_path("gpt-3b-t2p2d8-small.yaml"), iterations=3, seed=SEED)
    m = [r.traffic_matrix(i) for i in range(3)]
    if not m[0] or not m[0] == m[1] == m[2]:
        raise RuntimeError("apnet_scaling: the traffic matrix differs between iterations; the doc says identical")
    return {"dense_pairs": len(m[0]), "dense_gb": sum(m[0].values()) / 1e9}


def _mapping(sim) -> dict:
    from netsim.topology import gpu_cluster
    g = gpu_cluster(4, 8, nic_kinds="roce", nic_rates_bps="100Gbps")
    job = {"model": {"preset": "gpt-1.5b", "layers": 8}, "training": {"global_batch": 32, "micro_batch": 2},
           "parallelism": {"tp": 4, "pp": 2, "dp": 4}, "compute": {"gpu": "v100-sxm2"}}
    d = sim.simulate(g, dict(job, placement={"order": "deepspeed"}), seed=SEED)
    c = sim.simulate(g, dict(job, placement={"order": "dp_tp_pp"}), seed=SEED)
    return {"map_tp_default_ms": d.comm_time_s("tp") * 1e3, "map_tp_custom_ms": c.comm_time_s("tp") * 1e3,
            "map_it_default_ms": d.iteration_time_s * 1e3, "map_it_custom_ms": c.iteration_time_s * 1e3}


def _weak(sim, model: str) -> dict:
    from netsim.topology import gpu_cluster
    g = gpu_cluster(8, 4, gpus_per_nic=4, nvswitch=False, nic_kinds="roce", nic_rates_bps="100Gbps",
                    pcie_rate_bps="256Gbps")
    per_gpu, out = {}, {}
    for n in SCALES:
        r = sim.simulate(g, {"model": model, "training": {"global_batch": 32 * n, "micro_batch": 32},
                             "parallelism": {"dp": n}, "compute": {"gpu": "rtx3090"}}, seed=SEED)
        per_gpu[n] = r.samples_per_s / n
        out[f"{model}_comm_ms_{n}"] = r.comm_time_s("dp") * 1e3
    out.update({f"{model}_sf_{n}": per_gpu[n] / per_gpu[SCALES[0]] for n in SCALES})
    return out


def measure() -> dict:
    """Traffic-matrix size, mapping times (ms), scaling factors and DP comm times (ms)."""
    sim = harness()
    return {**_dense(sim), **_mapping(sim), **_weak(sim, "resnet50"), **_weak(sim, "vgg16")}
