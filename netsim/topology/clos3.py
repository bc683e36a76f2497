"""Three-tier GPU fabrics to 16k GPUs and beyond: :func:`gpu_clos3` (leaf/rail, spine, core; pods).

Modelled (the shape of NVIDIA's DGX SuperPOD and of a k-ary fat tree, Al-Fares
et al., SIGCOMM 2008): servers (:func:`~.gpubuilders.gpu_server`) are grouped
into pods of ``servers_per_pod``; in a pod, either every NIC ``j`` of every
server sits on the pod's rail switch ``p{p}.rail{j}`` (``fabric="rail"``, one
scalable unit per pod) or the NICs of ``servers_per_leaf`` servers sit on leaf
``p{p}.leaf{l}`` (``fabric="leaf_spine"``); every leaf/rail switch of a pod
links to every pod spine ``p{p}.spine{s}``; the cores form
``spines_per_pod`` planes of ``cores_per_plane`` switches, and spine ``s`` of
every pod links to every core of plane ``s`` (``core{s * cores_per_plane +
c}``), as aggregation switch ``s`` of a fat-tree pod does. Link rates are
non-blocking by default: a switch's uplinks carry what its downlinks can
bring, divided by ``oversubscription`` (leaf tier) and
``core_oversubscription`` (spine tier). Left out: parallel cables between one
pair of switches (one link of the summed rate), a storage/management fabric,
switch radix limits (any pod size is built).
"""
from __future__ import annotations

import math

import networkx as nx

from ..units import parse_rate
from .builders import _D, _NIC_EDGE_KIND, _link
from .gpubuilders import gpu_server


def _check_shape(servers, servers_per_pod, servers_per_leaf, fabric, oversubscription, core_oversubscription):
    if fabric not in ("leaf_spine", "rail"):
        raise ValueError("fabric must be leaf_spine or rail")
    if servers % servers_per_pod:
        raise ValueError(f"servers ({servers}) must be a multiple of servers_per_pod ({servers_per_pod})")
    if fabric == "leaf_spine" and servers_per_pod % servers_per_leaf:
        raise ValueError(f"servers_per_pod ({servers_per_pod}) must be a multiple of servers_per_leaf "
                         f"({servers_per_leaf})")
    if not (oversubscription >= 1 and core_oversubscription >= 1):
        raise ValueError("oversubscription and core_oversubscription must be >= 1")


def gpu_clos3(servers: int = 64, gpus_per_server: int = 8, gpus_per_nic: int = 1, fabric: str = "rail",
              servers_per_pod: int = 32, servers_per_leaf: int = 4, spines_per_pod: int = 8,
              cores_per_plane: int = 4, oversubscription: float = 1.0, core_oversubscription: float = 1.0,
              nic_kind: str = "infiniband", nic_rate_bps=_D["nic_rate_bps"], nvlink_rate_bps=_D["nvlink_rate_bps"],
              pcie_rate_bps=_D["pcie_rate_bps"], delay_ns=_D["link_delay_ns"]) -> nx.Graph:
    """GPU servers on a three-tier (leaf or rail / spine / core) fabric in pods.

    Parameters
    ----------
    servers, gpus_per_server, gpus_per_nic : int
        Cluster shape (servers ``s0..``); ``servers`` a multiple of ``servers_per_pod``.
    fabric : str
        ``rail`` (NIC ``j`` of every server of a pod on ``p{p}.rail{j}``) or
        ``leaf_spine`` (all NICs of ``servers_per_leaf`` servers on ``p{p}.leaf{l}``).
    servers_per_pod : int
        Servers per pod (default 32, a DGX SuperPOD scalable unit).
    servers_per_leaf : int
        Servers per leaf (``leaf_spine`` only; default 4, 32 NIC ports).
    spines_per_pod : int
        Spine switches per pod (default 8); also the number of core planes.
    cores_per_plane : int
        Cores each spine links to (default 4); ``spines_per_pod * cores_per_plane`` cores in all.
    oversubscription, core_oversubscription : float
        Downlink : uplink bandwidth ratio of a leaf/rail switch and of a spine (>= 1; 1 is non-blocking).
    nic_kind : str
        ``infiniband``, ``roce`` or ``ethernet``.
    nic_rate_bps, nvlink_rate_bps, pcie_rate_bps : float or str
        Rates, bit/s (defaults: 400 Gbps, 3.6 Tbps, 512 Gbps; see ``TOPOLOGY_DEFAULTS``).
    delay_ns : int or str
        Propagation delay of NIC and fabric links, ns (default 1 us).

    Examples
    --------
    >>> g = gpu_clos3(servers=4, servers_per_pod=2, spines_per_pod=2, cores_per_plane=2)
    >>> sorted({t for _, t in g.nodes(data="tier") if t})
    ['core', 'rail', 'spine']
    >>> len(g["p1.rail3"]), g.edges["p1.rail3", "p1.spine0"]["rate_bps"] / 1e9    # 2 NICs, 2 spines
    (4, 400.0)
    >>> g.edges["p1.spine1", "core3"]["rate_bps"] / 1e9    # 8 rails x 400 Gbps down, 2 cores up
    1600.0
    """
    _check_shape(servers, servers_per_pod, servers_per_leaf, fabric, oversubscription, core_oversubscription)
    if nic_kind not in _NIC_EDGE_KIND:
        raise ValueError(f"nic_kind must be one of {', '.join(_NIC_EDGE_KIND)}")
    nic_bps = float(parse_rate(nic_rate_bps))
    nics = math.ceil(gpus_per_server / gpus_per_nic)
    link_kind = _NIC_EDGE_KIND[nic_kind]
    g = nx.Graph()
    for i in range(servers):
        g.update(gpu_server(f"s{i}", gpus_per_server, gpus_per_nic, nvlink_rate_bps, pcie_rate_bps, nic_bps,
                            nic_kind))
    if fabric == "rail":
        leaves_per_pod, ports = nics, servers_per_pod
    else:
        leaves_per_pod, ports = servers_per_pod // servers_per_leaf, servers_per_leaf * nics
    leaf_up_bps = ports * nic_bps / (spines_per_pod * oversubscription)
    spine_up_bps = leaves_per_pod * leaf_up_bps / (cores_per_plane * core_oversubscription)
    for c in range(spines_per_pod * cores_per_plane):
        g.add_node(f"core{c}", kind="switch", tier="core")
    for p in range(servers // servers_per_pod):
        for s in range(spines_per_pod):
            spine = f"p{p}.spine{s}"
            g.add_node(spine, kind="switch", tier="spine", pod=p)
            for c in range(cores_per_plane):
                _link(g, spine, f"core{s * cores_per_plane + c}", spine_up_bps, delay_ns, link_kind)
        for leaf_i in range(leaves_per_pod):
            leaf = f"p{p}.rail{leaf_i}" if fabric == "rail" else f"p{p}.leaf{leaf_i}"
            g.add_node(leaf, kind="switch", tier="rail" if fabric == "rail" else "leaf", pod=p)
            for s in range(spines_per_pod):
                _link(g, leaf, f"p{p}.spine{s}", leaf_up_bps, delay_ns, link_kind)
        for i in range(p * servers_per_pod, (p + 1) * servers_per_pod):
            for j in range(nics):
                leaf = (f"p{p}.rail{j}" if fabric == "rail"
                        else f"p{p}.leaf{(i - p * servers_per_pod) // servers_per_leaf}")
                _link(g, f"s{i}.nic{j}", leaf, nic_bps, delay_ns, link_kind)
    g.graph["name"] = f"gpu_clos3_{fabric}_{servers}x{gpus_per_server}"
    return g


def clos3_nodes(args: dict) -> int:
    """Upper estimate of the nodes :func:`gpu_clos3` builds with ``args`` (all counts given, >= 1)."""
    servers, gpus, per_nic = args["servers"], args["gpus_per_server"], args["gpus_per_nic"]
    nics = -(-gpus // per_nic)
    pods = -(-servers // args["servers_per_pod"])
    leaves = pods * max(nics, -(-args["servers_per_pod"] // args["servers_per_leaf"]))
    return servers * (gpus + 2 * nics + 1) + leaves + pods * args["spines_per_pod"] \
        + args["spines_per_pod"] * args["cores_per_plane"]
