"""APNet'24's analytical iteration time (exactly as the paper), a stage-aware variant, and the C_x they use.

The paper's formula (Li et al., APNet'24, for GPT under PTD parallelism):

    T_iter   = T_comp + T_TP + T_PP + T_DP + T_bubble
    T_comp   = m · T_comp^mb,  T_comp^mb = FLOPs of one micro-batch / (p·t) / (peak·μ)
    T_TP     = m · (l/p) · k · 2bsh · 2(t−1) / (t · C_TP)      k = 6 (fwd, bwd, recompute); 4 without recompute
    T_PP     = m · 2 · 2bsh / C_PP
    T_DP     = (2N / (p·t)) · 2(d−1) / (d · C_DP)
    T_bubble = (p−1) · (T_comp^mb + T_PP^mb + T_TP^mb)

"2" is bytes per fp16 value (the workload's activation / gradient bytes are
used). FLOPs are the simulation's own FLOP model (every layer's forward,
backward and recomputation, logits included) split evenly over the p·t GPUs
of one model replica, as the paper does: :func:`apnet_iteration_time`.

The stage-aware variant (:func:`apnet_stage_aware_iteration_time`) keeps the
same communication terms but takes compute per pipeline stage, as the
simulation runs it: T_comp^mb is the slowest stage's (the last one also
computes the logits), and the compute part of the bubble is the sum of the
*other* stages' per-micro-batch times, so T_comp + T_bubble is the classic
(m−1)·max_s T_s + Σ_s T_s of a pipeline; T_PP is ÷ t with scatter/gather.
It is 2.6–7.7 % above the paper's formula on the shipped full-size GPT files.

Effective bandwidth C_x: every group of kind x is a ring over its GPUs (a
pipeline: its stage-to-stage transfers in one direction — the formula already
counts activation and gradient one after the other); each ring hop is spread
evenly over its equal-cost paths (ECMP in the fluid limit); a link's load is
the number of ring hops of kind x crossing it (groups run concurrently;
fractions for split hops; at least 1); a group's bandwidth is the smallest
rate ÷ load over its links, and C_x the smallest over groups.  Left out:
latency terms, the optimizer step, ECMP hash collisions (the packet backend
shows them).
"""
from __future__ import annotations

PS = 1e-12


def _ring_hops(nodes: list[str], kind: str) -> list[tuple[str, str]]:
    n = len(nodes)
    if n < 2:
        return []
    if kind == "pp":
        return [(nodes[i], nodes[i + 1]) for i in range(n - 1)]
    return [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]


def effective_bandwidths(graph, placement, max_paths: int = 64, router=None) -> dict[str, float | None]:
    """C_TP, C_PP, C_DP in bit/s (None when the degree is 1); ``router``: a
    :class:`~netsim.topology.Router` of ``graph`` to reuse (its routes are already computed)."""
    if router is None:
        from ..topology import Router
        router = Router(graph)
    out: dict[str, float | None] = {}
    for kind, label in (("tp", "C_TP"), ("pp", "C_PP"), ("dp", "C_DP")):
        group_links = []
        load: dict[tuple, float] = {}
        for g in placement.groups[kind]:
            nodes = [placement.gpu_of[r] for r in g]
            links = set()
            for a, b in _ring_hops(nodes, kind):
                paths = router.paths(a, b, limit=max_paths)
                for path in paths:
                    for ln in zip(path[:-1], path[1:]):
                        load[ln] = load.get(ln, 0.0) + 1.0 / len(paths)
                        links.add(ln)
            group_links.append(links)
        best = None
        for links in group_links:
            if not links:
                continue
            c = min(graph.edges[u, v]["rate_bps"] / max(load[(u, v)], 1.0) for u, v in links)
            best = c if best is None else min(best, c)
        out[label] = best
    return out


def _replica_compute_mb_s(builder, stage: int) -> float:
    """Forward + backward (+ recomputation) seconds of one micro-batch on one rank of ``stage``, unrounded
    (``builder``: the run's :class:`netsim.workloads.generate.OpGraphBuilder`)."""
    w = builder.w
    if w.layer_times_ms is not None:   # measured times: the builder's sums
        return sum(builder.stage_compute_ps(stage)) * PS
    tokens = builder.b * getattr(w.model, "seq_len", 1)
    total = 0.0
    for layer in builder.stage_layers[stage]:
        for blk in layer.blocks:
            work = tokens * w.model.moe.top_k if blk.moe else builder.b
            flops = blk.fwd_flops + blk.bwd_flops + (blk.fwd_flops if (w.recompute and blk.recompute) else 0.0)
            total += flops * work
    return total / builder.rate


def _comm_terms(w, builder, bandwidths: dict, scatter_gather: bool) -> dict[str, float]:
    """Per-micro-batch TP and PP seconds and the iteration's DP seconds."""
    m, b, p, t, d = w.micro_batches, w.micro_batch, w.pp, w.tp, w.dp
    if w.is_transformer:
        act = b * w.model.seq_len * w.model.hidden * w.act_bytes      # 2bsh
        layers = w.model.layers
    else:
        act = max(builder.boundary_elems[:-1] or [0]) * b * w.act_bytes
        layers = 0
    k = 6 if w.recompute else 4
    c_tp, c_pp, c_dp = bandwidths.get("C_TP"), bandwidths.get("C_PP"), bandwidths.get("C_DP")
    tp_mb = (layers / p) * k * act * 8 * 2 * (t - 1) / (t * c_tp) if t > 1 and c_tp else 0.0
    pp_size = act / t if (scatter_gather and w.scatter_gather and t > 1) else act
    pp_mb = 2 * pp_size * 8 / c_pp if p > 1 and c_pp else 0.0
    n_params = w.model.params()
    t_dp = (w.grad_bytes * n_params / (p * t)) * 8 * 2 * (d - 1) / (d * c_dp) if d > 1 and c_dp else 0.0
    return {"tp_mb": tp_mb, "pp_mb": pp_mb, "T_DP": t_dp}


def apnet_iteration_time(workload, builder, bandwidths: dict) -> dict[str, float]:
    """APNet'24's T_iter and its terms, in seconds, exactly as the paper (FLOPs split evenly over GPUs).

    Parameters
    ----------
    workload : Workload
    builder : OpGraphBuilder
        Gives the per-rank layers and the compute rate peak·μ.
    bandwidths : dict
        ``C_TP``, ``C_PP``, ``C_DP`` in bit/s (:func:`effective_bandwidths`).

    Returns
    -------
    dict
        ``T_comp, T_TP, T_PP, T_DP, T_bubble, T_iter`` (s).
    """
    w = workload
    m, p = w.micro_batches, w.pp
    comp_mb = sum(_replica_compute_mb_s(builder, s) for s in range(p)) / p    # FLOPs / (p·t) / (peak·μ)
    c = _comm_terms(w, builder, bandwidths, scatter_gather=False)
    terms = {"T_comp": m * comp_mb, "T_TP": m * c["tp_mb"], "T_PP": m * c["pp_mb"], "T_DP": c["T_DP"],
             "T_bubble": (p - 1) * (comp_mb + c["pp_mb"] + c["tp_mb"])}
    terms["T_iter"] = sum(terms.values())
    return terms


def apnet_stage_aware_iteration_time(workload, builder, bandwidths: dict) -> dict[str, float]:
    """The stage-aware variant (slowest stage × m, the other stages' compute in the bubble), in seconds.

    Same arguments and keys as :func:`apnet_iteration_time`.
    """
    w = workload
    m, p = w.micro_batches, w.pp
    stage_mb = [sum(builder.stage_compute_ps(s)) * PS for s in range(p)]
    comp_mb = max(stage_mb)
    others_mb = sum(stage_mb) - comp_mb          # = (p-1)·T_comp^mb for uniform stages
    c = _comm_terms(w, builder, bandwidths, scatter_gather=True)
    terms = {"T_comp": m * comp_mb, "T_TP": m * c["tp_mb"], "T_PP": m * c["pp_mb"], "T_DP": c["T_DP"],
             "T_bubble": others_mb + (p - 1) * (c["pp_mb"] + c["tp_mb"])}
    terms["T_iter"] = sum(terms.values())
    return terms
