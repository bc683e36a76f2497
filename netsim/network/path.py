"""The path model: every per-path constant a backend needs, computed by one piece of code.

A flow's path is the node sequence the router gives (``Router.path``); from it
and the resolved network parameters (:mod:`netsim.network.params`, node
attributes overriding them node by node) :class:`PathModel` derives, once per
path:

* the hops ``[(rate_bps, delay_ns), ...]`` and the bottleneck rate (lowest);
* the **path MTU**: the smallest ``mtu_bytes`` of the nodes on the path (each
  node's attribute, else the run's value), and the header bytes of the source
  (its ``header_bytes`` attribute, else the run's value); MSS = MTU − header;
* the **line rate** handed to a congestion control: the first fabric
  (Ethernet/InfiniBand) link's rate, else the first link's;
* the **base RTT**: propagation plus serialization of one MTU data packet and
  one ACK at every hop, both ways; the ACK is ``ack_bytes`` (an Ethernet
  minimum frame), or ``nvlink_ack_bytes`` (one 16-byte NVLink flit) on a path
  made only of NVLink links, which carries no Ethernet frames;
* the **ideal FCT** of a size (:func:`netsim.network.ideal.ideal_fct_exact_ns`);
* the **host-stack cost** (:meth:`PathModel.host_cost`): paid by flows that
  leave their server through a NIC.

Left out: queueing and contention (a backend's business), per-hop MTU
fragmentation (a path carries packets of its path MTU end to end).

>>> import networkx as nx
>>> g = nx.Graph()
>>> g.add_node("a", kind="host"); g.add_node("s", kind="switch", mtu_bytes=1000); g.add_node("b", kind="host")
>>> g.add_edge("a", "s", rate_bps=100e9, delay_ns=1000, kind="ethernet")
>>> g.add_edge("s", "b", rate_bps=50e9, delay_ns=1000, kind="ethernet")
>>> from netsim.network.params import resolve_params
>>> p = PathModel(g, resolve_params()).path(("a", "s", "b"))
>>> p.mtu_bytes, p.mss_bytes, p.bottleneck_bps, p.line_rate_bps
(1000, 938, 50000000000.0, 100000000000.0)
"""
from __future__ import annotations

import math

from typing import Mapping, NamedTuple

from ..errors import InputError
from ..units import PS_PER_NS
from .fabric import FABRIC_KINDS
from .ideal import ideal_fct_exact_ns
from .params import parse_override


class HostCost(NamedTuple):
    """Host-stack cost of one flow: delay before its first byte and per-connection rate limit."""

    overhead_ns: int      #: host CPU time per message before the flow starts, ns
    cap_bps: float        #: highest rate one connection sustains (not limited by the path), bit/s
    line_bps: float       #: the NIC line rate the cap was derived from, bit/s
    transport: str        #: tcp, roce or ib
    #: :attr:`cap_bps` in wire bits (headers included) for a model that moves wire bytes: the cap is
    #: on the payload the CPU handles, so a full segment of MTU bytes carries MSS of them; never above
    #: the NIC's line rate, which is on wire bits
    wire_cap_bps: float = float("inf")

    @property
    def overhead_ps(self) -> int:
        """:attr:`overhead_ns` in ps."""
        return self.overhead_ns * PS_PER_NS


class Path:
    """Constants of one routed path (see the module docstring); built by :class:`PathModel`."""

    __slots__ = ("nodes", "hops", "mtu_bytes", "header_bytes", "mss_bytes", "ack_bytes", "bottleneck_bps",
                 "line_rate_bps", "base_rtt_ns", "nic", "nic_line_bps", "leaves_host", "switched")

    def __init__(self, nodes: tuple, hops: list, mtu_bytes: int, header_bytes: int, ack_bytes: int,
                 line_rate_bps: float, nic, nic_line_bps: float, leaves_host: bool, switched: bool):
        self.nodes, self.hops = nodes, hops
        self.mtu_bytes, self.header_bytes, self.ack_bytes = mtu_bytes, header_bytes, ack_bytes
        self.mss_bytes = mtu_bytes - header_bytes
        self.bottleneck_bps = min(r for r, _ in hops)
        self.line_rate_bps = line_rate_bps
        self.base_rtt_ns = (sum(mtu_bytes * 8e9 / r + d for r, d in hops)
                            + sum(ack_bytes * 8e9 / r + d for r, d in hops))
        self.nic, self.nic_line_bps = nic, nic_line_bps
        self.leaves_host, self.switched = leaves_host, switched

    @property
    def bdp_window_bytes(self) -> int:
        """One bandwidth-delay product of the path at its bottleneck plus one MSS, payload bytes: the
        default fixed window of ``--cc none`` (``window_bytes`` = 0) and the BDP handed to every
        congestion control."""
        return int(math.ceil(self.bottleneck_bps * self.base_rtt_ns / 8e9)) + self.mss_bytes

    def ideal_fct_ns(self, size_bytes: int) -> float:
        """Exact (fractional) lone-flow FCT of ``size_bytes`` on this path, ns."""
        return ideal_fct_exact_ns(self.hops, size_bytes, self.mtu_bytes, self.header_bytes)


class PathModel:
    """Per-path constants of one topology under one set of network parameters (cached per path).

    Parameters
    ----------
    graph : networkx.Graph
        The topology; its edges' ``rate_bps`` / ``delay_ns`` / ``kind`` and
        nodes' ``kind`` / ``nic_kind`` / ``mtu_bytes`` / ``header_bytes`` are read.
    params : mapping
        Resolved network parameters (:func:`netsim.network.params.resolve_params`).
    """

    def __init__(self, graph, params: Mapping):
        self.graph = graph
        self.params = params
        self._paths: dict[tuple, Path] = {}
        self._node: dict[tuple, int] = {}

    def invalidate(self) -> None:
        """Forget every path (a link changed rate or failed)."""
        self._paths.clear()

    def node_value(self, node, key: str) -> int:
        """``key`` (``mtu_bytes`` or ``header_bytes``) at ``node``: its attribute, else the run's value."""
        k = (node, key)
        v = self._node.get(k)
        if v is None:
            attrs = self.graph.nodes[node]
            if key in attrs:
                v = int(parse_override(key, attrs[key], where=f"node {node}, attribute {key}"))
            else:
                v = int(self.params[key])
            self._node[k] = v
        return v

    def path(self, nodes) -> Path:
        """The :class:`Path` of the node sequence ``nodes`` (cached)."""
        nodes = tuple(nodes)
        p = self._paths.get(nodes)
        if p is None:
            if len(self._paths) > 500_000:
                self._paths.clear()
            p = self._paths[nodes] = self._build(nodes)
        return p

    def _build(self, nodes: tuple) -> Path:
        g = self.graph
        edges = [g.edges[u, v] for u, v in zip(nodes[:-1], nodes[1:])]
        hops = [(float(e["rate_bps"]), float(e.get("delay_ns", 0.0))) for e in edges]
        mtu = min(self.node_value(n, "mtu_bytes") for n in nodes)
        hdr = self.node_value(nodes[0], "header_bytes")
        if mtu <= hdr:
            raise InputError("mtu_bytes must exceed header_bytes", where="parameter mtu_bytes", value=mtu,
                             accepted=f"more than header_bytes={hdr}")
        fabric = [r for (r, _), e in zip(hops, edges) if e.get("kind") in FABRIC_KINDS]
        line = fabric[0] if fabric else hops[0][0]
        kinds = [g.nodes[n].get("kind") for n in nodes]
        nic_at = [i for i, k in enumerate(kinds) if k == "nic"]
        nic = nodes[nic_at[0]] if nic_at else None
        nic_line = fabric[0] if fabric else min(r for r, _ in hops)
        if nic_at and 0 < nic_at[0] < len(nodes) - 1:
            i = nic_at[0]
            rates = [float(g.edges[nic, x]["rate_bps"]) for x in (nodes[i - 1], nodes[i + 1])
                     if g.edges[nic, x].get("kind") != "pcie"]
            nic_line = max(rates) if rates else nic_line
        nvlink_only = all(e.get("kind") == "nvlink" for e in edges)
        ack = int(self.params["nvlink_ack_bytes" if nvlink_only else "ack_bytes"])
        return Path(nodes, hops, mtu, hdr, ack, line, nic, nic_line,
                    bool(nic_at or fabric), any(k == "switch" for k in kinds[1:-1]))

    def host_cost(self, path: Path, cc_name: str | None, transport: str, host_stack) -> HostCost | None:
        """Host-stack cost of a flow on ``path``, or ``None`` when it pays none.

        It applies when the path leaves the server through a NIC (a ``nic``
        node, or an Ethernet/InfiniBand link for plain hosts); NVLink/PCIe-only
        paths pay nothing. Transport: the congestion control's (its
        ``host_transport`` when it names one: Swift's kernel-bypass stack is
        ``roce``-like, no kernel cost); with ``--cc none`` the first NIC's
        ``nic_kind`` (ethernet → tcp, roce, infiniband → ib). Line rate: the NIC's non-PCIe link on the path, else the first
        fabric link, else the bottleneck.
        """
        if host_stack is None or not path.leaves_host:
            return None
        if cc_name in (None, "", "none") and path.nic is not None:
            from ..hoststack import NIC_TRANSPORT
            from ..topology.query import nic_kind_of
            transport = NIC_TRANSPORT.get(nic_kind_of(self.graph, path.nic), "tcp")
        elif cc_name not in (None, "", "none"):
            from ..transport.cc import load_cc
            # an algorithm of a kernel-bypass stack (Swift in Snap) pays no kernel-TCP cost on its tcp class
            transport = load_cc(cc_name).host_transport or transport
        cap = float(host_stack.rate_cap_bps(transport, path.nic_line_bps))
        return HostCost(int(host_stack.message_overhead_ns(transport)), cap, path.nic_line_bps, transport,
                        min(float(path.nic_line_bps), cap * path.mtu_bytes / path.mss_bytes))
