"""Heterogeneous NICs (Holmes): NIC-aware placement and a speed-balanced pipeline partition.

Holmes (Yang et al., arXiv 2312.03549) trains across GPUs whose NICs differ
(InfiniBand, RoCE, plain Ethernet) by

* building each parallel group on GPUs with the *same kind* of NIC — DP and
  TP traffic (heavy) stays inside a same-NIC cluster, and only pipeline
  point-to-point traffic (light) crosses between clusters
  (:func:`nic_aware_gpu_order`);
* giving slower stages fewer layers so every stage takes about the same time
  (:func:`balanced_partition`), a stage's speed including the cost of its
  DP gradient sync on its NICs (:func:`stage_layer_costs`).

Left out: Holmes' per-group NIC *selection* among several NICs of one GPU
(our GPUs use their nearest NIC), its overlapped optimizer and the
re-partitioning during training.

>>> balanced_partition(8, [1.0, 1.0], [1.0, 3.0])   # stage 1 is 3x slower per layer
(6, 2)
"""
from __future__ import annotations

import math

from ..errors import WorkloadError

#: speed order of NIC kinds (fast first), used to sort clusters
NIC_ORDER = ("infiniband", "roce", "ethernet")


def nic_kind_of(graph, gpu: str) -> str:
    """The ``nic_kind`` of the GPU's nearest NIC (``"none"`` without a NIC)."""
    from ..topology import nic_of
    nic = nic_of(graph, gpu)
    if nic is None:
        return "none"
    from ..topology.query import nic_kind_of
    return nic_kind_of(graph, nic)


def nic_clusters(graph, gpu_names=None) -> dict[str, list[str]]:
    """GPUs grouped by cluster: the ``cluster`` node attribute when present, else the NIC kind.

    Keys are ordered fast NICs first (InfiniBand, RoCE, Ethernet, then others),
    GPUs in canonical order inside each.
    """
    from ..topology import gpus
    names = list(gpu_names) if gpu_names is not None else gpus(graph)
    out: dict[str, list[str]] = {}
    for g in names:
        kind = nic_kind_of(graph, g)
        key = f"{graph.nodes[g]['cluster']}:{kind}" if "cluster" in graph.nodes[g] else kind
        out.setdefault(key, []).append(g)

    def rank(key: str):
        kind = key.split(":")[-1]
        return (NIC_ORDER.index(kind) if kind in NIC_ORDER else len(NIC_ORDER), key)
    return {k: out[k] for k in sorted(out, key=rank)}


def nic_aware_gpu_order(graph, dp: int, tp: int, pp: int, gpu_names=None) -> list[str]:
    """A GPU list for Megatron order (tp fastest, then dp, then pp) that keeps stages in one cluster.

    Stage ``s`` takes ``dp·tp`` GPUs; stages are filled cluster by cluster
    (fast NICs first) so every TP and DP group lies inside one same-NIC
    cluster and only pipeline boundaries cross clusters.  Raises
    :class:`WorkloadError` when a cluster's GPU count is not a multiple of
    ``dp·tp`` or there are too few GPUs.
    """
    per_stage = dp * tp
    clusters = nic_clusters(graph, gpu_names)
    order: list[str] = []
    for name, gs in clusters.items():
        usable = (len(gs) // per_stage) * per_stage
        order.extend(gs[:usable])
    if len(order) < per_stage * pp:
        sizes = {k: len(v) for k, v in clusters.items()}
        raise WorkloadError(f"NIC-aware placement needs {pp} stages of dp·tp = {per_stage} GPUs inside "
                            f"same-NIC clusters, clusters have {sizes}", where="field placement.nic",
                            value="nic_aware", accepted="dp·tp dividing each cluster's GPU count")
    return order[:per_stage * pp]


def stage_clusters(graph, gpu_order: list[str], dp: int, tp: int, pp: int) -> list[str]:
    """The NIC kind of each pipeline stage under Megatron order (for reports and tests)."""
    per = dp * tp
    kinds = []
    for s in range(pp):
        ks = {nic_kind_of(graph, g) for g in gpu_order[s * per:(s + 1) * per]}
        kinds.append(ks.pop() if len(ks) == 1 else "mixed")
    return kinds


def stage_layer_costs(layer_compute_s: float, layer_grad_bytes: float, dp: int,
                      nic_rates_bps: list[float]) -> list[float]:
    """Seconds per layer per iteration on each stage: compute + its DP ring all-reduce on the stage's NIC.

    ``layer_compute_s``: forward+backward time of one layer for all
    micro-batches; ``layer_grad_bytes``: that layer's gradient bytes per rank.
    The DP cost is the ring's ``2(d−1)/d · S / B`` at the stage's NIC rate
    (an upper bound: it ignores the overlap with backward).
    """
    f = 2 * (dp - 1) / dp if dp > 1 else 0.0
    return [layer_compute_s + f * layer_grad_bytes * 8 / r for r in nic_rates_bps]


def balanced_partition(n_layers: int, stage_speed: list[float], layer_cost: list[float] | float = 1.0,
                       fixed_s: list[float] | None = None) -> tuple:
    """Layers per stage minimizing the slowest stage's time (contiguous, each stage ≥ 1 layer).

    Parameters
    ----------
    n_layers : int
        Transformer layers to split.
    stage_speed : list of float
        Relative speed of each stage (work per second); ``len`` = pp.
    layer_cost : float or list of float
        Work of one layer on each stage (a list: per stage, e.g. from
        :func:`stage_layer_costs` with ``stage_speed`` all 1).
    fixed_s : list of float, optional
        Time each stage spends regardless of its layers (embedding, logits).

    Returns
    -------
    tuple of int
        Layer counts per stage (sum ``n_layers``).  Ties go to the earlier
        stages getting more layers.

    Stage time = ``fixed + n · cost / speed``; the optimum of this
    min-max integer problem is found exactly by trying each stage's
    candidate counts (binary search on the bottleneck time).
    """
    p = len(stage_speed)
    if p < 1 or n_layers < p:
        raise WorkloadError(f"cannot give {p} stages at least one of {n_layers} layers",
                            where="field parallelism.partition", value=n_layers, accepted=f">= {p} layers")
    costs = layer_cost if isinstance(layer_cost, list) else [float(layer_cost)] * p
    fixed = fixed_s or [0.0] * p
    per = [c / s for c, s in zip(costs, stage_speed)]

    def counts_for(t: float) -> list[int] | None:
        out = []
        for i in range(p):
            room = t - fixed[i]
            n = math.floor(room / per[i] + 1e-9) if per[i] > 0 else n_layers
            if n < 1:
                return None
            out.append(n)
        return out if sum(out) >= n_layers else None

    cands = sorted({fixed[i] + n * per[i] for i in range(p) for n in range(1, n_layers + 1)})
    lo, hi = 0, len(cands) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if counts_for(cands[mid]) is None:
            lo = mid + 1
        else:
            hi = mid
    caps = counts_for(cands[lo])
    # give each stage its cap, earliest first, then trim from the back to the exact total
    out = list(caps)
    extra = sum(out) - n_layers
    for i in range(p - 1, -1, -1):
        take = min(extra, out[i] - 1)
        out[i] -= take
        extra -= take
    return tuple(out)


def stage_time_s(counts, stage_speed, layer_cost=1.0, fixed_s=None) -> list[float]:
    """Each stage's time for a partition (the objective :func:`balanced_partition` minimizes)."""
    p = len(counts)
    costs = layer_cost if isinstance(layer_cost, list) else [float(layer_cost)] * p
    fixed = fixed_s or [0.0] * p
    return [fixed[i] + counts[i] * costs[i] / stage_speed[i] for i in range(p)]


def _layer_seconds(layer, w) -> float:
    """Forward + backward (+ recomputed forward) seconds of one layer for all micro-batches of a rank."""
    rate = w.peak_flops * w.utilization
    flops = sum(b.fwd_flops + b.bwd_flops + (b.fwd_flops if (w.recompute and b.recompute) else 0)
                for b in layer.blocks)
    return flops * w.micro_batch * w.micro_batches / rate / getattr(w, "cp", 1)


def speed_balanced_partition(workload, graph, gpu_order, host_stack=None) -> tuple:
    """Holmes' self-adapting partition: layers per stage from each stage's NIC speed.

    A stage's time per iteration = its layers' compute (all micro-batches) +
    their DP gradient all-reduce at the stage's effective NIC rate (the NIC's
    line rate, capped by the host stack for its transport: kernel TCP on
    Ethernet) + its embedding/logits; :func:`balanced_partition` then
    equalizes the stages.  ``gpu_order`` is the rank → GPU list (e.g.
    :func:`nic_aware_gpu_order`).
    """
    from ..hoststack import NIC_TRANSPORT
    from ..topology import nic_of
    w = workload
    layers = w.model.build_layers(w.tp, w.pp)
    body = [l for l in layers if l.role == "body"]
    per = w.dp * getattr(w, "cp", 1) * w.tp          # GPUs per stage
    rates, fixed = [], []
    for s in range(w.pp):
        nic = nic_of(graph, gpu_order[s * per])
        line = max((d["rate_bps"] for _, _, d in graph.edges(nic, data=True) if d.get("kind") != "pcie"),
                   default=1e12) if nic else 1e12
        from ..topology.query import nic_kind_of
        kind = nic_kind_of(graph, nic) if nic else "none"
        if host_stack is not None and kind in NIC_TRANSPORT:
            line = host_stack.rate_cap_bps(NIC_TRANSPORT[kind], line)
        rates.append(line)
        ends = [l for l in layers if (l.role == "first" and s == 0) or (l.role == "last" and s == w.pp - 1)]
        fixed.append(sum(_layer_seconds(l, w) for l in ends))
    costs = stage_layer_costs(_layer_seconds(body[0], w), body[0].params * w.grad_bytes, w.dp * getattr(w, "cp", 1),
                              rates)
    return balanced_partition(len(body), [1.0] * w.pp, costs, fixed)
