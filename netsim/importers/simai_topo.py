"""SimAI topology files (``gen_Topo_Template.py`` output) → a netsim topology graph.

Layout, as SimAI's generator writes it: line 1 ``nodes gpus_per_server
nvswitches switches links gpu_type`` (e.g. ``18 8 1 9 24 H100``); line 2 the
ids of every NVSwitch then every other switch (a trailing space is usual);
then one line per link ``src dst rate delay error_rate`` (``400Gbps``,
``0.0005ms``, ``0``).  Ids ``0 .. nodes - nvswitches - switches - 1`` are the
GPUs, server-major (``gpus_per_server`` each).

Mapping: GPU i → node ``s{i // gps}.gpu{i % gps}`` (kind gpu, ``server``,
``index``), NVSwitch → ``nvs{id}`` (kind nvswitch), switch → ``sw{id}`` (kind
switch).  GPU–NVSwitch links are NVLink.  SimAI folds the NIC into the GPU (a
GPU's line to a ToR is the NIC's port); netsim's graph contract has GPUs reach
the network through a NIC, so each GPU gets one NIC ``s{k}.nic{j}`` (kind nic,
``nic_kind`` roce: SimAI's ns-3 network is RDMA, so no TCP host-stack cost
applies) joined to it by a PCIe link at the GPU's fastest
network port rate with 0 ns delay (:data:`NIC_PCIE_DELAY_NS`), and the GPU's
switch links are moved onto the NIC (a dual-ToR GPU gets one NIC with two
ports).  The extra hop adds one packet's store-and-forward time per crossing
(≈ 30 ns at 400 Gb/s) — the price of the contract.  Other links keep kind
ethernet.  ``gpu_type`` becomes graph attribute ``gpu_type``.
"""
from __future__ import annotations

import os

import networkx as nx

from ..errors import TopologyError
from ..units import UnitError, parse_rate, parse_time_exact_ns

#: delay of the PCIe hop inserted between a GPU and its NIC (SimAI has none: the NIC is folded into the GPU)
NIC_PCIE_DELAY_NS = 0


def looks_simai_topology(path: str) -> bool:
    """Line 1 is five integers and a GPU type."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.readline().split()
    except OSError:
        return False
    return len(head) == 6 and all(t.isdigit() for t in head[:5]) and not head[5].isdigit()


def _link(path, n, cols, n_nodes):
    if len(cols) < 4:
        raise TopologyError("bad link line", source=path, where=f"line {n}", value=" ".join(cols),
                            accepted="'src dst rate delay [error_rate]', e.g. 0 8 2880Gbps 0.000025ms 0")
    for field, v in (("src", cols[0]), ("dst", cols[1])):
        if not v.isdigit() or int(v) >= n_nodes:
            raise TopologyError("unknown node", source=path, where=f"line {n}, field {field}", value=v,
                                accepted=f"a node id in 0..{n_nodes - 1}")
    try:
        rate = parse_rate(cols[2])
    except UnitError:
        raise TopologyError("bad rate", source=path, where=f"line {n}, field rate", value=cols[2],
                            accepted="a rate such as 400Gbps") from None
    try:
        delay = parse_time_exact_ns(cols[3])
    except UnitError:
        raise TopologyError("bad delay", source=path, where=f"line {n}, field delay", value=cols[3],
                            accepted="a time such as 0.0005ms") from None
    return int(cols[0]), int(cols[1]), rate, delay


def read_simai_topology(path: str) -> nx.Graph:
    """Read a SimAI topology file (see the module docstring)."""
    from ..topology import validate
    with open(path, encoding="utf-8") as f:
        lines = [(i + 1, ln.split()) for i, ln in enumerate(f) if ln.strip()]
    (_, head) = lines[0]
    n_nodes, gps, n_nvs, n_sw, n_links = (int(t) for t in head[:5])
    ids = lines[1][1] if len(lines) > 1 else []
    if len(ids) != n_nvs + n_sw or not all(t.isdigit() and int(t) < n_nodes for t in ids):
        raise TopologyError(f"expected {n_nvs} NVSwitch + {n_sw} switch ids below {n_nodes}", source=path,
                            where="line 2", value=" ".join(ids), accepted="the switch ids, NVSwitches first")
    n_gpu = n_nodes - n_nvs - n_sw
    if n_gpu <= 0 or gps <= 0 or n_gpu % gps:
        raise TopologyError(f"{n_gpu} GPUs do not fill servers of {gps}", source=path, where="line 1",
                            value=" ".join(head), accepted="nodes - nvswitches - switches a multiple of gpus_per_server")
    kind = {int(t): "nvswitch" for t in ids[:n_nvs]} | {int(t): "switch" for t in ids[n_nvs:]}
    links = lines[2:]
    if len(links) != n_links:
        raise TopologyError(f"header says {n_links} links, file has {len(links)}", source=path, where="line 1",
                            value=" ".join(head), accepted="as many link lines as the header's links field")
    name = {}
    g = nx.Graph(name=os.path.basename(path), gpu_type=head[5])
    for i in range(n_nodes):
        if i in kind:
            name[i] = ("nvs" if kind[i] == "nvswitch" else "sw") + str(i)
            g.add_node(name[i], kind=kind[i])
        elif i < n_gpu:
            name[i] = f"s{i // gps}.gpu{i % gps}"
            g.add_node(name[i], kind="gpu", server=f"s{i // gps}", index=i % gps)
        else:
            raise TopologyError("node id is neither a GPU nor listed as a switch", source=path, where="line 2",
                                value=i, accepted=f"GPUs 0..{n_gpu - 1}, the rest on line 2")
    uplinks: dict[int, list] = {}
    for n, cols in links:
        u, v, rate, delay = _link(path, n, cols, n_nodes)
        if u in kind and v < n_gpu:
            u, v = v, u
        if u < n_gpu and kind.get(v) == "switch":
            uplinks.setdefault(u, []).append((v, rate, delay))
            continue
        ek = "nvlink" if "nvswitch" in (kind.get(u), kind.get(v)) else "ethernet"
        if g.has_edge(name[u], name[v]):
            raise TopologyError("duplicate link", source=path, where=f"line {n}", value=f"{u} {v}")
        g.add_edge(name[u], name[v], rate_bps=rate, delay_ns=delay, kind=ek)
    for gpu, ports in sorted(uplinks.items()):
        nic = f"s{gpu // gps}.nic{gpu % gps}"
        g.add_node(nic, kind="nic", nic_kind="roce", server=f"s{gpu // gps}", index=gpu % gps)  # RDMA, as in SimAI
        g.add_edge(name[gpu], nic, rate_bps=max(r for _, r, _ in ports), delay_ns=NIC_PCIE_DELAY_NS, kind="pcie")
        for sw, rate, delay in ports:
            g.add_edge(nic, name[sw], rate_bps=rate, delay_ns=delay, kind="ethernet")
    return validate(g, source=path)
