"""NCCL's tuning model: latency and bandwidth of every (algorithm, protocol), and its choice.

The constants are facts from NVIDIA NCCL's ``src/graph/tuning.cc`` at commit
``b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2`` of github.com/NVIDIA/nccl (the
2.19/2.20 series: NVLS, NVLS-tree, CollNet direct/chain, Hopper tables, MNNVL)
— :data:`NCCL_VERSION`. The model, as that file computes it per collective:

* ``busBw = nChannels * bw`` (GB/s; ``bw`` = the intra-node bandwidth of one
  channel when ``nNodes <= 2``, else the inter-node one), refined per
  protocol (LL: 1/4 for all-reduce and capped at ``llMaxBw``; LL128: x0.92,
  capped at ``nChannels * perChMaxRingLL128Bw``; tree: x0.92 capped, LL /3.8,
  LL128 x7/9 on one node; CollNet direct: divided by the GPU/NIC factor, x0.85
  on Hopper), then converted to algorithm bandwidth (ring ``nRanks/nsteps``,
  NVLS 5/6, tree and CollNet 1/2);
* latency (us): ``baseLat[a][p]`` plus ``nsteps * hwLat`` for ring
  (``nsteps = 2(n-1)`` all-reduce, ``n-1`` reduce-scatter/all-gather), ``2 (ppn-1)
  intraLat + 2 log2(nNodes) interLat`` for tree, ``intraLat`` (+ ``interLat``
  across nodes) for NVLS, ``2 (min(1, ppn-1) intraLat + 0.4 (ppn-1)) + interLat``
  for CollNet direct; ring broadcast/reduce ``baseLat + hwLat`` (NCCL's
  ``sameChannels`` case);
* ``time_us = latency + nBytes / (1000 * algBw)`` with the tree correction
  factor on ``algBw`` below 256 MiB (``ncclTopoGetAlgoTime``); the cheapest
  enabled (algorithm, protocol) wins. LL128 is enabled by default only on
  NVLink-connected Volta/Ampere/Hopper GPUs of one compute capability.

Left out: NCCL's topology search (channels and per-channel bandwidth are
derived from the netsim graph instead: :func:`topology_facts`), the ring
"plateau" factor across nodes, NVLS-tree, CollNet chain, PAT, the tuner
plugin, aggregation of several operations (``numPipeOps``), and per-channel
thread counts. Pure Python, no SimPy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError

NCCL_VERSION = "NCCL src/graph/tuning.cc, github.com/NVIDIA/nccl commit b6475625 (2.19/2.20 series)"

PROTOCOLS = ("ll", "ll128", "simple")
#: algorithms of the model, netsim names (NCCL: TREE, RING, COLLNET_DIRECT, NVLS)
MODEL_ALGORITHMS = ("tree", "ring", "collnet", "nvls")
#: collectives the model covers and the algorithms NCCL allows for each
MODEL_KINDS = {"allreduce": MODEL_ALGORITHMS, "reducescatter": ("ring", "collnet", "nvls"),
               "allgather": ("ring", "collnet", "nvls"), "broadcast": ("ring",), "reduce": ("ring",)}

#: baseLat[algorithm][protocol], us (LL, LL128, Simple)
BASE_LAT_US = {"tree": (6.8, 14.0, 0.0), "ring": (6.6, 14.0, 8.4), "collnet": (0.0, 0.0, 0.0),
               "nvls": (0.0, 0.0, 0.0)}
#: hwLat[hardware][algorithm][protocol], us (LL, LL128, Simple)
HW_LAT_US = {
    "nvlink": {"tree": (0.6, 1.25, 28.0), "ring": (0.6, 1.9, 3.4), "collnet": (0.0, 0.0, 3.7),
               "nvls": (0.0, 0.0, 23.0)},
    "pci": {"tree": (1.0, 1.9, 28.0), "ring": (1.0, 2.5, 5.7), "collnet": (0.0, 0.0, 3.7),
            "nvls": (0.0, 0.0, 0.0)},
    "net": {"tree": (5.0, 8.5, 28.0), "ring": (2.7, 4.0, 14.0), "collnet": (0.0, 0.0, 31.0),
            "nvls": (0.0, 0.0, 18.0)},
}
#: Hopper rows of llMaxBws / perChMaxRingLL128Bws / perChMaxTreeBws / perChMaxTreeLL128Bws, GB/s,
#: indexed by min(nNodes, 3) - 1 (N1, N2, N4+); llMaxBw for nNodes > 1 uses the Intel-CPU row
LL_MAX_BW_GBPS = {1: 87.7, 2: 39.0, 3: 20.4}
PER_CH_RING_LL128_GBPS = (36.7, 36.7, 36.7)
PER_CH_TREE_GBPS = (38.7, 41.4, 36.0)
PER_CH_TREE_LL128_GBPS = (36.7, 36.7, 29.0)
#: treeCorrectionFactor[protocol][log2(nBytes / 64)] for 64 B .. 256 MiB
TREE_CORRECTION = {
    "ll": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    "ll128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    "simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
}
#: NCCL's getNetOverhead on an x86 Intel host, us (x3 for Simple), floor of a ring step across nodes
NET_OVERHEAD_US = 1.0
#: CollNet direct's arity serialization latency per local GPU, us
COLLNET_ARITY_US = 0.4


@dataclass(frozen=True)
class TopologyFacts:
    """What NCCL's tuner needs to know about a communicator.

    Attributes
    ----------
    n_ranks, n_nodes : int
        Ranks and servers (scale-up domains) they span.
    intra_hw : str
        ``nvlink`` or ``pci``: how GPUs of one node reach each other.
    channels : int
        NCCL channels (parallel rings).
    bw_intra_gbps, bw_inter_gbps : float
        Bandwidth of one channel inside a node and across nodes, GB/s (NCCL's
        ``bwIntra``/``bwInter``: a GPU's link rate divided by the channels).
    nvls : bool
        Every rank sits on one NVSwitch that reduces in-network (``nvls: true``).
    collnet : bool
        The scale-out switches reduce in-network (``sharp: true``), n_nodes > 1.
    ll128 : bool
        LL128 enabled (NVLink inside the node, a GPU generation NCCL enables it on).
    """

    n_ranks: int
    n_nodes: int
    intra_hw: str
    channels: int
    bw_intra_gbps: float
    bw_inter_gbps: float
    nvls: bool = False
    collnet: bool = False
    ll128: bool = True


@dataclass(frozen=True)
class AlgoCost:
    """The model's terms for one (algorithm, protocol): ``time_us = latency_us + bytes / (1000 * algbw_gbps)``."""

    algorithm: str
    protocol: str
    latency_us: float
    algbw_gbps: float

    def time_us(self, size_bytes: int) -> float:
        """Predicted time of ``size_bytes``, us (tree correction included)."""
        bw = self.algbw_gbps
        if self.algorithm == "tree":
            log_size = int(math.log2(size_bytes >> 6)) if size_bytes >= 128 else 0
            if log_size < 23:
                bw *= TREE_CORRECTION[self.protocol][log_size]
        return self.latency_us + size_bytes / (1000.0 * bw)


def _steps(kind: str, n: int) -> int:
    return 2 * (n - 1) if kind == "allreduce" else n - 1 if kind in ("reducescatter", "allgather") else n


def _busbw(algo: str, proto: str, kind: str, f: TopologyFacts) -> float:
    idx = min(f.n_nodes, 3) - 1
    bw = f.bw_intra_gbps if (f.n_nodes <= 2 or algo == "collnet") else f.bw_inter_gbps
    if algo == "nvls":
        bw = min(f.bw_intra_gbps, f.bw_inter_gbps) if f.n_nodes > 1 else f.bw_intra_gbps
    bus = f.channels * bw
    ll_max = LL_MAX_BW_GBPS[idx + 1]
    ppn = f.n_ranks / f.n_nodes
    if algo == "ring" and proto == "ll":
        bus = min(ll_max, bus * (0.25 if (f.n_nodes > 1 or kind in ("allreduce", "reduce")) else 1 / 3))
    elif algo == "ring" and proto == "ll128":
        bus = min(bus * (0.7 if ppn < 2 else 0.92), f.channels * PER_CH_RING_LL128_GBPS[idx])
    elif algo == "tree":
        bus = min(bus * 0.92, f.channels * PER_CH_TREE_GBPS[idx])
        if proto == "ll":
            bus = min(bus / 3.8, ll_max)
        elif proto == "ll128":
            bus = min(bus * (7 / 9 if f.n_nodes == 1 else 120 / 128), f.channels * PER_CH_TREE_LL128_GBPS[idx])
    elif algo == "collnet":
        factor = ppn / f.channels
        bus = bus / (factor - (factor - 1) / 2) * 0.85          # Hopper
    ratio = f.n_ranks / _steps(kind, f.n_ranks) if algo == "ring" else 5 / 6 if algo == "nvls" else 0.5
    return bus * ratio


def _latency(algo: str, proto: str, kind: str, f: TopologyFacts) -> float:
    p = PROTOCOLS.index(proto)
    intra = HW_LAT_US[f.intra_hw][algo][p]
    inter = HW_LAT_US["net"][algo][p]
    ppn = f.n_ranks // f.n_nodes
    lat = BASE_LAT_US[algo][p]
    if algo == "ring":
        if kind in ("broadcast", "reduce"):
            return lat + HW_LAT_US[f.intra_hw if f.n_nodes == 1 else "net"][algo][p]
        n_inter = 0 if f.n_nodes == 1 else (2 * f.n_nodes if kind == "allreduce" else f.n_nodes - 1)
        if f.n_nodes > 1:
            intra = max(intra, NET_OVERHEAD_US * (3 if proto == "simple" else 1))
        return lat + (_steps(kind, f.n_ranks) - n_inter) * intra + n_inter * inter
    if algo == "tree":
        return lat + 2 * ((ppn - 1) * intra + int(math.log2(f.n_nodes)) * inter)
    if algo == "collnet":
        return lat + 2 * (min(1, ppn - 1) * intra + (ppn - 1) * COLLNET_ARITY_US) + inter
    return intra + (inter if f.n_nodes > 1 else 0.0)                   # nvls: baseLat is replaced


def enabled(kind: str, facts: TopologyFacts) -> list[tuple[str, str]]:
    """The (algorithm, protocol) pairs NCCL's default enable rules leave on for ``kind``."""
    out = []
    for algo in MODEL_KINDS.get(kind, ()):
        if (algo == "nvls" and not facts.nvls) or (algo == "collnet" and not facts.collnet):
            continue
        for proto in PROTOCOLS:
            if algo in ("nvls", "collnet") and proto != "simple":
                continue
            if proto == "ll128" and not facts.ll128:
                continue
            out.append((algo, proto))
    return out


def cost(kind: str, algorithm: str, protocol: str, facts: TopologyFacts) -> AlgoCost:
    """The model's latency and algorithm bandwidth of one (algorithm, protocol) for ``kind``."""
    if kind not in MODEL_KINDS or algorithm not in MODEL_KINDS[kind] or protocol not in PROTOCOLS:
        raise InputError("NCCL's tuning model has no such entry", where="collective algorithm/protocol",
                         value=f"{kind}/{algorithm}/{protocol}",
                         accepted="; ".join(f"{k}: {', '.join(v)}" for k, v in MODEL_KINDS.items())
                         + f" with protocol {', '.join(PROTOCOLS)}")
    return AlgoCost(algorithm, protocol, _latency(algorithm, protocol, kind, facts),
                    _busbw(algorithm, protocol, kind, facts))


def choose(kind: str, size_bytes: int, facts: TopologyFacts,
           algorithms: tuple[str, ...] | None = None) -> AlgoCost:
    """The cheapest enabled (algorithm, protocol) for ``size_bytes`` (first in model order on a tie).

    ``algorithms`` restricts the candidates (e.g. to those the backend can run).
    """
    best, best_t = None, math.inf
    for algo, proto in enabled(kind, facts):
        if algorithms is not None and algo not in algorithms:
            continue
        c = cost(kind, algo, proto, facts)
        if c.algbw_gbps <= 0:
            continue
        t = c.time_us(size_bytes)
        if t < best_t:
            best, best_t = c, t
    if best is None:
        return cost(kind, "ring", "simple", facts) if kind in MODEL_KINDS else AlgoCost("ring", "simple", 0.0, 1.0)
    return best
