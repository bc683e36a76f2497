"""Aggregated link tracks of ``trace.json`` for runs too large for per-flow events.

Instead of one async event per flow and link, each link gets one counter
track ``throughput_gbps``: the bytes its flows carried in each of ``n_bins``
equal time bins, as Gbit/s. A flow's bytes are spread evenly over
``[start_ns, end_ns)`` (its mean rate), so every byte lands in the bins the
flow was active in and the bins of a link add up to the bytes of the flows
that crossed it (tested). Flows are read in chunks and binned with numpy:
memory is ``links x bins`` floats plus one chunk, whatever the flow count.

Left out: the rate inside a flow's lifetime is not resolved (a flow that
sent in bursts shows as its mean rate), and links are those of the route
the :class:`~netsim.topology.Router` gives for the flow's ECMP key
(:func:`row_keys`; not rerouted after a link failure).
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from ..network.flowkey import NO_KEY
from .traffic import natural_key


def row_keys(df) -> list[int]:
    """The ECMP key of each fct row: its ``path_key`` (what the backend routed it with), or its
    ``flow_id`` for rows without one (written before path keys existed; :func:`netsim.network.flowkey.route_key`)."""
    fid = df["flow_id"].to_numpy(np.int64)
    if "path_key" not in df.columns:
        return fid.tolist()
    pk = df["path_key"].to_numpy(np.int64)
    return np.where(pk != NO_KEY, pk, fid).tolist()


def link_key(name: str) -> tuple:
    """Sort key of a ``u->v`` link name (natural order of both ends)."""
    return tuple(natural_key(x) for x in name.split("->"))


class FlowLinks:
    """Link ids of each flow's path: ``router`` routes, or ``src->dst`` pairs without one.

    ``names`` lists the links (sorted, :func:`link_key`); ids index it.
    """

    def __init__(self, router=None, graph=None, pairs: Iterable[tuple] = ()):
        self.router = router
        if router is not None:
            edges = [f"{u}->{v}" for a, b in graph.edges() for u, v in ((a, b), (b, a))]
        else:
            edges = [f"{s}->{d}" for s, d in pairs]
        self.names = sorted(set(edges), key=link_key)
        self._id = {n: i for i, n in enumerate(self.names)}
        self._unique: dict[tuple, tuple | None] = {}

    def of(self, src: str, dst: str, key: int) -> tuple:
        """Ids of the links the flow from ``src`` to ``dst`` with ECMP key ``key`` crossed (none: a local copy)."""
        if self.router is None:
            return (self._id[f"{src}->{dst}"],)
        if src == dst:
            return ()
        key = (src, dst)
        ids = self._unique.get(key, False)
        if ids is False:  # routes without an ECMP choice are the same for every flow of the pair
            path = self.router.unique_path(src, dst)
            ids = self._unique[key] = None if path is None else self._path_ids(path)
        return ids if ids is not None else self._path_ids(self.router.path(src, dst, key))

    def _path_ids(self, path) -> tuple:
        return tuple(self._id[f"{u}->{v}"] for u, v in zip(path, path[1:]))


def bin_bytes(chunks: Iterable, links: FlowLinks, t0_ns: int, width_ns: int, n_bins: int) -> np.ndarray:
    """Bytes each link carried in each bin: an array ``(len(links.names), n_bins)``.

    ``chunks`` yields frames with ``flow_id, src, dst, size_bytes, start_ns,
    end_ns`` (and ``path_key``: :func:`row_keys`); bin ``k`` is ``[t0_ns + k*width_ns, t0_ns + (k+1)*width_ns)`` and
    must cover every flow.
    """
    n_links = len(links.names)
    acc = np.zeros(n_links * n_bins)
    diff = np.zeros(n_links * (n_bins + 1))
    for df in chunks:
        lids, rows = [], []
        for i, (key, s, d) in enumerate(zip(row_keys(df), df["src"].tolist(), df["dst"].tolist())):
            ids = links.of(s, d, key)
            lids.extend(ids)
            rows.extend([i] * len(ids))
        if not lids:
            continue
        lid = np.asarray(lids, dtype=np.int64)
        row = np.asarray(rows, dtype=np.int64)
        s = df["start_ns"].to_numpy(np.int64)[row] - t0_ns
        e = np.maximum(df["end_ns"].to_numpy(np.int64)[row] - t0_ns, s + 1)
        b = df["size_bytes"].to_numpy(np.float64)[row]
        rate = b / (e - s)
        b0 = np.minimum(s // width_ns, n_bins - 1)
        b1 = np.minimum((e - 1) // width_ns, n_bins - 1)
        one = b0 == b1
        acc += np.bincount(lid[one] * n_bins + b0[one], weights=b[one], minlength=acc.size)
        m = ~one
        lm, r, f, g = lid[m], rate[m], b0[m], b1[m]
        acc += np.bincount(lm * n_bins + f, weights=r * ((f + 1) * width_ns - s[m]), minlength=acc.size)
        acc += np.bincount(lm * n_bins + g, weights=r * (e[m] - g * width_ns), minlength=acc.size)
        inner = g > f + 1
        w = r[inner] * width_ns
        diff += np.bincount(lm[inner] * (n_bins + 1) + f[inner] + 1, weights=w, minlength=diff.size)
        diff -= np.bincount(lm[inner] * (n_bins + 1) + g[inner], weights=w, minlength=diff.size)
    full = np.cumsum(diff.reshape(n_links, n_bins + 1), axis=1)[:, :n_bins]
    return acc.reshape(n_links, n_bins) + full


def gbps(binned: np.ndarray, width_ns: int) -> np.ndarray:
    """Bytes per bin as Gbit/s, rounded to 6 decimals (the values the counters show)."""
    return np.round(binned * 8.0 / width_ns, 6)


def counter_events(binned: np.ndarray, width_ns: int) -> int:
    """Events :func:`throughput_events` writes for ``binned`` (metadata included)."""
    if not binned.size:
        return 0
    v = gbps(binned, width_ns)
    used = v.any(axis=1) | binned.any(axis=1)
    v = v[used]
    if not len(v):
        return 0
    changes = (v[:, 0] != 0).sum() + (np.diff(v, axis=1) != 0).sum() + (v[:, -1] != 0).sum()
    return int(changes + 2 * len(v) + (v[:, 0] == 0).sum())


def coarsen(binned: np.ndarray, width_ns: int, budget: int) -> tuple[np.ndarray, int]:
    """Merge pairs of adjacent bins (exact: bytes add) until the counters fit ``budget`` events."""
    while binned.shape[1] > 1 and counter_events(binned, width_ns) > budget:
        if binned.shape[1] % 2:
            binned = np.concatenate([binned, np.zeros((binned.shape[0], 1))], axis=1)
        binned = binned[:, 0::2] + binned[:, 1::2]
        width_ns *= 2
    return binned, width_ns


def throughput_events(binned: np.ndarray, names: list[str], pid0: int, t0_ns: int, width_ns: int,
                      meta: Callable) -> Iterable[dict]:
    """Counter events (Gbit/s per bin, only where the value changes) of the links that carried bytes."""
    used = [i for i in range(len(names)) if binned[i].any()]
    for n, i in enumerate(used):
        pid = pid0 + n
        yield from meta(pid, f"link {names[i]}", pid)
        last = None
        for k, v in enumerate(gbps(binned[i], width_ns).tolist()):
            if v != last:
                yield {"ph": "C", "name": "throughput_gbps", "pid": pid, "tid": 0,
                       "ts": (t0_ns + k * width_ns) / 1000.0, "args": {"gbps": v}}
                last = v
        if last:
            yield {"ph": "C", "name": "throughput_gbps", "pid": pid, "tid": 0,
                   "ts": (t0_ns + len(binned[i]) * width_ns) / 1000.0, "args": {"gbps": 0.0}}


def used_links(binned: np.ndarray) -> int:
    """Links with at least one byte (one process each in the trace)."""
    return int(binned.any(axis=1).sum()) if binned.size else 0
