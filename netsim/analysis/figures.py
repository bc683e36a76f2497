"""Shared figure plumbing of the run plots: a pyplot-free Figure, its finish, units and run labels.

Models the parts every plot of :mod:`.plots` and :mod:`.trainplots` shares:
a :class:`matplotlib.figure.Figure` built without pyplot (no global state,
headless-safe), saved as PNG when a path is given; the colour of each
operation kind; the time unit (ns, µs, ms, s) that fits a range; a labelled
heat map; run-like inputs (a Run, a DataFrame, a list or ``{label: run}``)
normalised to ``{label: table}`` with distinct labels.  Leaves out any plot
of its own.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .io import Run

#: colour of each operation kind (and of the breakdown's bubble/other)
KIND_COLORS = {"compute": "#4C72B0", "tp": "#DD8452", "pp": "#55A868", "dp": "#C44E52",
               "ep": "#8172B3", "optimizer": "#7F7F7F", "bubble": "#BBBBBB", "other": "#937860"}

def finish(fig: Figure, path) -> Figure:
    """Lay the figure out, save it as PNG at ``path`` (its folder made) when given, return it."""
    fig.tight_layout()
    if path:
        d = os.path.dirname(os.fspath(path))
        if d:
            os.makedirs(d, exist_ok=True)
        fig.savefig(path, format="png", dpi=100)
    return fig

def titled(ax, title: str, legend: bool = True) -> None:
    """Title, a small legend (when asked and there are lines) and a light grid: every line plot's finish."""
    ax.set_title(title)
    if legend and ax.lines:
        ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)

def new_figure(figsize=(6.4, 4.0), ncols: int = 1):
    """A Figure and its ``ncols`` axes side by side."""
    fig = Figure(figsize=figsize)
    axes = fig.subplots(1, ncols)
    return fig, axes

def time_unit(max_ns: float) -> tuple[float, str]:
    """(divisor, label) to show ns values in ns, µs, ms or s.

    >>> time_unit(2_500_000)
    (1000000.0, 'ms')
    """
    for div, lab in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if max_ns >= div:
            return div, lab
    return 1.0, "ns"

def as_runs(runs, table: str = "fct") -> dict[str, pd.DataFrame]:
    """Normalize run-like input to ``{label: DataFrame of `table`}``."""
    if isinstance(runs, (Run, pd.DataFrame)):
        runs = [runs]
    items = runs.items() if isinstance(runs, dict) else \
        [((r.label if isinstance(r, Run) else f"run {i}"), r) for i, r in enumerate(runs)]
    out = {}
    for label, r in items:
        label, n = str(label), 2
        while label in out:  # two runs with one name stay two lines
            label, n = f"{label} ({n})", n + 1
        out[label] = getattr(r, table) if isinstance(r, Run) else r
    return out

def heatmap(fig, ax, m: np.ndarray, rows, cols, cbar_label: str, vmax=None):
    """``m`` drawn on ``ax`` with a colour bar; rows and columns labelled while they fit."""
    im = ax.imshow(m, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=vmax)
    fig.colorbar(im, ax=ax, label=cbar_label)
    if len(rows) <= 64:
        ax.set_yticks(range(len(rows)), [str(r) for r in rows], fontsize=6 if len(rows) <= 32 else 4.5)
    if len(cols) <= 40:
        ax.set_xticks(range(len(cols)), [str(c) for c in cols], fontsize=6, rotation=90)
    return im
