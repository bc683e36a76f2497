"""Topology builders: plain ``nx.Graph`` objects meeting the contract of :mod:`.schema`.

Builders: :func:`dumbbell`, :func:`leaf_spine`, :func:`fat_tree`,
:func:`gpu_server`, :func:`gpu_cluster` (rail-optimized or leaf-spine fabric,
per-server NIC kind and rate) and :func:`two_clusters` (an RDMA cluster and an
Ethernet cluster joined by a slower link). :data:`BUILDERS` maps names to
builders so that an expression ``"leaf_spine:leaves=4,spines=2"`` can be
built by :func:`build_expression`.

Modelled: one logical NVSwitch per server (DGX H100 has four NVSwitch chips
that together give every GPU its full NVLink bandwidth; one node with one
link per GPU at that bandwidth is equivalent for routing and rates), one PCIe
switch per NIC joining its GPUs to it. Left out: the CPU root complex, host
memory traffic, NVLink between servers (NVL72), multiple links between the
same pair of switches (a leaf-spine pair gets one link of the summed rate).
"""
from __future__ import annotations

import inspect
import math

import networkx as nx

from ..params import Param, ParamTable
from ..units import parse_rate, parse_time_ns

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
    g.add_edge(u, v, rate_bps=float(parse_rate(rate_bps)), delay_ns=parse_time_ns(delay_ns), kind=kind)


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


def gpu_server(name: str = "s0", gpus: int = 8, gpus_per_nic: int = 1, nvlink_rate_bps=_D["nvlink_rate_bps"],
               pcie_rate_bps=_D["pcie_rate_bps"], nic_rate_bps=_D["nic_rate_bps"], nic_kind: str = "infiniband",
               nvswitch: bool = True, nvlink_delay_ns=_D["nvlink_delay_ns"],
               pcie_delay_ns=_D["pcie_delay_ns"], root_complex: bool | None = None) -> nx.Graph:
    """One GPU server (DGX/HGX-like): GPUs on an NVSwitch, PCIe switches to NICs.

    Nodes: ``{name}.gpu{i}`` (kind gpu), ``{name}.nvs0`` (nvswitch),
    ``{name}.pcie{j}`` (pcie_switch) and ``{name}.nic{j}`` (nic, attr
    ``nic_kind``); GPUs ``j*gpus_per_nic .. (j+1)*gpus_per_nic-1`` share PCIe
    switch and NIC ``j``. Every node has ``server=name``; GPUs and NICs an
    ``index``. The NIC's network link is added by :func:`gpu_cluster`.

    Parameters
    ----------
    name : str
        Server name, prefix of its node names.
    gpus : int
        GPUs per server (default 8).
    gpus_per_nic : int
        GPUs per PCIe switch / NIC (1 as on DGX H100, 2 as on DGX A100).
    nvlink_rate_bps : float or str
        NVLink per GPU to the NVSwitch, each direction, bit/s (default
        3.6 Tbps: H100 NVLink 4, 900 GB/s bidirectional).
    pcie_rate_bps : float or str
        PCIe link rate per direction, bit/s (default 512 Gbps, Gen5 x16;
        Gen4 x16 is 256 Gbps).
    nic_rate_bps : float or str
        NIC rate, bit/s (default 400 Gbps, ConnectX-7); the PCIe hop NIC <->
        PCIe switch runs at ``pcie_rate_bps``.
    nic_kind : str
        ``infiniband``, ``roce`` or ``ethernet``.
    nvswitch : bool
        False for a PCIe-only server (no NVLink).
    nvlink_delay_ns, pcie_delay_ns : int or str
        Hop latencies, ns.
    root_complex : bool, optional
        Add ``{name}.rc0`` (kind pcie_switch, the CPU root complex) linked to
        every PCIe switch, so GPUs on different PCIe switches can talk
        without NVLink. Default: only when ``nvswitch`` is False (with an
        NVSwitch, a root complex would offer equal-hop detours through the
        CPU to another rail's NIC, which NCCL never uses).

    Examples
    --------
    >>> g = gpu_server("s0", gpus=8, gpus_per_nic=2)
    >>> kinds = [k for _, k in g.nodes(data="kind")]
    >>> kinds.count("gpu"), kinds.count("nic"), kinds.count("pcie_switch"), g.nodes["s0.nic3"]["nic_kind"]
    (8, 4, 4, 'infiniband')
    """
    if gpus < 1 or gpus_per_nic < 1:
        raise ValueError("gpus and gpus_per_nic must be >= 1")
    if nic_kind not in _NIC_EDGE_KIND:
        raise ValueError(f"nic_kind must be one of {', '.join(_NIC_EDGE_KIND)}")
    g = nx.Graph(name=f"gpu_server_{name}")
    nvs = f"{name}.nvs0"
    if nvswitch:
        g.add_node(nvs, kind="nvswitch", server=name)
    n_nics = math.ceil(gpus / gpus_per_nic)
    rc = f"{name}.rc0"
    if root_complex if root_complex is not None else not nvswitch:
        g.add_node(rc, kind="pcie_switch", server=name)
    for j in range(n_nics):
        pcie, nic = f"{name}.pcie{j}", f"{name}.nic{j}"
        g.add_node(pcie, kind="pcie_switch", server=name, index=j)
        if rc in g:
            _link(g, pcie, rc, pcie_rate_bps, pcie_delay_ns, "pcie")
        g.add_node(nic, kind="nic", server=name, index=j, nic_kind=nic_kind)
        _link(g, pcie, nic, pcie_rate_bps, pcie_delay_ns, "pcie")
    for i in range(gpus):
        gpu = f"{name}.gpu{i}"
        g.add_node(gpu, kind="gpu", server=name, index=i)
        _link(g, gpu, f"{name}.pcie{i // gpus_per_nic}", pcie_rate_bps, pcie_delay_ns, "pcie")
        if nvswitch:
            _link(g, gpu, nvs, nvlink_rate_bps, nvlink_delay_ns, "nvlink")
    return g


def _per_server(value, servers: int, what: str) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return list(value) * servers
        if len(value) != servers:
            raise ValueError(f"{what}: expected 1 or {servers} values (one per server), got {len(value)}")
        return list(value)
    return [value] * servers


def gpu_cluster(servers: int = 8, gpus_per_server: int = 8, gpus_per_nic: int = 1, fabric: str = "leaf_spine",
                nic_kinds="infiniband", nic_rates_bps=_D["nic_rate_bps"], servers_per_leaf: int | None = None,
                spines: int | None = None, oversubscription: float = 1.0, fabric_rate_bps=None,
                nvlink_rate_bps=_D["nvlink_rate_bps"], pcie_rate_bps=_D["pcie_rate_bps"], nvswitch: bool = True,
                root_complex: bool | None = None, delay_ns=_D["link_delay_ns"], prefix: str = "", server_offset: int = 0,
                cluster: str | None = None) -> nx.Graph:
    """A cluster of :func:`gpu_server` s on a leaf-spine or rail-optimized fabric.

    ``fabric="leaf_spine"``: every NIC of server ``s`` sits on leaf
    ``{prefix}leaf{s // servers_per_leaf}``. ``fabric="rail"``: NIC ``i`` of
    every server sits on rail switch ``{prefix}rail{i}`` (``{prefix}rail{i}.{g}``
    when servers are split into several groups of ``servers_per_leaf``), as in
    NVIDIA's rail-optimized DGX SuperPOD design. In both, every leaf/rail
    switch links to every ``{prefix}spine{j}`` with one link of rate
    ``fabric_rate_bps`` (default: the switch's NIC-facing bandwidth divided by
    ``spines * oversubscription``, i.e. non-blocking at 1.0).

    Parameters
    ----------
    servers, gpus_per_server, gpus_per_nic : int
        Cluster shape; servers are ``s{server_offset}..``.
    fabric : str
        ``leaf_spine`` or ``rail``.
    nic_kinds : str or list of str
        ``infiniband``/``roce``/``ethernet``, one value or one per server.
    nic_rates_bps : float, str or list
        NIC rate(s), bit/s (default 400 Gbps, ConnectX-7), one or one per server.
    servers_per_leaf : int, optional
        Servers per leaf (leaf_spine; default ``max(1, 32 // nics_per_server)``)
        or per rail group (rail; default all servers).
    spines : int, optional
        Spine count (default 0 when there is one leaf/rail switch, else
        ``max(2, switches // 2)``).
    oversubscription : float
        Downlink : uplink bandwidth ratio of a leaf/rail switch (>= 1).
    fabric_rate_bps : float or str, optional
        Override the rate of every leaf-spine link, bit/s.
    nvlink_rate_bps, pcie_rate_bps, nvswitch, root_complex
        Passed to :func:`gpu_server`.
    delay_ns : int or str
        Propagation delay of NIC and fabric links, ns (default 1 us).
    prefix : str
        Prefix of switch names (to join several clusters in one graph).
    cluster : str, optional
        Value of a ``cluster`` attribute set on every node.

    Examples
    --------
    >>> g = gpu_cluster(servers=4, gpus_per_server=8, fabric="rail", spines=2)
    >>> sorted(n for n, k in g.nodes(data="kind") if k == "switch")[:3]
    ['rail0', 'rail1', 'rail2']
    >>> g.number_of_edges("s3.nic5", "rail5"), len(g["rail5"])
    (1, 6)
    """
    if fabric not in ("leaf_spine", "rail"):
        raise ValueError("fabric must be leaf_spine or rail")
    if oversubscription < 1:
        raise ValueError("oversubscription must be >= 1")
    if servers < 1 or gpus_per_server < 1 or gpus_per_nic < 1:
        raise ValueError("servers, gpus_per_server and gpus_per_nic must be >= 1")
    if (servers_per_leaf is not None and servers_per_leaf < 1) or (spines is not None and spines < 0):
        raise ValueError("servers_per_leaf must be >= 1 and spines >= 0")
    kinds = _per_server(nic_kinds, servers, "nic_kinds")
    for kind in kinds:
        if kind not in _NIC_EDGE_KIND:
            raise ValueError(f"nic_kinds: unknown NIC kind {kind!r}, expected {', '.join(_NIC_EDGE_KIND)}")
    rates = [float(parse_rate(r)) for r in _per_server(nic_rates_bps, servers, "nic_rates_bps")]
    nics = math.ceil(gpus_per_server / gpus_per_nic)
    all_ib = all(k == "infiniband" for k in kinds)
    fabric_kind = "infiniband" if all_ib else "ethernet"
    g = nx.Graph(name=f"gpu_cluster_{fabric}_{servers}x{gpus_per_server}")
    down_bps: dict[str, float] = {}
    if servers_per_leaf is None:
        servers_per_leaf = max(1, 32 // nics) if fabric == "leaf_spine" else servers
    groups = math.ceil(servers / servers_per_leaf)
    for i in range(servers):
        sname = f"s{server_offset + i}"
        g.update(gpu_server(sname, gpus_per_server, gpus_per_nic, nvlink_rate_bps, pcie_rate_bps, rates[i],
                            kinds[i], nvswitch, root_complex=root_complex))
        grp = i // servers_per_leaf
        for j in range(nics):
            if fabric == "leaf_spine":
                sw = f"{prefix}leaf{grp}"
            else:
                sw = f"{prefix}rail{j}" if groups == 1 else f"{prefix}rail{j}.{grp}"
            if sw not in g:
                g.add_node(sw, kind="switch", tier="leaf" if fabric == "leaf_spine" else "rail")
            _link(g, f"{sname}.nic{j}", sw, rates[i], delay_ns, _NIC_EDGE_KIND[kinds[i]])
            down_bps[sw] = down_bps.get(sw, 0.0) + rates[i]
    if spines is None:
        spines = 0 if len(down_bps) == 1 else max(2, len(down_bps) // 2)
    if spines == 0 and (oversubscription != 1 or fabric_rate_bps is not None):
        what = "oversubscription" if oversubscription != 1 else "fabric_rate_bps"
        raise ValueError(f"{what} has no effect without spines ({len(down_bps)} leaf/rail switch(es), 0 spines); "
                         "set spines >= 1 or a smaller servers_per_leaf")
    for s in range(spines):
        g.add_node(f"{prefix}spine{s}", kind="switch", tier="spine")
    for sw in sorted(down_bps):
        up = fabric_rate_bps if fabric_rate_bps is not None else down_bps[sw] / (spines * oversubscription or 1)
        for s in range(spines):
            _link(g, sw, f"{prefix}spine{s}", up, delay_ns, fabric_kind)
    if cluster is not None:
        nx.set_node_attributes(g, cluster, "cluster")
    g.graph["name"] = f"gpu_cluster_{fabric}_{servers}x{gpus_per_server}"  # update() copied a server's name
    return g


def two_clusters(servers_a: int = 4, servers_b: int = 4, gpus_per_server: int = 8, gpus_per_nic: int = 1,
                 nic_kind_a: str = "infiniband", nic_kind_b: str = "ethernet", nic_rate_a_bps=_D["nic_rate_bps"],
                 nic_rate_b_bps=_D["host_rate_bps"], fabric: str = "leaf_spine", servers_per_leaf: int = 2,
                 spines: int = 2, inter_rate_bps=_D["host_rate_bps"], inter_delay_ns=10_000,
                 delay_ns=_D["link_delay_ns"]) -> nx.Graph:
    """Two :func:`gpu_cluster` s joined by one slower inter-cluster link (Holmes' setting).

    Cluster ``A`` (servers ``s0..``, switches ``a.*``, RDMA NICs by default)
    and cluster ``B`` (the next servers, switches ``b.*``, Ethernet by
    default); each has a gateway switch ``a.gw`` / ``b.gw`` linked to all its
    spines at its NIC rate, and ``a.gw -- b.gw`` is the inter-cluster link.
    Every node has ``cluster`` = ``"A"`` or ``"B"``.

    Parameters
    ----------
    servers_a, servers_b, gpus_per_server, gpus_per_nic : int
        Shapes of the two clusters.
    nic_kind_a, nic_kind_b : str
        NIC kinds (default infiniband and ethernet).
    nic_rate_a_bps, nic_rate_b_bps : float or str
        NIC rates, bit/s (default 400 Gbps and 100 Gbps).
    fabric, servers_per_leaf, spines
        Passed to :func:`gpu_cluster` for both clusters.
    inter_rate_bps : float or str
        Inter-cluster link rate, bit/s (default 100 Gbps).
    inter_delay_ns : int or str
        Inter-cluster link propagation delay, ns (default 10 us, ~2 km of fibre).
    delay_ns : int or str
        Propagation delay of the other network links, ns.

    Examples
    --------
    >>> g = two_clusters(2, 2, gpus_per_server=4)
    >>> g.edges["a.gw", "b.gw"]["rate_bps"], g.nodes["s3.gpu0"]["cluster"]
    (100000000000.0, 'B')
    """
    g = nx.Graph(name="two_clusters")
    spec = ((servers_a, nic_kind_a, nic_rate_a_bps, "a.", 0, "A"),
            (servers_b, nic_kind_b, nic_rate_b_bps, "b.", servers_a, "B"))
    for n, kind, rate, prefix, offset, name in spec:
        c = gpu_cluster(n, gpus_per_server, gpus_per_nic, fabric, kind, rate, servers_per_leaf=servers_per_leaf,
                        spines=spines, delay_ns=delay_ns, prefix=prefix, server_offset=offset, cluster=name)
        g.update(c)
        gw = f"{prefix}gw"
        g.add_node(gw, kind="switch", tier="gateway", cluster=name)
        tops = [x for x, t in c.nodes(data="tier") if t == "spine"] or \
               [x for x, k in c.nodes(data="kind") if k == "switch"]
        for t in sorted(tops):
            _link(g, gw, t, rate, delay_ns, "ethernet")
    _link(g, "a.gw", "b.gw", inter_rate_bps, inter_delay_ns, "ethernet")
    g.graph["name"] = "two_clusters"
    return g


BUILDERS = {f.__name__: f for f in (dumbbell, leaf_spine, fat_tree, gpu_server, gpu_cluster, two_clusters)}


def builder_args(name: str) -> list[str]:
    """Argument names accepted by builder ``name``."""
    return list(inspect.signature(BUILDERS[name]).parameters)
