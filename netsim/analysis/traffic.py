"""Traffic structure of a training run: the traffic matrix, how it changes
across iterations, MoE non-uniformity and message-size distributions.

Definitions:

* the traffic matrix of an iteration is the bytes each (src, dst) node pair
  exchanged, from ``traffic_matrix.csv`` or, if that is empty, summed from ``fct``;
* its change between consecutive iterations i-1 → i is reported two ways:
  ``max_rel_diff`` = max over cells of |a−b| / max(a, b) (cells where both are
  zero are skipped) and ``l1_rel_diff`` = Σ|a−b| / Σa. Both are 0 for dense
  models, whose matrix repeats exactly (APNet'24);
* MoE non-uniformity of one all-to-all (one ``op`` of group kind ``ep`` in one
  iteration) is the coefficient of variation (population std / mean) of the
  bytes each participating rank receives; participants are every src or dst
  of that op's flows (a rank that receives nothing counts as 0). This is the
  factor APNet'24 saw fall from ≈0.4 to <0.1 over training.

Left out: the volume per iteration by link (see :mod:`netsim.analysis.links`).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd


def natural_key(name) -> tuple:
    """Sort key that orders ``s2.gpu10`` after ``s2.gpu9``.

    >>> sorted(["n10", "n9", "m1"], key=natural_key)
    ['m1', 'n9', 'n10']
    """
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", str(name)) if t)


def traffic_matrix_long(run) -> pd.DataFrame:
    """Long table ``iteration, src, dst, bytes`` of a :class:`Run` (or a frame)."""
    if isinstance(run, pd.DataFrame):
        return run
    tm = run.traffic_matrix
    if len(tm):
        return tm[["iteration", "src", "dst", "bytes"]]
    f = run.fct
    if not len(f):
        return tm[["iteration", "src", "dst", "bytes"]]
    g = f.groupby(["iteration", "src", "dst"], sort=True)["size_bytes"].sum()
    return g.rename("bytes").reset_index()


def traffic_matrix(run, iteration: int | None = None, nodes=None) -> pd.DataFrame:
    """Square src × dst matrix of bytes (rows src, columns dst), natural-sorted.

    ``iteration=None`` sums every iteration. ``nodes`` fixes the order/extent.
    """
    tm = traffic_matrix_long(run)
    if iteration is not None:
        tm = tm[tm["iteration"] == iteration]
    if nodes is None:
        nodes = sorted(set(tm["src"]) | set(tm["dst"]), key=natural_key)
    m = tm.groupby(["src", "dst"])["bytes"].sum().unstack(fill_value=0) if len(tm) else pd.DataFrame()
    return m.reindex(index=nodes, columns=nodes, fill_value=0).fillna(0).astype("int64")


def traffic_matrix_change(run) -> pd.DataFrame:
    """Per iteration (from the second): relative change of the matrix vs the previous one."""
    tm = traffic_matrix_long(run)
    its = sorted(tm["iteration"].unique())
    nodes = sorted(set(tm["src"]) | set(tm["dst"]), key=natural_key)
    rows = []
    prev = None
    for it in its:
        m = traffic_matrix(tm, it, nodes).to_numpy(dtype=float)
        if prev is not None:
            big = np.maximum(m, prev)
            nz = big > 0
            diff = np.abs(m - prev)
            rows.append({"iteration": int(it),
                         "max_rel_diff": float((diff[nz] / big[nz]).max()) if nz.any() else 0.0,
                         "l1_rel_diff": float(diff.sum() / prev.sum()) if prev.sum() > 0 else np.nan,
                         "bytes": int(m.sum())})
        prev = m
    return pd.DataFrame(rows, columns=["iteration", "max_rel_diff", "l1_rel_diff", "bytes"])


_INSTANCE_SUFFIX = re.compile(r"\d+$")


def group_kinds(df: pd.DataFrame) -> pd.Series:
    """The parallelism kind of every row: ``group_kind``, else ``group`` without its instance number.

    ``fct.csv`` has ``group`` = instance (``tp3``) and ``group_kind`` = kind
    (``tp``); runs written before ``group_kind`` existed (and hand-written
    tables) have only ``group``, which then held the kind.
    """
    base = df["group"].astype(str).str.replace(_INSTANCE_SUFFIX, "", regex=True) if "group" in df.columns \
        else pd.Series([""] * len(df), index=df.index, dtype=object)
    if "group_kind" not in df.columns:
        return base
    kind = df["group_kind"].astype(str)
    return kind.where(kind != "", base)


def moe_nonuniformity(fct: pd.DataFrame, group: str = "ep") -> pd.DataFrame:
    """CV of bytes received per rank, per (iteration, op) of the given group kind."""
    f = fct[group_kinds(fct) == group]
    rows = []
    for (it, op), g in f.groupby(["iteration", "op"], sort=True):
        ranks = sorted(set(g["src"]) | set(g["dst"]), key=natural_key)
        recv = g.groupby("dst")["size_bytes"].sum().reindex(ranks, fill_value=0).to_numpy(dtype=float)
        mean = recv.mean()
        rows.append({"iteration": int(it), "op": op, "ranks": len(ranks), "mean_bytes": float(mean),
                     "cv": float(recv.std(ddof=0) / mean) if mean > 0 else np.nan})
    return pd.DataFrame(rows, columns=["iteration", "op", "ranks", "mean_bytes", "cv"])


def moe_nonuniformity_by_iteration(fct: pd.DataFrame, group: str = "ep") -> pd.Series:
    """Mean all-to-all CV per iteration (the APNet'24 non-uniformity curve)."""
    per_op = moe_nonuniformity(fct, group)
    return per_op.groupby("iteration")["cv"].mean().rename("nonuniformity")


def message_sizes(run, source: str = "auto") -> pd.DataFrame:
    """Message-size counts ``group_kind, size_bytes, count`` per parallelism kind.

    ``source``: ``"message_sizes"`` (the run's table), ``"ops"`` (one message
    per rank per communication op; group_kind = op kind), ``"fct"`` (one per
    flow), or ``"auto"`` (the first of those that is not empty).
    """
    order = ("message_sizes", "ops", "fct") if source == "auto" else (source,)
    for src in order:
        if src == "message_sizes" and len(run.message_sizes):
            t = run.message_sizes.assign(group_kind=group_kinds(run.message_sizes))
            return (t.groupby(["group_kind", "size_bytes"], sort=True)["count"].sum().reset_index())
        if src == "ops" and len(run.ops):
            o = run.ops[~run.ops["kind"].isin(("compute", "optimizer"))]
            if len(o):
                return (o.groupby(["kind", "size_bytes"], sort=True).size().rename("count")
                        .reset_index().rename(columns={"kind": "group_kind"}))
        if src == "fct" and len(run.fct):
            return (run.fct.assign(group_kind=group_kinds(run.fct))
                    .groupby(["group_kind", "size_bytes"], sort=True).size().rename("count").reset_index())
    return pd.DataFrame({"group_kind": pd.Series(dtype=object), "size_bytes": pd.Series(dtype="int64"),
                         "count": pd.Series(dtype="int64")})


def message_size_stats(dist: pd.DataFrame) -> pd.DataFrame:
    """Per group kind: messages, bytes, min/median/max message size (count-weighted)."""
    rows, idx = [], []
    for grp, g in dist.groupby("group_kind", sort=True):
        g = g.sort_values("size_bytes")
        cum = g["count"].cumsum().to_numpy()
        total = int(cum[-1])
        med = int(g["size_bytes"].to_numpy()[np.searchsorted(cum, total / 2)])  # lower median
        idx.append(grp)
        rows.append({"messages": total, "bytes": int((g["size_bytes"] * g["count"]).sum()),
                     "min_bytes": int(g["size_bytes"].min()), "median_bytes": med,
                     "max_bytes": int(g["size_bytes"].max())})
    return pd.DataFrame(rows, index=pd.Index(idx, name="group_kind"),
                        columns=["messages", "bytes", "min_bytes", "median_bytes", "max_bytes"])
