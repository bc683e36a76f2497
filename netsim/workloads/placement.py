"""Placement: which GPU runs which rank, and the parallel groups.

A rank has coordinates (tp, dp, pp).  The placement order lists the axes
fastest-varying first: Megatron's default ``(tp, dp, pp)`` gives
``rank = tp + t·(dp + d·pp)`` so a TP group is t consecutive ranks (one server
when t ≤ GPUs per server).  Rank r runs on the r-th GPU of the topology's
canonical order (``netsim.topology.gpus``: server-major, then local index), or
on the r-th name of an explicit list.  A GPU's NIC is the nearest one on PCIe
(``netsim.topology.nic_of``).  ``placement.nic: nic_aware`` reorders the GPUs
so that each stage's TP and DP groups sit in one same-NIC cluster
(:func:`netsim.workloads.hetero.nic_aware_gpu_order`, Holmes).

Context parallelism (cp > 1) nests between TP and DP, as Megatron-LM's
default rank order tp-cp-dp-pp: the placement's ``dp`` axis then has dp·cp
positions, cp fastest inside it (position = c + cp·d), so with the megatron
order ``rank = tp + t·(c + cp·(d + dp·pp))``.  The ``dp`` groups are then
Megatron's DP×CP groups (gradients are all-reduced over them), the ``cp``
groups are cp consecutive members of a ``dp`` group (the ring of ring
attention).  Left out: choosing among several NICs of one GPU.

>>> p = Placement.build(2, 2, 2, ("tp", "dp", "pp"), [f"g{i}" for i in range(8)])
>>> p.groups["tp"][0], p.groups["dp"][0], p.groups["pp"][0]
((0, 1), (0, 2), (0, 4))
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import WorkloadError


@dataclass(frozen=True)
class Placement:
    """Ranks ↔ GPUs and the groups of each kind (tuples of ranks, in ring order).

    ``groups[kind][i]`` is the i-th group of that kind; ``group_of[kind][rank]``
    its index.  TP groups are numbered by (pp, dp), DP groups by (pp, tp),
    pipelines (kind ``pp``) by (dp, tp), each row-major.  Kind ``ep``: each DP
    group cut into runs of ep consecutive members (DeepSpeed-MoE's expert
    groups); ``edp``: the members of a DP group holding the same experts.
    """

    dp: int
    tp: int
    pp: int
    order: tuple
    gpu_of: tuple                  # rank -> GPU node name
    coords: tuple                  # rank -> (tp, dp, pp)
    groups: dict
    group_of: dict
    cp: int = 1                    # context-parallel degree; ``dp`` is then the DP×CP axis (dp·cp positions)

    @classmethod
    def build(cls, dp: int, tp: int, pp: int, order, gpu_names, *, source: str | None = None,
              ep: int = 1, cp: int = 1) -> "Placement":
        """Placement of dp·tp·pp·cp ranks (``dp``: the data-parallel degree without CP)."""
        dp = dp * cp                   # the dp axis carries the CP index fastest (Megatron's tp-cp-dp-pp)
        n = dp * tp * pp
        if len(gpu_names) < n:
            axes = "dp·tp·pp" if cp == 1 else "dp·tp·pp·cp"
            raise WorkloadError(f"placement needs {axes} = {n} GPUs but the topology has {len(gpu_names)}",
                                source=source, where="field parallelism",
                                accepted=f"a topology with at least {n} GPUs, or smaller dp/tp/pp")
        size = {"tp": tp, "dp": dp, "pp": pp}
        coords = []
        for r in range(n):
            c, rest = {}, r
            for ax in order:
                c[ax] = rest % size[ax]
                rest //= size[ax]
            coords.append((c["tp"], c["dp"], c["pp"]))
        rank_of = {c: r for r, c in enumerate(coords)}
        groups = {
            "tp": tuple(tuple(rank_of[(i, d, s)] for i in range(tp)) for s in range(pp) for d in range(dp)),
            "dp": tuple(tuple(rank_of[(i, d, s)] for d in range(dp)) for s in range(pp) for i in range(tp)),
            "pp": tuple(tuple(rank_of[(i, d, s)] for s in range(pp)) for d in range(dp) for i in range(tp)),
        }
        # expert parallelism: an EP group is ep consecutive members of a DP group; the
        # expert-data-parallel group ("edp") holds the same experts: every ep-th member
        groups["ep"] = tuple(g[k:k + ep] for g in groups["dp"] for k in range(0, dp, ep))
        groups["edp"] = tuple(g[j::ep] for g in groups["dp"] for j in range(ep))
        if cp > 1:   # context parallelism: the ring of cp consecutive members of a DP×CP group
            groups["cp"] = tuple(g[k:k + cp] for g in groups["dp"] for k in range(0, dp, cp))
        group_of = {k: [0] * n for k in groups}
        for k, gs in groups.items():
            for gi, g in enumerate(gs):
                for r in g:
                    group_of[k][r] = gi
        return cls(dp, tp, pp, tuple(order), tuple(gpu_names[:n]), tuple(coords), groups,
                   {k: tuple(v) for k, v in group_of.items()}, cp)

    @property
    def world_size(self) -> int:
        return len(self.gpu_of)

    def rank_at(self, tp_i: int, dp_i: int, pp_i: int) -> int:
        size = {"tp": self.tp, "dp": self.dp, "pp": self.pp}
        c = {"tp": tp_i, "dp": dp_i, "pp": pp_i}
        r, mul = 0, 1
        for ax in self.order:
            r += c[ax] * mul
            mul *= size[ax]
        return r

    def stage(self, rank: int) -> int:
        return self.coords[rank][2]


def place(workload, graph=None, gpu_names=None) -> Placement:
    """Placement of ``workload`` on ``graph`` (or on an explicit GPU name list)."""
    if gpu_names is None:
        from ..topology import gpus
        gpu_names = gpus(graph)
    if workload.nic == "nic_aware" and graph is not None:
        # Holmes: every TP/DP group inside one same-NIC cluster, only pipeline stages cross clusters
        from .hetero import nic_aware_gpu_order
        gpu_names = nic_aware_gpu_order(graph, workload.dp * workload.cp, workload.tp, workload.pp, gpu_names)
    if workload.gpus is not None:
        known = set(gpu_names)
        for g in workload.gpus:
            if g not in known:
                raise WorkloadError("no such GPU in the topology", source=workload.source,
                                    where="field placement.gpus", value=g,
                                    accepted="GPU names such as " + ", ".join(list(gpu_names)[:3]))
        gpu_names = list(workload.gpus)
    return Placement.build(workload.dp, workload.tp, workload.pp, workload.order, list(gpu_names),
                           source=workload.source, ep=workload.ep, cp=getattr(workload, "cp", 1))


def resolve_partition(workload, placement, graph):
    """``partition: balanced`` → explicit layer counts for this placement (Holmes' self-adapting partition).

    A stage's cost per layer = the layer's compute for all micro-batches plus
    its ring all-reduce on the slowest NIC of the stage's GPUs
    (:func:`netsim.workloads.hetero.stage_layer_costs`); the embedding and
    logits are fixed costs of the first and last stage; the counts minimize
    the slowest stage (:func:`netsim.workloads.hetero.balanced_partition`).
    Returns the workload unchanged unless its partition is ``"balanced"``.
    """
    import dataclasses

    from ..topology import nic_of
    from .hetero import balanced_partition, stage_layer_costs
    w = workload
    if w.partition == "speed_balanced":
        return _speed_balanced(w, placement, graph)
    if w.partition != "balanced":
        return w
    cp = getattr(w, "cp", 1)
    layers = w.model.build_layers(w.tp, w.pp, w.ep)
    body = [l for l in layers if l.role == "body"]
    rate = w.peak_flops * w.utilization
    m, b = w.micro_batches, w.micro_batch
    k = 2 if w.recompute else 1          # forward (+ recomputation) + backward = (k + 2) x forward
    per_layer_s = sum(l.fwd_flops * (k + 2) for l in body) / len(body) * b * m / rate / cp
    grad_bytes = sum(l.params for l in body) / len(body) * w.grad_bytes
    nic_rates = []
    for s in range(w.pp):
        rates = []
        for r in range(placement.world_size):
            if placement.stage(r) == s:
                nic = nic_of(graph, placement.gpu_of[r])
                if nic is not None:
                    rates.extend(d["rate_bps"] for _, v, d in graph.edges(nic, data=True)
                                 if graph.nodes[v].get("kind") not in ("pcie_switch", "gpu"))
        nic_rates.append(min(rates) if rates else float("inf"))
    costs = stage_layer_costs(per_layer_s, grad_bytes, w.dp * cp, nic_rates)
    fixed = [0.0] * w.pp
    for l in layers:
        t = l.fwd_flops * 3 * b * m / rate / cp
        if l.role == "first":
            fixed[0] += t
        elif l.role == "last":
            fixed[-1] += t
    counts = balanced_partition(len(body), [1.0] * w.pp, costs, fixed)
    return dataclasses.replace(w, partition=tuple(counts))


def _speed_balanced(w, placement, graph):
    """``partition: speed_balanced`` → layer counts from :func:`netsim.workloads.hetero.speed_balanced_partition`.

    Each stage's NIC rate is its first GPU's NIC line rate capped by the
    default host stack (:class:`netsim.hoststack.HostStack`: kernel TCP on
    Ethernet), whatever the run's ``--set host_stack`` says.
    """
    import dataclasses

    from ..hoststack import HostStack
    from .hetero import speed_balanced_partition
    pl = placement
    order = [pl.gpu_of[pl.rank_at(i, d, s)] for s in range(w.pp) for d in range(pl.dp) for i in range(w.tp)]
    counts = speed_balanced_partition(w, graph, order, HostStack())
    return dataclasses.replace(w, partition=tuple(int(c) for c in counts))

