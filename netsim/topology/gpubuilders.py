"""GPU-server builders: :func:`gpu_server`, :func:`gpu_cluster` and :func:`two_clusters`.

Split out of :mod:`.builders` (which re-exports them and holds the shared
defaults, :data:`~netsim.topology.builders.TOPOLOGY_DEFAULTS`).

Modelled: one logical NVSwitch per server (DGX H100 has four NVSwitch chips
that together give every GPU its full NVLink bandwidth; one node with one
link per GPU at that bandwidth is equivalent for routing and rates), one PCIe
switch per NIC joining its GPUs to it, leaf/rail uplinks non-blocking unless
``oversubscription`` is asked for. Left out: the CPU root complex with an
NVSwitch, host memory traffic, NVLink between servers (NVL72: write it by
hand; :mod:`.domains` finds the rack as one scale-up domain), multiple links
between the same pair of switches (a leaf-spine pair gets one link of the
summed rate).
"""
from __future__ import annotations

import math

import networkx as nx

from ..units import parse_rate
from .builders import _D, _NIC_EDGE_KIND, _link


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
    kinds, rates = _checked_nics(fabric, oversubscription, servers, gpus_per_server, gpus_per_nic, servers_per_leaf,
                                 spines, nic_kinds, nic_rates_bps)
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
            sw = _edge_switch(fabric, prefix, grp, j, groups)
            if sw not in g:
                g.add_node(sw, kind="switch", tier="leaf" if fabric == "leaf_spine" else "rail")
            _link(g, f"{sname}.nic{j}", sw, rates[i], delay_ns, _NIC_EDGE_KIND[kinds[i]])
            down_bps[sw] = down_bps.get(sw, 0.0) + rates[i]
    _add_spines(g, down_bps, spines, oversubscription=oversubscription, fabric_rate_bps=fabric_rate_bps,
                delay_ns=delay_ns, fabric_kind=fabric_kind, prefix=prefix)
    if cluster is not None:
        nx.set_node_attributes(g, cluster, "cluster")
    g.graph["name"] = f"gpu_cluster_{fabric}_{servers}x{gpus_per_server}"  # update() copied a server's name
    return g


def _edge_switch(fabric: str, prefix: str, group: int, nic: int, groups: int) -> str:
    """Name of the leaf (``leaf_spine``) or rail switch NIC ``nic`` of a server in ``group`` links to."""
    if fabric == "leaf_spine":
        return f"{prefix}leaf{group}"
    return f"{prefix}rail{nic}" if groups == 1 else f"{prefix}rail{nic}.{group}"


def _checked_nics(fabric, oversubscription, servers, gpus_per_server, gpus_per_nic, servers_per_leaf, spines,
                  nic_kinds, nic_rates_bps) -> tuple[list, list]:
    """:func:`gpu_cluster`'s shape checked; (NIC kind, NIC rate in bit/s) of each server."""
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
    return kinds, rates


def _add_spines(g: nx.Graph, down_bps: dict, spines, *, oversubscription, fabric_rate_bps, delay_ns, fabric_kind,
                prefix) -> None:
    """The spine tier: every leaf/rail switch linked to every spine at its downlink rate / (spines · oversubscription)."""
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
