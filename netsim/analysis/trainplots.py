"""Plots of a training run: per-rank timeline, iteration breakdown, traffic matrix, message sizes.

Models the training-side views of a run directory (``ops.csv``,
``summary.json``'s ``breakdown_s``, ``traffic_matrix.csv``,
``message_sizes.csv``), each a pyplot-free Figure saved as PNG when ``path``
is given (:mod:`.figures`).  Leaves out network-side plots (FCT, queues, CC,
PFC, link utilization: :mod:`.plots`, which re-exports these).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .figures import KIND_COLORS, finish, heatmap, new_figure, time_unit, titled
from .io import Run
from .metrics import iteration_breakdown

def traffic_matrix_heatmap(matrix: pd.DataFrame, path=None, title: str = "Traffic matrix") -> Figure:
    """Heat map of a src × dst bytes matrix (from ``traffic.traffic_matrix``), in MB."""
    fig, ax = new_figure(figsize=(5.6, 4.8))
    m = matrix.to_numpy(dtype=float) / 1e6 if matrix.size else np.zeros((1, 1))
    heatmap(fig, ax, m, list(matrix.index), list(matrix.columns), "MB")
    ax.set_xlabel("destination")
    ax.set_ylabel("source")
    ax.set_title(title)
    return finish(fig, path)

def gantt(ops, iteration: int | None = None, ranks=None, path=None, title: str | None = None) -> Figure:
    """Per-rank timeline of one iteration: compute and each communication kind.

    Each rank gets one row split in lanes (compute on top, then tp/pp/dp/ep…).
    ``iteration=None`` picks the first iteration present.
    """
    ops = ops.ops if isinstance(ops, Run) else ops
    if iteration is None and len(ops):
        iteration = int(ops["iteration"].min())
    o = ops[ops["iteration"] == iteration] if len(ops) else ops
    if ranks is not None:
        o = o[o["rank"].isin(list(ranks))]
    rank_list = sorted(o["rank"].unique())
    kinds = sorted(o["kind"].unique(), key=lambda k: (list(KIND_COLORS).index(k) if k in KIND_COLORS else 99, k))
    fig, ax = new_figure(figsize=(8.0, max(2.5, 0.45 * len(rank_list) + 1.2)))
    t0 = int(o["start_ns"].min()) if len(o) else 0
    div, unit = time_unit(float(o["end_ns"].max() - t0) if len(o) else 1)
    h = 0.8 / max(1, len(kinds))
    seen: set[str] = set()
    for r_i, rank in enumerate(rank_list):
        g = o[o["rank"] == rank]
        for k_i, kind in enumerate(kinds):
            gk = g[g["kind"] == kind]
            if len(gk):
                bars = list(zip((gk["start_ns"] - t0) / div, (gk["end_ns"] - gk["start_ns"]) / div))
                ax.broken_barh(bars, (r_i - 0.4 + k_i * h, h), facecolors=KIND_COLORS.get(kind, "#777777"),
                               label=None if kind in seen else kind)
                seen.add(kind)
    ax.set_yticks(range(len(rank_list)), [f"rank {r}" for r in rank_list])
    ax.invert_yaxis()
    ax.set_xlabel(f"time since iteration start ({unit})")
    ax.set_title(title or f"Iteration {iteration} timeline")
    if kinds:
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.14 * 4.5 / fig.get_figheight()),
                  ncols=min(len(kinds), 6), frameon=False)
    return finish(fig, path)

def breakdown_bar(runs, path=None, title: str = "Iteration time breakdown") -> Figure:
    """Stacked horizontal bars of ``summary['breakdown_s']`` per run."""
    if isinstance(runs, Run):
        runs = [runs]
    runs = list(runs.values()) if isinstance(runs, dict) else list(runs)
    fig, ax = new_figure(figsize=(7.0, max(2.0, 0.6 * len(runs) + 1.2) + 0.8))  # + room for the legend below
    tables = [iteration_breakdown(r.summary) for r in runs]
    comps = list(tables[0].index) if tables else []
    left = np.zeros(len(runs))
    vals_all = np.array([t["seconds"].reindex(comps, fill_value=0).to_numpy() for t in tables]) if tables else np.zeros((0, 0))
    div, unit = (1e-3, "ms") if vals_all.size and vals_all.sum(axis=1).max() < 1 else (1.0, "s")
    for j, c in enumerate(comps):
        v = vals_all[:, j] / div
        if np.any(v):
            ax.barh(range(len(runs)), v, left=left, color=KIND_COLORS.get(c), label=c)
            left += v
    ax.set_yticks(range(len(runs)), [r.label for r in runs])
    ax.invert_yaxis()
    ax.set_xlabel(f"time per iteration ({unit})")
    ax.set_title(title)
    if ax.patches:  # below the axes, so it never covers a bar
        ax.legend(fontsize="small", ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(runs) < 3 else -0.15),
                  frameon=False)
    return finish(fig, path)

def message_size_cdf(dist: pd.DataFrame, path=None, title: str = "Message sizes per parallelism") -> Figure:
    """Count-weighted CDF of message sizes, one line per group kind (``traffic.message_sizes``)."""
    fig, ax = new_figure()
    for grp, g in dist.groupby("group_kind", sort=True):
        g = g.sort_values("size_bytes")
        c = g["count"].cumsum().to_numpy(dtype=float)
        ax.step(g["size_bytes"].to_numpy(), c / c[-1], where="post", label=str(grp) or "(none)")
    ax.set_xscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("CDF")
    titled(ax, title)
    return finish(fig, path)
