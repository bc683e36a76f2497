"""Throughput and link utilization over time, reconstructed from flow records.

A flow record only says when a flow started and ended; we spread its bytes
evenly over ``[start_ns, end_ns)`` (a zero-length flow over 1 ns). That is
exact for a flow at constant rate and an average otherwise. Bytes are payload
bytes (goodput), so utilization computed here excludes headers and ACKs.

* :func:`throughput` — bit/s per source node, destination node or
  ``src->dst`` pair in time bins (no topology needed);
* :func:`link_utilization` — fraction of each directed link's ``rate_bps``
  used, mapping every flow to its path with ``netsim.topology.Router``
  (the same ECMP hash the packet backend uses when given the same seed; with
  ``routing=spray`` the real split differs);
* :func:`backlogged_fraction` — from queue samples: the fraction of samples in
  each bin where a port's queue was non-empty (such a port was sending at line
  rate unless paused), a lower bound on its utilization.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from .traceagg import row_keys
from .traffic import natural_key


def spread_bytes(start_ns, end_ns, nbytes, edges_ns) -> np.ndarray:
    """Bytes falling in each bin ``[edges[i], edges[i+1])`` if each flow's
    bytes are spread evenly over its lifetime.

    >>> spread_bytes([0], [1000], [1000], [0, 500, 1000, 1500]).tolist()
    [500.0, 500.0, 0.0]
    """
    s = np.asarray(start_ns, dtype=float)
    e = np.asarray(end_ns, dtype=float)
    b = np.asarray(nbytes, dtype=float)
    edges = np.asarray(edges_ns, dtype=float)
    if len(s) == 0:
        return np.zeros(len(edges) - 1)
    e = np.maximum(e, s + 1.0)
    r = b / (e - s)
    t = np.concatenate([s, e])
    d = np.concatenate([r, -r])
    o = np.argsort(t, kind="stable")
    t, d = t[o], d[o]
    rate = np.cumsum(d)
    rate[np.abs(rate) < 1e-12 * max(r.max(), 1e-300)] = 0.0
    cum = np.concatenate([[0.0], np.cumsum(rate[:-1] * np.diff(t))])
    k = np.searchsorted(t, edges, side="right") - 1
    kk = np.clip(k, 0, None)
    f = np.where(k < 0, 0.0, cum[kk] + rate[kk] * (edges - t[kk]))
    return np.diff(f)


def time_edges(t0_ns: int, t1_ns: int, bin_ns: int) -> np.ndarray:
    """Bin edges from t0 covering t1 (the last bin may end after t1)."""
    n = max(1, int(np.ceil((t1_ns - t0_ns) / bin_ns)))
    return t0_ns + bin_ns * np.arange(n + 1, dtype=np.int64)


def _auto_bin(fct: pd.DataFrame, bins: int = 100) -> tuple[int, int, int]:
    t0 = int(fct["start_ns"].min()) if len(fct) else 0
    t1 = int(fct["end_ns"].max()) if len(fct) else 1
    return t0, max(t1, t0 + 1), max(1, int(np.ceil((max(t1, t0 + 1) - t0) / bins)))


def throughput(fct: pd.DataFrame, bin_ns: int | None = None, by: str = "src",
               t0_ns: int | None = None, t1_ns: int | None = None) -> pd.DataFrame:
    """Throughput (bit/s) over time; rows = bin start (ns), columns = keys.

    ``by``: ``"src"`` (egress of each node), ``"dst"`` (ingress) or ``"pair"`` (``src->dst``).
    """
    a0, a1, abin = _auto_bin(fct)
    t0 = a0 if t0_ns is None else t0_ns
    t1 = a1 if t1_ns is None else t1_ns
    bin_ns = bin_ns or abin
    edges = time_edges(t0, t1, bin_ns)
    keys = (fct["src"] + "->" + fct["dst"]) if by == "pair" else fct[by]
    cols = {}
    for key in sorted(set(keys), key=natural_key):
        g = fct[keys == key]
        cols[key] = spread_bytes(g["start_ns"], g["end_ns"], g["size_bytes"], edges) * 8 / (bin_ns * 1e-9)
    return pd.DataFrame(cols, index=pd.Index(edges[:-1], name="time_ns"))


def link_utilization(fct: pd.DataFrame, graph, bin_ns: int | None = None, router=None,
                     seed: int = 0, t0_ns: int | None = None, t1_ns: int | None = None) -> pd.DataFrame:
    """Utilization (0..1) of each directed link ``u->v`` over time.

    Rows = bin start (ns); columns = links that carried traffic. Each flow is
    mapped to ``router.path(src, dst, key)`` with its ECMP key (``path_key``,
    :func:`~.traceagg.row_keys`: the path its backend routed it on; a
    ``netsim.topology.Router`` built on ``graph`` with ``seed`` if not given).
    Local copies (``src == dst``) cross no link.
    """
    if router is None:
        from ..topology import Router  # late import: topology may be absent in unit tests
        router = Router(graph, seed=seed)
    a0, a1, abin = _auto_bin(fct)
    t0 = a0 if t0_ns is None else t0_ns
    t1 = a1 if t1_ns is None else t1_ns
    bin_ns = bin_ns or abin
    edges = time_edges(t0, t1, bin_ns)
    per_link: dict[tuple, list[int]] = defaultdict(list)
    for i, (key, s, d) in enumerate(zip(row_keys(fct), fct["src"], fct["dst"])):
        if s == d:
            continue
        path = router.path(s, d, key)
        for u, v in zip(path, path[1:]):
            per_link[(u, v)].append(i)
    starts, ends, sizes = (fct[c].to_numpy() for c in ("start_ns", "end_ns", "size_bytes"))
    cols = {}
    for (u, v) in sorted(per_link, key=lambda l: (natural_key(l[0]), natural_key(l[1]))):
        idx = per_link[(u, v)]
        rate = float(graph.edges[u, v]["rate_bps"])
        b = spread_bytes(starts[idx], ends[idx], sizes[idx], edges)
        cols[f"{u}->{v}"] = b * 8 / (bin_ns * 1e-9) / rate
    return pd.DataFrame(cols, index=pd.Index(edges[:-1], name="time_ns"))


def backlogged_fraction(queues: pd.DataFrame, bin_ns: int, threshold_bytes: int = 0) -> pd.DataFrame:
    """Fraction of queue samples above ``threshold_bytes`` per ``node->port`` and time bin."""
    if not len(queues):
        return pd.DataFrame(index=pd.Index([], name="time_ns"))
    q = queues.assign(link=queues["node"] + "->" + queues["port"],
                      bin=(queues["time_ns"] // bin_ns) * bin_ns,
                      busy=(queues["queue_bytes"] > threshold_bytes).astype(float))
    q = q.groupby(["bin", "link", "time_ns"])["busy"].max().reset_index()  # merge priorities
    out = q.groupby(["bin", "link"])["busy"].mean().unstack(fill_value=0.0)
    out = out[sorted(out.columns, key=natural_key)]
    out.index.name = "time_ns"
    return out
