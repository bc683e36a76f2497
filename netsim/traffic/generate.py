"""Background traffic: Poisson flow arrivals per host at a target load, sizes from a CDF.

Modelled: each source host ``h`` with line rate ``R_h`` starts flows as a
Poisson process of rate ``λ_h = load · R_h / (8 · E[S])`` flows per second,
``E[S]`` the exact mean of the size distribution (:mod:`netsim.traffic.cdf`),
so the expected offered load is exactly ``load`` of every host's line rate.
Destinations are uniform over the other hosts of the set. Over a window
``[start, start + duration)`` a host's arrivals are drawn as a Poisson count
with mean ``λ_h · duration`` and then that many uniform instants — the exact
law of a Poisson process on a window, so nothing is lost or bunched at the
window's edges (HPCC's ``traffic_gen`` drops each host's last in-window
arrival and starts every host one gap late, which undershoots short windows).

Every host draws from its own random stream, keyed by the run's seed and the
host's name (CRC-32), so adding a host or lengthening one host's list never
shifts another host's draws.

Left out: on/off or diurnal modulation, per-pair traffic matrices (all
destinations are equally likely), flow priorities and per-flow cc (set them
in the flow file afterwards, or via the cluster file's traffic class).

>>> from netsim.traffic.cdf import load_cdf
>>> spec = BackgroundSpec(load_cdf("websearch"), load=0.3, hosts=("h0", "h1"), host_rate_bps=(100e9, 100e9),
...                       duration_ns=1_000_000, seed=1)
>>> round(offered_load(spec), 12)
0.3
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .cdf import SizeCDF

#: largest number of flows one call generates (each is a row of a flow file)
MAX_FLOWS = 50_000_000


@dataclass(frozen=True)
class BackgroundSpec:
    """What to generate: a CDF, a load, hosts with their line rates, a window and a seed."""

    cdf: SizeCDF
    load: float
    hosts: tuple[str, ...]
    host_rate_bps: tuple[float, ...]
    duration_ns: int
    start_ns: int = 0
    seed: int = 0
    tag: str = "background"

    def __post_init__(self):
        if not (isinstance(self.load, (int, float)) and math.isfinite(self.load) and 0 < self.load <= 1):
            raise InputError("background load must be a fraction of the line rate in (0, 1]", where="load",
                             value=self.load, accepted="e.g. 0.3 for 30 %")
        if len(self.hosts) < 2 or len(set(self.hosts)) != len(self.hosts):
            raise InputError("background traffic needs at least two distinct hosts", where="hosts",
                             value=len(self.hosts))
        if len(self.host_rate_bps) != len(self.hosts) or not all(
                math.isfinite(r) and r > 0 for r in self.host_rate_bps):
            raise InputError("every host needs a finite line rate > 0", where="host_rate_bps",
                             value=self.host_rate_bps[:4])
        if any(c in self.tag for c in ',"\n\r'):
            raise InputError("a tag cannot hold a comma, a quote or a line break", where="tag", value=self.tag)
        for name, v in (("duration_ns", self.duration_ns), ("start_ns", self.start_ns)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 or (name == "duration_ns" and v == 0):
                raise InputError("must be a whole number of ns (duration > 0, start ≥ 0)", where=name, value=v)


@dataclass(frozen=True)
class BackgroundFlows:
    """Generated flows as columns, sorted by start time (ties by source, then draw order)."""

    src: np.ndarray          # host index into ``hosts``
    dst: np.ndarray          # host index into ``hosts``
    size_bytes: np.ndarray   # int64
    start_ns: np.ndarray     # int64
    hosts: tuple[str, ...]
    tag: str

    def __len__(self) -> int:
        return len(self.size_bytes)


def arrival_rate_per_s(spec: BackgroundSpec) -> np.ndarray:
    """``λ_h`` per host, flows per second."""
    return np.asarray(spec.host_rate_bps, dtype=float) * spec.load / (8.0 * spec.cdf.mean_bytes)


def offered_load(spec: BackgroundSpec) -> float:
    """Expected offered load as a fraction of the hosts' summed line rate (equals ``spec.load``)."""
    rates = np.asarray(spec.host_rate_bps, dtype=float)
    return float((arrival_rate_per_s(spec) * spec.cdf.mean_bytes * 8.0).sum() / rates.sum())


def host_stream(seed: int, host: str) -> np.random.Generator:
    """The random stream of one host: keyed by the seed and the host's name, independent of the others."""
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=(zlib.crc32(host.encode()),)))


def generate_background(spec: BackgroundSpec) -> BackgroundFlows:
    """Draw the flows of ``spec`` (see the module docstring for the law)."""
    lam = arrival_rate_per_s(spec) * (spec.duration_ns * 1e-9)
    if lam.sum() > MAX_FLOWS:
        raise InputError("background traffic would hold too many flows", where="load × duration × hosts",
                         value=int(lam.sum()), accepted=f"at most {MAX_FLOWS:,} expected flows")
    n_hosts = len(spec.hosts)
    parts = []
    for i, host in enumerate(spec.hosts):
        rng = host_stream(spec.seed, host)
        n = int(rng.poisson(lam[i]))
        t = np.sort(rng.random(n)) * spec.duration_ns
        dst = rng.integers(0, n_hosts - 1, n)
        dst += dst >= i
        parts.append((np.full(n, i, dtype=np.int64), dst.astype(np.int64), spec.cdf.sample(rng, n),
                      spec.start_ns + np.floor(t).astype(np.int64)))
    src, dst, size, start = (np.concatenate([p[k] for p in parts]) for k in range(4))
    order = np.lexsort((np.arange(len(start)), src, start))
    return BackgroundFlows(src[order], dst[order], size[order], start[order], spec.hosts, spec.tag)


def write_flow_csv(flows: BackgroundFlows, path: str) -> int:
    """Write a netsim flow CSV (``src,dst,size_bytes,start_ns,tag``); returns the number of rows.

    Written under a temporary name and renamed, so a reader never sees half a file; on an
    error the temporary file is removed (:func:`netsim.records.atomic_output`).
    """
    from ..records import atomic_output
    names = np.asarray(flows.hosts, dtype=object)
    with atomic_output(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("src,dst,size_bytes,start_ns,tag\n")
        for s, d, b, t in zip(names[flows.src], names[flows.dst], flows.size_bytes.tolist(), flows.start_ns.tolist()):
            fh.write(f"{s},{d},{b},{t},{flows.tag}\n")
    return len(flows)
