"""Shared helpers of the packet-backend tests (imported by file name from tests/*/)."""
from __future__ import annotations

import networkx as nx
import simpy

from netsim.backends.base import TraceSinks
from netsim.backends.packet.backend import PacketBackend
from netsim.records import ListSink


def make_backend(graph, *, params=None, cc="none", cc_params=None, seed=0, pfc_sink=False, queue_sink=False):
    env = simpy.Environment()
    sinks = TraceSinks(fct=ListSink(), pfc=ListSink() if pfc_sink else None,
                       queues=ListSink() if queue_sink else None)
    be = PacketBackend(graph, env=env, params=params or {}, seed=seed, cc=cc, cc_params=cc_params or {},
                       sinks=sinks, keep_flows=True)
    return env, be


def run(graph, flows, **kw):
    """Start ``flows`` = [(src, dst, size[, start_ns[, priority[, cc]]]), ...]; run to the end.

    Returns ``(backend, records by flow id)``.
    """
    env, be = make_backend(graph, **kw)

    def starter(env):
        for f in sorted(flows, key=lambda f: f[3] if len(f) > 3 else 0):
            start = f[3] if len(f) > 3 else 0
            if start * 1000 > env.now:
                yield env.timeout(start * 1000 - env.now)
            be.send(f[0], f[1], f[2], priority=f[4] if len(f) > 4 else None, cc=f[5] if len(f) > 5 else None)

    env.process(starter(env))
    env.run()
    recs = {r.flow_id: r for r in be.sink.rows}
    return be, recs


def star(n_hosts: int, rate_bps=100e9, delay_ns=1000, **switch_attrs) -> nx.Graph:
    """``n_hosts`` hosts h0.. on one switch ``sw``."""
    g = nx.Graph()
    g.add_node("sw", kind="switch", **switch_attrs)
    for i in range(n_hosts):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "sw", rate_bps=float(rate_bps), delay_ns=delay_ns, kind="ethernet")
    return g


def gpu_path_graph() -> nx.Graph:
    """Two servers whose GPU-to-GPU route crosses NVLink, PCIe and Ethernet hops.

    s0.gpu0 -nvlink- s0.nvs0 -pcie- s0.pcie0 -pcie- s0.nic0 -eth- leaf0 -eth- spine0 -eth- leaf1
    -eth- s1.nic0 -pcie- s1.pcie0 -pcie- s1.nvs0 -nvlink- s1.gpu0   (mixed rates: 3.6T, 512G, 400G, 100G)
    """
    g = nx.Graph()
    for s in ("s0", "s1"):
        g.add_node(f"{s}.gpu0", kind="gpu", server=s)
        g.add_node(f"{s}.nvs0", kind="nvswitch", server=s)
        g.add_node(f"{s}.pcie0", kind="pcie_switch", server=s)
        g.add_node(f"{s}.nic0", kind="nic", server=s, nic_kind="roce")
        g.add_edge(f"{s}.gpu0", f"{s}.nvs0", rate_bps=3.6e12, delay_ns=100, kind="nvlink")
        g.add_edge(f"{s}.nvs0", f"{s}.pcie0", rate_bps=512e9, delay_ns=150, kind="pcie")
        g.add_edge(f"{s}.pcie0", f"{s}.nic0", rate_bps=512e9, delay_ns=150, kind="pcie")
    for sw in ("leaf0", "leaf1", "spine0"):
        g.add_node(sw, kind="switch")
    g.add_edge("s0.nic0", "leaf0", rate_bps=400e9, delay_ns=1000, kind="ethernet")
    g.add_edge("leaf0", "spine0", rate_bps=100e9, delay_ns=1000, kind="ethernet")
    g.add_edge("spine0", "leaf1", rate_bps=400e9, delay_ns=1000, kind="ethernet")
    g.add_edge("leaf1", "s1.nic0", rate_bps=400e9, delay_ns=1000, kind="ethernet")
    return g
