"""Topology builders: plain ``nx.Graph`` objects meeting the contract of :mod:`.schema`.

Builders: :func:`dumbbell`, :func:`leaf_spine`, :func:`fat_tree` here;
:func:`gpu_server`, :func:`gpu_cluster` (rail-optimized or leaf-spine fabric,
per-server NIC kind and rate) and :func:`two_clusters` (an RDMA cluster and an
Ethernet cluster joined by a slower link) in :mod:`.gpubuilders`, re-exported;
the three-tier ``gpu_clos3`` (pods of rail/leaf switches, spines, cores; to
16k GPUs and beyond) in :mod:`.clos3`.
:data:`BUILDERS` maps names to builders so that an expression
``"leaf_spine:leaves=4,spines=2"`` can be built by :func:`build_expression`.

Every builder is non-blocking unless oversubscription is asked for
(``leaf_spine`` and ``gpu_cluster`` take ``oversubscription``); a fat tree is
non-blocking by construction, a dumbbell a bottleneck by design. What the
GPU servers model and leave out: :mod:`.gpubuilders`.
"""
from __future__ import annotations

import inspect

import networkx as nx

from ..params import Param, ParamTable
from ..units import parse_rate, parse_time_exact_ns

TOPOLOGY_DEFAULTS = ParamTable("topology builder", [
    Param("nvlink_rate_bps", 3.6e12, "rate",
          "NVLink per GPU to the NVSwitch, each direction (H100 NVLink 4: 18 links, 900 GB/s bidirectional "
          "= 450 GB/s = 3.6 Tbps each way)", "NVIDIA H100 Tensor Core GPU datasheet / DGX H100 user guide"),
    Param("pcie_rate_bps", 512e9, "rate",
          "PCIe Gen5 x16 per direction (32 GT/s x 16 lanes, 128b/130b ~ 504 Gbps, ~64 GB/s); Gen4 x16 is 256e9",
          "PCI-SIG PCIe 5.0 Base Specification (32 GT/s per lane)"),
    Param("nic_rate_bps", 400e9, "rate",
          "NIC line rate (ConnectX-7: 400 Gbps; ConnectX-6: 200; ConnectX-5: 100)",
          "NVIDIA ConnectX-7 / ConnectX-6 / ConnectX-5 product briefs"),
    Param("nvlink_delay_ns", 100, "time", "NVLink hop latency (GPU <-> NVSwitch), order of 100 ns",
          "order of magnitude from NVSwitch latency figures (sub-microsecond GPU-to-GPU)"),
    Param("pcie_delay_ns", 150, "time", "PCIe switch hop latency, order of 100-200 ns",
          "PCIe switch vendor data (Broadcom PEX89000: ~115 ns port-to-port)"),
    Param("link_delay_ns", 1000, "time", "datacenter cable + switch hop propagation, 1 us as in HPCC's examples",
          "HPCC (Li et al., SIGCOMM 2019) topology.txt examples: 1000ns per link"),
    Param("host_rate_bps", 100e9, "rate", "host NIC rate in generic (non-GPU) topologies",
          "HPCC evaluation: 100 Gbps host links"),
])

_D = TOPOLOGY_DEFAULTS.defaults()
_NIC_EDGE_KIND = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}


def _link(g: nx.Graph, u: str, v: str, rate_bps, delay_ns, kind: str) -> None:
    g.add_edge(u, v, rate_bps=float(parse_rate(rate_bps)), delay_ns=parse_time_exact_ns(delay_ns), kind=kind)


def dumbbell(n_left: int = 2, n_right: int = 2, host_rate_bps=_D["host_rate_bps"],
             bottleneck_rate_bps=None, delay_ns=_D["link_delay_ns"], link_kind: str = "ethernet") -> nx.Graph:
    """Two switches joined by one bottleneck link, hosts on each side.

    Parameters
    ----------
    n_left, n_right : int
        Hosts ``left0..`` on ``switch_left`` and ``right0..`` on ``switch_right``.
    host_rate_bps : float or str
        Host link rate, bit/s (default 100 Gbps).
    bottleneck_rate_bps : float or str, optional
        Switch-to-switch rate, bit/s (default: ``host_rate_bps``).
    delay_ns : int or str
        Propagation delay of every link, ns (default 1 us).
    link_kind : str
        ``ethernet`` or ``infiniband``.

    Examples
    --------
    >>> g = dumbbell(2, 3, bottleneck_rate_bps="40Gbps")
    >>> g.number_of_nodes(), g.edges["switch_left", "switch_right"]["rate_bps"]
    (7, 40000000000.0)
    """
    g = nx.Graph(name=f"dumbbell_{n_left}x{n_right}")
    g.add_node("switch_left", kind="switch")
    g.add_node("switch_right", kind="switch")
    for i in range(n_left):
        g.add_node(f"left{i}", kind="host")
        _link(g, f"left{i}", "switch_left", host_rate_bps, delay_ns, link_kind)
    for i in range(n_right):
        g.add_node(f"right{i}", kind="host")
        _link(g, f"right{i}", "switch_right", host_rate_bps, delay_ns, link_kind)
    _link(g, "switch_left", "switch_right",
          host_rate_bps if bottleneck_rate_bps is None else bottleneck_rate_bps, delay_ns, link_kind)
    return g


def leaf_spine(leaves: int = 4, spines: int = 2, hosts_per_leaf: int = 4, host_rate_bps=_D["host_rate_bps"],
               fabric_rate_bps=None, delay_ns=_D["link_delay_ns"], link_kind: str = "ethernet",
               oversubscription: float = 1.0) -> nx.Graph:
    """Two-tier Clos: hosts ``h0..`` on ``leaf0..``, every leaf linked to every ``spine0..``.

    Parameters
    ----------
    leaves, spines, hosts_per_leaf : int
        Counts; host ``h{i}`` sits on leaf ``i // hosts_per_leaf``.
    host_rate_bps : float or str
        Host-to-leaf rate, bit/s (default 100 Gbps).
    fabric_rate_bps : float or str, optional
        Leaf-to-spine rate per link, bit/s. Default: non-blocking — the
        rate at which a leaf's uplinks carry what its hosts can send,
        ``hosts_per_leaf * host_rate_bps / (spines * oversubscription)``,
        and never below ``host_rate_bps`` when ``oversubscription`` is 1 (a
        fabric link slower than a host link would cap a single flow).
    delay_ns : int or str
        Propagation delay per link, ns (default 1 us).
    link_kind : str
        ``ethernet`` or ``infiniband``.
    oversubscription : float
        Downlink : uplink capacity of a leaf (>= 1; default 1, non-blocking).
        Give this or ``fabric_rate_bps``, not both.

    Examples
    --------
    >>> g = leaf_spine(4, 2, 4)
    >>> sum(1 for _, k in g.nodes(data="kind") if k == "host"), g.number_of_edges()
    (16, 24)
    >>> g.edges["leaf0", "spine0"]["rate_bps"] / 1e9    # 4 x 100 Gbps down, 2 x 200 Gbps up
    200.0
    >>> leaf_spine(4, 2, 4, oversubscription=2).edges["leaf0", "spine0"]["rate_bps"] / 1e9
    100.0
    """
    g = nx.Graph(name=f"leaf_spine_{leaves}x{spines}x{hosts_per_leaf}")
    fabric = _leaf_spine_fabric_rate(spines, hosts_per_leaf, host_rate_bps, fabric_rate_bps, oversubscription)
    for s in range(spines):
        g.add_node(f"spine{s}", kind="switch", tier="spine")
    for l in range(leaves):
        leaf = f"leaf{l}"
        g.add_node(leaf, kind="switch", tier="leaf")
        for s in range(spines):
            _link(g, leaf, f"spine{s}", fabric, delay_ns, link_kind)
        for j in range(hosts_per_leaf):
            h = f"h{l * hosts_per_leaf + j}"
            g.add_node(h, kind="host")
            _link(g, h, leaf, host_rate_bps, delay_ns, link_kind)
    return g


def _leaf_spine_fabric_rate(spines: int, hosts_per_leaf: int, host_rate_bps, fabric_rate_bps,
                            oversubscription: float) -> float:
    """The leaf-spine link rate (bit/s) :func:`leaf_spine` documents, or ValueError."""
    if not oversubscription >= 1:
        raise ValueError("oversubscription must be >= 1 (downlink : uplink capacity of a leaf)")
    if fabric_rate_bps is not None:
        if oversubscription != 1:
            raise ValueError("give oversubscription or fabric_rate_bps, not both")
        return float(parse_rate(fabric_rate_bps))
    host = float(parse_rate(host_rate_bps))
    if spines < 1:
        return host                                # no leaf-spine links: the rate is never used
    needed = hosts_per_leaf * host / (spines * oversubscription)
    if oversubscription == 1:
        return max(host, needed)
    if needed < host:
        raise ValueError(f"oversubscription {oversubscription:g} needs leaf-spine links of {needed / 1e9:g} Gbps, "
                         f"slower than the host rate {host / 1e9:g} Gbps; give fabric_rate_bps instead")
    return needed


def fat_tree(k: int = 4, rate_bps=_D["host_rate_bps"], delay_ns=_D["link_delay_ns"],
             link_kind: str = "ethernet") -> nx.Graph:
    """k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k^3/4 hosts, 5k^2/4 switches.

    ``k`` pods of ``k/2`` edge (``p{p}.edge{i}``) and ``k/2`` aggregation
    (``p{p}.agg{i}``) switches; ``(k/2)^2`` cores ``core{c}``; agg ``i`` of
    every pod links to cores ``i*k/2 .. i*k/2 + k/2 - 1``; hosts ``h0..``.

    Parameters
    ----------
    k : int
        Even switch radix.
    rate_bps : float or str
        Rate of every link, bit/s (default 100 Gbps).
    delay_ns : int or str
        Propagation delay per link, ns (default 1 us).

    Examples
    --------
    >>> g = fat_tree(4)
    >>> kinds = [k for _, k in g.nodes(data="kind")]
    >>> kinds.count("host"), kinds.count("switch")
    (16, 20)
    """
    if k < 2 or k % 2:
        raise ValueError("k must be an even integer >= 2")
    half = k // 2
    g = nx.Graph(name=f"fat_tree_k{k}")
    for c in range(half * half):
        g.add_node(f"core{c}", kind="switch")
    h = 0
    for p in range(k):
        for i in range(half):
            agg, edge = f"p{p}.agg{i}", f"p{p}.edge{i}"
            g.add_node(agg, kind="switch")
            g.add_node(edge, kind="switch")
            for c in range(half):
                _link(g, agg, f"core{i * half + c}", rate_bps, delay_ns, link_kind)
        for i in range(half):
            edge = f"p{p}.edge{i}"
            for j in range(half):
                _link(g, edge, f"p{p}.agg{j}", rate_bps, delay_ns, link_kind)
            for _ in range(half):
                g.add_node(f"h{h}", kind="host")
                _link(g, f"h{h}", edge, rate_bps, delay_ns, link_kind)
                h += 1
    return g


# the GPU builders use the defaults and helpers above
from .gpubuilders import gpu_cluster, gpu_server, two_clusters  # noqa: E402

BUILDERS = {f.__name__: f for f in (dumbbell, leaf_spine, fat_tree, gpu_server, gpu_cluster, two_clusters)}


def _register_direct() -> None:
    """GPU-to-GPU builders (:mod:`.directbuilders`) and the three-tier :func:`~.clos3.gpu_clos3`
    (imported late: they use this module's defaults)."""
    from .clos3 import gpu_clos3
    from .directbuilders import gpu_mesh, gpu_ring, gpu_torus, multi_dim
    BUILDERS.update({f.__name__: f for f in (gpu_ring, gpu_mesh, gpu_torus, multi_dim, gpu_clos3)})


_register_direct()


def builder_args(name: str) -> list[str]:
    """Argument names accepted by builder ``name``."""
    return list(inspect.signature(BUILDERS[name]).parameters)
