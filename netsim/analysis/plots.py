"""Plots of runs (matplotlib, object-oriented API, headless-safe).

Every function builds a :class:`matplotlib.figure.Figure` without pyplot (no
global state, no display needed, works in Jupyter where the figure renders
as PNG), returns it, and saves it as PNG when ``path`` is given. Run-like
arguments accept a :class:`~netsim.analysis.io.Run`, a DataFrame, a list of
runs or a ``{label: run}`` dict; one line (or bar) per run.

This module draws the network side of a run (FCT CDF and slowdown, CC and
queue time series, link utilization, PFC pauses, a comparison of runs); the
training side (timeline, breakdown, traffic matrix, message sizes) is
:mod:`.trainplots` and the shared plumbing :mod:`.figures`, both re-exported
here.  Leaves out interactive plots (none are made).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .figures import KIND_COLORS, as_runs, finish, heatmap, new_figure, time_unit, titled  # noqa: F401
from .io import Run
from .metrics import DEFAULT_SIZE_EDGES, fct_table, iteration_breakdown, pfc_pause_table, size_bucket_labels
from .trainplots import breakdown_bar, gantt, message_size_cdf, traffic_matrix_heatmap  # noqa: F401


def fct_cdf(runs, by: str | None = None, column: str = "fct_ns", path=None, title: str = "FCT CDF") -> Figure:
    """Empirical CDF of FCT (or ``column="slowdown"``), one line per run (or per ``by`` value)."""
    fig, ax = new_figure()
    frames = as_runs(runs)
    allv = pd.concat([f[column] for f in frames.values()]) if frames else pd.Series(dtype=float)
    div, unit = time_unit(float(allv.max()) if len(allv) else 1) if column.endswith("_ns") else (1.0, "")
    for label, f in frames.items():
        groups = [(label, f)] if by is None else [(f"{label} {k}" if len(frames) > 1 else str(k), g)
                                                  for k, g in f.groupby(by, sort=True)]
        for lab, g in groups:
            v = np.sort(g[column].dropna().to_numpy(dtype=float)) / div
            if len(v):
                ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=lab)
    ax.set_xscale("log")
    ax.set_xlabel(f"FCT ({unit})" if column == "fct_ns" else (f"{column} ({unit})" if unit else column))
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    titled(ax, title)
    return finish(fig, path)

def slowdown_by_size(runs, edges: Sequence[int] = DEFAULT_SIZE_EDGES, stats=("p50", "p99"),
                     path=None, title: str = "Slowdown by flow size") -> Figure:
    """Slowdown percentiles per size bucket: one line per run and statistic."""
    fig, ax = new_figure()
    labels = size_bucket_labels(edges)
    x = np.arange(len(labels))
    for label, f in as_runs(runs).items():
        t = fct_table(f, "size", edges, percentiles=(50, 95, 99))
        for st in stats:
            ax.plot(x, t[f"slowdown_{st}"].to_numpy(), marker="o", label=f"{label} {st}")
    ax.set_xticks(x, labels)
    ax.set_xlabel("flow size")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    ax.set_yscale("log")
    titled(ax, title)
    return finish(fig, path)

def cc_timeseries(cc, metric: str = "cwnd_bytes", flows=None, max_flows: int = 16, path=None,
                  title: str | None = None, min_samples: int = 3) -> Figure:
    """``cwnd_bytes`` / ``rate_bps`` / ``alpha`` / ``srtt_ns`` over time.

    One step line per flow when flows carry a history (median samples per flow
    ≥ ``min_samples``); otherwise — a training run, where most flows are short
    and sampled once or twice — every sample as a dot and the median of the
    samples per time bin as a line, so the plot is never blank.
    """
    cc = cc.cc if isinstance(cc, Run) else cc
    fig, ax = new_figure()
    d = cc.dropna(subset=[metric])
    div, unit = time_unit(float(d["time_ns"].max()) if len(d) else 1)
    scale, ylab = {"rate_bps": (1e9, "rate (Gbit/s)"), "cwnd_bytes": (1e3, "cwnd (KB)"),
                   "srtt_ns": (1e3, "SRTT (µs)")}.get(metric, (1.0, metric))
    per_flow = d.groupby("flow_id").size() if len(d) else pd.Series(dtype=int)
    if flows is None and len(per_flow) and float(per_flow.median()) < min_samples:
        _cc_samples(ax, d, metric, div, scale)
        ax.set_xlabel(f"time ({unit})")
        ax.set_ylabel(ylab)
        titled(ax, title or f"{metric}, all {len(per_flow)} flows", legend=True)
        return finish(fig, path)
    ids = sorted(d["flow_id"].unique()) if flows is None else list(flows)
    ids = ids[:max_flows]
    for fid in ids:
        g = d[d["flow_id"] == fid]
        ax.plot(g["time_ns"] / div, g[metric] / scale, drawstyle="steps-post", label=f"flow {fid}")
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylab)
    titled(ax, title or f"{metric} per flow", legend=0 < len(ids) <= 10)
    return finish(fig, path)

def _cc_samples(ax, d: pd.DataFrame, metric: str, div: float, scale: float, bins: int = 50,
                classes: int = 3) -> None:
    """Every sample as a faint dot, plus per-bin medians (sparse per-flow histories).

    Flows are put in classes by their first sample (for a rate, the line rate
    they start at: NVLink and NIC flows differ tenfold), and the median of each
    of the ``classes`` largest classes is drawn per time bin, so one line never
    mixes populations.
    """
    d = d.sort_values(["flow_id", "time_ns"], kind="stable")
    first = d.groupby("flow_id")[metric].transform("first") / scale
    t = d["time_ns"].to_numpy(dtype=float)
    v = d[metric].to_numpy(dtype=float) / scale
    ax.plot(t / div, v, ".", ms=2, alpha=0.3, color="#888888", label=f"samples ({len(v)})")
    if not len(t) or t.max() <= t.min():
        return
    edges = np.linspace(t.min(), t.max(), bins + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1)
    mid = (edges[:-1] + edges[1:]) / 2
    n_flows = d.assign(_first=first.to_numpy()).groupby("_first")["flow_id"].nunique()
    for start in n_flows.sort_values(ascending=False, kind="stable").index[:classes]:
        sel = first.to_numpy() == start
        med = pd.Series(v[sel]).groupby(idx[sel]).median()
        ax.plot(mid[med.index.to_numpy()] / div, med.to_numpy(), "-", lw=1.5,
                label=f"median, flows starting at {start:.4g} ({int(n_flows[start])})")

def queue_timeseries(queues, ports=None, top: int = 8, path=None, title: str = "Queue occupancy") -> Figure:
    """Queue bytes over time per ``node->port`` (priorities summed); default the ``top`` deepest."""
    queues = queues.queues if isinstance(queues, Run) else queues
    fig, ax = new_figure()
    q = queues.groupby(["node", "port", "time_ns"], sort=True)["queue_bytes"].sum().reset_index()
    q["link"] = q["node"] + "->" + q["port"]
    if ports is None:
        peak = q.groupby("link")["queue_bytes"].max()
        peak = peak[peak > 0].sort_values(ascending=False, kind="stable")
        ports = list(peak.index[:top])
    div, unit = time_unit(float(q["time_ns"].max()) if len(q) else 1)
    for link in ports:
        g = q[q["link"] == link]
        ax.plot(g["time_ns"] / div, g["queue_bytes"] / 1e3, drawstyle="steps-post", label=link)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("queue (KB)")
    titled(ax, title)
    return finish(fig, path)

def utilization_heatmap(util: pd.DataFrame, path=None, title: str = "Link utilization", max_links: int = 32,
                        value_label: str = "utilization", ylabel: str = "link") -> Figure:
    """Heat map of a links × time table (from ``links.link_utilization`` or ``throughput``;
    for the latter pass e.g. ``value_label="Gbit/s", ylabel="node"``).

    Rows are labelled with the link (or node) names; beyond ``max_links`` rows
    only the busiest (highest mean) are drawn, in name order, and the title says
    how many of how many.
    """
    fig, ax = new_figure(figsize=(7.0, 4.5 if util.shape[1] <= 16 else 6.0))
    u = util
    if u.shape[1] > max_links:
        keep = set(u.mean().sort_values(ascending=False, kind="stable").index[:max_links])
        u = u[[c for c in u.columns if c in keep]]
        title = f"{title} (busiest {max_links} of {util.shape[1]})"
    div, unit = time_unit(float(u.index.max()) if len(u) else 1)
    m = u.to_numpy(dtype=float).T if u.size else np.zeros((1, 1))
    vmax = max(1.0, float(np.nanmax(m)) if m.size else 1.0) if value_label == "utilization" else None
    heatmap(fig, ax, m, list(u.columns), [], value_label, vmax=vmax)
    if len(u):
        ticks = np.linspace(0, len(u) - 1, min(6, len(u))).astype(int)
        ax.set_xticks(ticks, [f"{u.index[i] / div:.3g}" for i in ticks])
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return finish(fig, path)

def pfc_pause_bar(pfc, end_ns: int | None = None, top: int = 16, path=None, title: str = "PFC pause time per port") -> Figure:
    """Bar per paused ``node->port (prio)`` of its total pause time."""
    if isinstance(pfc, Run):
        end_ns = end_ns or pfc.end_ns
        pfc = pfc.pfc
    t = pfc_pause_table(pfc, end_ns).sort_values("pause_time_ns", ascending=False, kind="stable").head(top)
    fig, ax = new_figure()
    div, unit = time_unit(float(t["pause_time_ns"].max()) if len(t) else 1)
    labels = [f"{n}->{p} ({q})" for n, p, q in zip(t["node"], t["port"], t["priority"])]
    ax.barh(range(len(t)), t["pause_time_ns"] / div, color="#C44E52")
    ax.set_yticks(range(len(t)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"pause time ({unit})")
    ax.set_title(title)
    return finish(fig, path)

def compare_runs(runs, percentiles=(50, 95, 99), path=None, title: str = "Run comparison") -> Figure:
    """Side by side: FCT percentiles per run (grouped bars) and, if the runs
    have a breakdown, their iteration times (stacked bars)."""
    if isinstance(runs, dict):
        runs = [Run(label=k, fct=v.fct, summary=v.summary) if isinstance(v, Run) else Run(label=k, fct=v)
                for k, v in runs.items()]
    runs = list(runs)
    has_iter = any(r.summary.get("breakdown_s") for r in runs)
    fig, axes = new_figure(figsize=(10.0 if has_iter else 6.4, 4.0), ncols=2 if has_iter else 1)
    ax = axes[0] if has_iter else axes
    tabs = [fct_table(r.fct, None, percentiles=percentiles) for r in runs]
    vals = np.array([[t[f"fct_p{p:g}_ns"].iloc[0] for p in percentiles] for t in tabs])
    div, unit = time_unit(float(np.nanmax(vals)) if vals.size and np.isfinite(vals).any() else 1)
    w = 0.8 / max(1, len(runs))
    x = np.arange(len(percentiles))
    for i, r in enumerate(runs):
        ax.bar(x + i * w - 0.4 + w / 2, vals[i] / div, width=w, label=r.label)
    ax.set_xticks(x, [f"p{p:g}" for p in percentiles])
    ax.set_ylabel(f"FCT ({unit})")
    ax.set_title(title)
    ax.legend(fontsize="small")
    if has_iter:
        ax2 = axes[1]
        tables = [iteration_breakdown(r.summary) for r in runs]
        left = np.zeros(len(runs))
        for c in tables[0].index:
            v = np.array([t.loc[c, "seconds"] if c in t.index else 0.0 for t in tables]) * 1e3
            if np.any(v):
                ax2.barh(range(len(runs)), v, left=left, color=KIND_COLORS.get(c), label=c)
                left += v
        ax2.set_yticks(range(len(runs)), [r.label for r in runs])
        ax2.invert_yaxis()
        ax2.set_xlabel("iteration time (ms)")
        ax2.set_title("Iteration breakdown")
        ax2.legend(fontsize="small", ncols=3)
    return finish(fig, path)
