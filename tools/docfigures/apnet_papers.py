"""APNet'24 reproductions quoted in the README and docs/reproducing-papers.md (analytic backend).

Uses the harness of ``tests/validation/papers_sim.py`` (the same runs the
``test_papers_apnet.py`` checks make), so the figures are what the tests see:

* RoCEv2/DCQCN vs TCP/Cubic communication time with the default host stack
  on 8 one-GPU servers at 100 Gb/s: VGG16 DP, GPT-3B (16 layers) DP and PP;
* MoE non-uniformity (CV of the bytes each rank receives in one dispatch
  all-to-all) of ``gpt-moe-350m-small`` on 8 GPUs at iterations 0 and 100.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = False               # about 3 s of CPU (analytic backend)
DOC = "docs/reproducing-papers.md"
VGG16 = {"model": "vgg16", "training": {"global_batch": 256, "micro_batch": 32}, "parallelism": {"dp": 8},
         "compute": {"gpu": "rtx3090"}}


def _gpt3b(par):
    return {"model": {"preset": "gpt-3b", "layers": 16}, "training": {"global_batch": 32, "micro_batch": 4},
            "parallelism": par, "compute": {"gpu": "rtx3090"}}


FIGURES = [
    Figure("vgg16", DOC, "| 2× (−50 %) | {vgg16_ratio:.2f}× ({vgg16_tcp_ms:.1f} vs {vgg16_roce_ms:.1f} ms) |"),
    Figure("gpt3b_dp", DOC, "| GPT-3B DP comm time, TCP ÷ RoCE | 1.6× (−37 %) | {gpt3b_dp_ratio:.2f}× |"),
    Figure("gpt3b_pp", DOC, "| GPT-3B PP comm time, TCP ÷ RoCE | 2.5× (−60 %) | {gpt3b_pp_ratio:.2f}× |"),
    Figure("overall", DOC, "| overall RoCE vs TCP | 2–2.5× | {ratio_lo:.2f}–{ratio_hi:.2f}× in all three cases |"),
    Figure("moe", DOC, "| ≈ 0.4 / < 0.1 | {moe_it0:.2f} / {moe_it100:.2f} (dispatch all-to-alls"),
    Figure("readme_moe", "README.md", "| MoE non-uniformity, iteration 0 / 100 | APNet'24 ≈ 0.4 / < 0.1 | "
           "{moe_it0:.2f} / {moe_it100:.2f} |"),
    Figure("readme_ratio", "README.md", "| APNet'24 2–2.5× | {ratio_lo:.2f}–{ratio_hi:.2f}× (host stack on;"),
]


def _harness():
    path = os.path.join(ROOT, "tests", "validation")
    if path not in sys.path:
        sys.path.insert(0, path)
    import papers_sim
    return papers_sim


def _roce_vs_tcp(sim, graph, job, kind):
    from netsim.hoststack import HostStack
    res = {cc: sim.simulate(graph, job, cc=cc, host_stack=HostStack(), seed=SEED) for cc in ("dcqcn", "cubic")}
    return res["cubic"].comm_time_s(kind), res["dcqcn"].comm_time_s(kind)


def _moe(sim) -> tuple[float, float]:
    import numpy as np

    from netsim.topology import gpu_cluster
    r = sim.simulate(gpu_cluster(1, 8, nic_kinds="roce", nic_rates_bps="100Gbps"),
                     sim.workload_path("gpt-moe-350m-small.yaml"), iterations=101, seed=SEED)
    recv: dict = {}
    for f in r.flows:
        if f.group_kind == "ep" and f.op.endswith("dispatch") and f.iteration in (0, 100):
            by_dst = recv.setdefault((f.iteration, f.op), {})
            by_dst[f.dst] = by_dst.get(f.dst, 0) + f.size_bytes
    cv = {0: [], 100: []}
    for (it, _), by_dst in recv.items():
        v = np.array([by_dst.get(x, 0) for x in r.placement.gpu_of], float)
        cv[it].append(v.std() / v.mean())
    if not cv[0] or not cv[100]:
        raise RuntimeError("apnet_papers: no EP dispatch flows found in iterations 0 and 100")
    return float(np.mean(cv[0])), float(np.mean(cv[100]))


def measure() -> dict:
    """Ratios, comm times in ms, and the two non-uniformity factors."""
    from netsim.topology import gpu_cluster
    sim = _harness()
    g = gpu_cluster(8, 1, gpus_per_nic=1, nvswitch=False, nic_kinds="roce", nic_rates_bps="100Gbps",
                    pcie_rate_bps="256Gbps")
    tcp, roce = _roce_vs_tcp(sim, g, VGG16, "dp")
    out = {"vgg16_tcp_ms": tcp * 1e3, "vgg16_roce_ms": roce * 1e3, "vgg16_ratio": tcp / roce}
    for kind in ("dp", "pp"):
        tcp, roce = _roce_vs_tcp(sim, g, _gpt3b({kind: 8}), kind)
        out[f"gpt3b_{kind}_ratio"] = tcp / roce
    ratios = [out["vgg16_ratio"], out["gpt3b_dp_ratio"], out["gpt3b_pp_ratio"]]
    out["ratio_lo"], out["ratio_hi"] = min(ratios), max(ratios)
    out["moe_it0"], out["moe_it100"] = _moe(sim)
    return out
