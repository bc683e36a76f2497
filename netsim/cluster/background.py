"""A cluster file's ``background:`` section turned into flows (:func:`netsim.traffic.generate_background`).

Hosts: ``free`` = every endpoint (GPU or host, :func:`netsim.topology.query.endpoints`)
no job holds; ``all`` = every endpoint; or the listed names. A host's line rate
is ``rate`` when given, else its NIC's fastest link towards the network (a GPU:
the NIC nearest on PCIe, :func:`netsim.topology.nic_of`; a host: its own links).
Load 0 gives no flows (the zero point of a load sweep).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .spec import BackgroundCfg

#: node kinds a NIC's link towards the network does not lead to
_INSIDE = ("gpu", "pcie_switch", "cpu")


def line_rate_bps(graph, node, source: str = "") -> float:
    """The line rate of ``node`` as a background sender (see the module docstring)."""
    from ..topology import nic_of
    nic = nic_of(graph, node) if graph.nodes[node].get("kind") == "gpu" else node
    if nic is None:
        nic = node
    rates = [float(d.get("rate_bps", 0)) for _, v, d in graph.edges(nic, data=True)
             if graph.nodes[v].get("kind") not in _INSIDE or nic == node]
    if not rates:
        raise InputError("cannot tell the line rate of this background host", source=source,
                         where="background.hosts", value=node, accepted="give background.rate, e.g. 100Gbps")
    return max(rates)


def background_hosts(cfg: BackgroundCfg, graph, taken: set, source: str = "") -> tuple:
    from ..topology.query import endpoints
    if cfg.hosts == "all":
        return tuple(endpoints(graph))
    if cfg.hosts == "free":
        return tuple(h for h in endpoints(graph) if h not in taken)
    for h in cfg.hosts:
        if h not in graph or graph.nodes[h].get("kind") not in ("gpu", "host"):
            raise InputError("not a GPU or host of the topology", source=source, where="background.hosts",
                             value=h, accepted="endpoint names of the topology")
    return tuple(cfg.hosts)


def make_background(cfg: BackgroundCfg | None, graph, taken: set, source: str = ""):
    """The :class:`netsim.traffic.BackgroundFlows` of ``cfg`` (None without background or at load 0)."""
    if cfg is None or cfg.load == 0:
        return None
    from ..traffic import BackgroundSpec, generate_background, load_cdf
    hosts = background_hosts(cfg, graph, taken, source)
    if len(hosts) < 2:
        raise InputError("background traffic needs at least two hosts", source=source, where="background.hosts",
                         value=cfg.hosts, accepted="a topology with free endpoints, hosts: all, or a list")
    rates = tuple(cfg.rate_bps if cfg.rate_bps is not None else line_rate_bps(graph, h, source) for h in hosts)
    spec = BackgroundSpec(load_cdf(cfg.cdf), load=cfg.load, hosts=hosts, host_rate_bps=rates,
                          duration_ns=int(cfg.duration_ns), start_ns=int(cfg.start_ns), seed=cfg.seed)
    return generate_background(spec)


def fct_summary(fct_ns: list) -> dict:
    """Count, median, p99 and mean of the background flows' completion times (ns)."""
    if not fct_ns:
        return {"flows": 0}
    a = np.asarray(fct_ns, dtype=float)
    return {"flows": int(a.size), "fct_median_ns": float(np.median(a)), "fct_p99_ns": float(np.percentile(a, 99)),
            "fct_mean_ns": float(a.mean())}
