"""GPU-to-GPU topologies: rings, full meshes, tori and ASTRA-sim's multi-dimensional networks.

Devices linked directly to each other (TPU ICI tori, MI300/xGMI meshes,
ASTRA-sim's ``Ring`` and ``FullyConnected`` dimensions) forward traffic for
their neighbours, so these graphs carry ``gpu_forwarding: True`` and the
router may send a flow through intermediate GPUs
(:mod:`netsim.topology.routing`).  A ``Switch`` dimension gives each GPU a NIC
(PCIe at the dimension's rate, 0 ns) on one switch per group, the hop
latency on the NIC–switch links (GPU → switch → GPU crosses two).

GPU ``i`` is ``s{k}.gpu{j}`` with ``k = i // n0``, ``j = i % n0`` (``n0`` =
the first dimension's size), so rank i is GPU i.  Dimension d groups the GPUs
whose mixed-radix coordinates (dimension 0 fastest) differ only in digit d.
Left out: link contention models of ASTRA-sim's analytical backend (netsim's
backends supply their own), bidirectional-ring splitting (the router picks
shortest paths).
"""
from __future__ import annotations

import math

import networkx as nx

from ..errors import InputError
from ..units import parse_rate, parse_time_exact_ns
from .builders import _D

DIM_KINDS = ("Ring", "FullyConnected", "Switch")
#: delay of the PCIe hop GPU -> NIC inserted on a Switch dimension (ASTRA-sim has no such hop: 0 keeps its latency)
SWITCH_NIC_DELAY_NS = 0


def _list(value, what: str) -> list:
    if isinstance(value, str):
        value = [v for v in value.replace("|", " ").replace(",", " ").split() if v]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def multi_dim(topology="Ring", npus_count="8", rate_bps=_D["nvlink_rate_bps"], delay_ns=_D["nvlink_delay_ns"],
              name: str | None = None) -> nx.Graph:
    """A multi-dimensional network: one entry per dimension in each list (``|``-separated in expressions).

    Parameters
    ----------
    topology : str or list of str
        Per dimension: ``Ring``, ``FullyConnected`` or ``Switch``.
    npus_count : int or list of int
        GPUs per group in each dimension (the product is the GPU count).
    rate_bps : float, str or list
        Link rate per dimension, bit/s (default: the NVLink default, 3.6 Tb/s).
    delay_ns : float, str or list
        Hop latency per dimension, ns.
    """
    kinds, counts = _list(topology, "topology"), [int(c) for c in _list(npus_count, "npus_count")]
    rates = [parse_rate(r) for r in _list(rate_bps, "rate_bps")]
    delays = [parse_time_exact_ns(d) for d in _list(delay_ns, "delay_ns")]
    nd = len(kinds)
    rates = rates * nd if len(rates) == 1 else rates
    delays = delays * nd if len(delays) == 1 else delays
    for field, vals in (("npus_count", counts), ("rate_bps", rates), ("delay_ns", delays)):
        if len(vals) != nd:
            raise InputError(f"{len(vals)} values for {nd} dimensions", where=field, value=vals,
                             accepted="one value per dimension of topology")
    for k in kinds:
        if k not in DIM_KINDS:
            raise InputError("unknown dimension type", where="topology", value=k, accepted=", ".join(DIM_KINDS))
    if any(c < 2 for c in counts):
        raise InputError("a dimension needs at least 2 GPUs", where="npus_count", value=counts)
    n = math.prod(counts)
    g = nx.Graph(name=name or "x".join(f"{k}{c}" for k, c in zip(kinds, counts)))
    g.graph["gpu_forwarding"] = any(k != "Switch" for k in kinds)
    g.graph["dims"] = "|".join(str(c) for c in counts)      # GPUs per dimension (importers.dims splits collectives)
    gpu = [f"s{i // counts[0]}.gpu{i % counts[0]}" for i in range(n)]
    for i, v in enumerate(gpu):
        g.add_node(v, kind="gpu", server=f"s{i // counts[0]}", index=i % counts[0])
    stride = 1
    for d, (kind, c) in enumerate(zip(kinds, counts)):
        for base in range(n):
            if (base // stride) % c:
                continue
            members = [gpu[base + k * stride] for k in range(c)]
            _wire(g, d, kind, members, rates[d], delays[d], f"d{d}.g{base}")
        stride *= c
    return g


def _wire(g, d, kind, members, rate, delay, tag) -> None:
    if kind == "Ring":
        pairs = list(zip(members, members[1:] + members[:1])) if len(members) > 2 else [tuple(members)]
    elif kind == "FullyConnected":
        pairs = [(a, b) for i, a in enumerate(members) for b in members[i + 1:]]
    else:
        sw = f"{tag}.sw"
        g.add_node(sw, kind="switch")
        for m in members:
            nic = f"{m}.nic{d}"
            # ASTRA-sim's network models no transport: an RDMA NIC (no TCP host-stack cost), not ethernet
            g.add_node(nic, kind="nic", nic_kind="roce", server=g.nodes[m]["server"])
            g.add_edge(m, nic, rate_bps=rate, delay_ns=SWITCH_NIC_DELAY_NS, kind="pcie")
            g.add_edge(nic, sw, rate_bps=rate, delay_ns=delay, kind="ethernet")
        return
    for a, b in pairs:
        g.add_edge(a, b, rate_bps=rate, delay_ns=delay, kind="nvlink")


def gpu_ring(gpus: int = 8, rate_bps=_D["nvlink_rate_bps"], delay_ns=_D["nvlink_delay_ns"]) -> nx.Graph:
    """``gpus`` GPUs in a ring of direct links (GPU forwarding on)."""
    return multi_dim("Ring", [gpus], rate_bps, delay_ns, name=f"ring{gpus}")


def gpu_mesh(gpus: int = 8, rate_bps=_D["nvlink_rate_bps"], delay_ns=_D["nvlink_delay_ns"]) -> nx.Graph:
    """``gpus`` GPUs fully connected by direct links (xGMI/MI300-style)."""
    return multi_dim("FullyConnected", [gpus], rate_bps, delay_ns, name=f"mesh{gpus}")


def gpu_torus(dims="4|4", rate_bps=_D["nvlink_rate_bps"], delay_ns=_D["nvlink_delay_ns"]) -> nx.Graph:
    """A torus (TPU-style): a ring in every dimension, e.g. ``dims=4|4`` or ``4|4|4``."""
    counts = [int(c) for c in _list(dims, "dims")]
    return multi_dim(["Ring"] * len(counts), counts, rate_bps, delay_ns, name="torus" + "x".join(map(str, counts)))
