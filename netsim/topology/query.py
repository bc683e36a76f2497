"""Queries on a topology graph: canonical GPU order, a GPU's NIC, a node's server.

Pure functions of the graph (no caching), cheap enough to call per rank at set-up.
"""
from __future__ import annotations

import re
from collections import deque
from typing import Hashable

import networkx as nx

_DIGITS = re.compile(r"(\d+)")


def nic_kind_of(graph: nx.Graph, nic) -> str:
    """A NIC's transport family: its ``nic_kind``, else ``infiniband`` on an InfiniBand link, else ``roce``.

    A hand-written NIC without ``nic_kind`` is taken as an RDMA NIC (RoCE on
    Ethernet, the transport NCCL uses on GPU clusters), never as kernel TCP
    with its host-stack cost; ``netsim topo show`` says so.

    >>> g = nx.Graph(); g.add_node("n", kind="nic"); g.add_node("s", kind="switch")
    >>> g.add_edge("n", "s", kind="infiniband"); nic_kind_of(g, "n")
    'infiniband'
    """
    kind = graph.nodes[nic].get("nic_kind")
    if kind is not None:
        return str(kind)
    if any(d.get("kind") == "infiniband" for _, _, d in graph.edges(nic, data=True)):
        return "infiniband"
    return "roce"


def natural_key(name) -> tuple:
    """Sort key that orders ``s2`` before ``s10``.

    >>> sorted(["s10.gpu1", "s2.gpu0", "s2.gpu10", "s2.gpu2"], key=natural_key)
    ['s2.gpu0', 's2.gpu2', 's2.gpu10', 's10.gpu1']
    """
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _DIGITS.split(str(name)) if p != "")


def gpus(graph: nx.Graph) -> list:
    """GPU nodes in canonical rank order: server-major (natural order), then local ``index``.

    A GPU without a ``server`` attribute is ordered by its scale-up domain
    (:mod:`.domains`: the GPUs it reaches over NVLink/PCIe without a NIC),
    so that consecutive ranks share a domain whatever the node names.

    >>> from netsim.topology.builders import gpu_cluster
    >>> gpus(gpu_cluster(servers=2, gpus_per_server=2, spines=0))
    ['s0.gpu0', 's0.gpu1', 's1.gpu0', 's1.gpu1']
    """
    out = [n for n, k in graph.nodes(data="kind") if k == "gpu"]
    if all("server" in graph.nodes[n] for n in out):
        label = {n: graph.nodes[n]["server"] for n in out}
    else:
        from .domains import domain_labels
        label = domain_labels(graph)

    def key(n):
        return (natural_key(label[n]), graph.nodes[n].get("index", 0), natural_key(n))
    return sorted(out, key=key)


def hosts(graph: nx.Graph) -> list:
    """Host nodes in natural name order."""
    return sorted((n for n, k in graph.nodes(data="kind") if k == "host"), key=natural_key)


def endpoints(graph: nx.Graph) -> list:
    """GPUs (rank order) then hosts: every node that can send or receive a flow."""
    return gpus(graph) + hosts(graph)


def server_of(graph: nx.Graph, node: Hashable):
    """The ``server`` attribute of ``node`` (e.g. ``"s3"``), or None."""
    return graph.nodes[node].get("server")


def nic_of(graph: nx.Graph, gpu: Hashable):
    """The NIC nearest to ``gpu`` over PCIe links (fewest hops, then natural name order), or None.

    >>> from netsim.topology.builders import gpu_server
    >>> nic_of(gpu_server("s0", gpus=8, gpus_per_nic=2), "s0.gpu5")
    's0.nic2'
    """
    seen = {gpu}
    frontier = deque([gpu])
    while frontier:
        found, nxt = [], deque()
        for u in frontier:
            for v in graph[u]:
                if v in seen or graph.edges[u, v].get("kind") != "pcie":
                    continue
                seen.add(v)
                kind = graph.nodes[v].get("kind")
                if kind == "nic":
                    found.append(v)
                elif kind == "pcie_switch":
                    nxt.append(v)
        if found:
            return min(found, key=natural_key)
        frontier = nxt
    return None
