"""Set-up of the flow backend: its own parameters, the network parameters, path constants.

The flow backend reads the network layer's parameters
(``netsim.network.params``: ``mtu_bytes``, ``header_bytes``,
``ack_bytes``, ``pfc``, priorities), as every backend does, so that all model
the same network, and adds a few of its own (:data:`FLOW_PARAMS`). The ideal
FCT comes from ``netsim.network.ideal`` so a lone flow finishes exactly when
the packet backend's ideal says.

Left out: per-priority parameters of the packet backend that the fluid model does not
read. (A flow's MTU is its path's smallest, from :class:`netsim.network.path.PathModel`.)
"""
from __future__ import annotations

from typing import NamedTuple

from ...params import Param, ParamTable


class FlowConsts(NamedTuple):
    """Constants of a flow of one size and algorithm on one path (shared by paths alike),
    shaped by its rate controllers (:meth:`.controllers.RateController.shape`)."""

    wire_bytes: float   #: bytes on the wire: payload plus headers
    ideal_ns: float     #: ideal FCT (fractional ns), :func:`netsim.network.ideal.ideal_fct_exact_ns`
    latency_ps: float   #: time from fluid completion to delivery (ps), slow start and host stack included
    cap: float          #: per-flow rate cap (bytes/ps; ``inf``: none)


class PathInfo:
    """Constants of one path: directed link ids, bottleneck (bytes/ps), MTU, RTT (ps);
    ``switched``: it crosses a network switch (leaves its server)."""

    __slots__ = ("path", "links", "bott", "mtu", "hdr", "rtt", "first_rate", "consts", "shared", "switched")

    def __init__(self, path, links, bott, mtu, hdr, rtt, first_rate):
        self.path, self.links, self.bott, self.mtu, self.hdr = path, links, bott, mtu, hdr
        self.rtt, self.first_rate = rtt, first_rate
        self.consts: dict = {}      # this path's own cached values
        self.shared: dict = {}      # values shared by every path alike hop by hop (set by the backend)
        self.switched = False       # set by the backend


#: parameters of the flow backend itself (``--set`` accepts them next to the network's)
from ...network.params import lossless_set, resolve_params  # noqa: E402

FLOW_PARAMS = ParamTable("flow-backend", [
    Param("flow_fairness", "auto", "choice",
          "how a link is shared: maxmin (per flow), port (per ingress port, as PFC/credit backpressure "
          "shares a FIFO), auto (port for lossless flows when pfc is on, else maxmin)",
          "netsim flow backend; port fairness of PFC: docs/flow-backend.md (matches the packet backend)",
          choices=("auto", "maxmin", "port")),
    Param("flow_pfc_hol", True, "bool",
          "with port fairness, also model PFC head-of-line blocking: an ingress paused for a flow held "
          "downstream slows every flow on it (one pass)",
          "PFC congestion spreading / victim flows (IEEE 802.1Qbb; netsim issue #2 HoL test)"),
    Param("flow_port_fair_max_flows", 64, "int",
          "largest connected component solved with port fairness (larger ones fall back to max-min, "
          "counted in stats as port_fair_fallbacks)",
          "netsim choice: pure-Python port fairness costs ~0.1-0.6 ms per flow per recomputation "
          "(measured, docs/flow-backend.md); beyond this the vectorized max-min solver is used", minimum=0),
    Param("flow_dcqcn_tick_ns", 2_000, "time",
          "evaluation period of the fluid DCQCN model (FIFO queues, PFC, marks) while it is not at rest "
          "(a byte queued, an ingress paused, a mark in flight or a flow below line rate); flow start/end "
          "events and CNP arrivals are evaluation instants too",
          "netsim choice: the PFC XOFF-XON gap at 100 Gb/s, 1 us links (~28 KB) drains in ~2 us, and 2 us "
          "resolves the 4 us rate-decrease interval of the hpcc/nvidia presets; 10 us was measured less "
          "accurate against the packet backend (docs/flow-backend.md)", minimum=1),
])


def resolve_network_params(params: dict) -> dict:
    """Resolve network parameters: the packet backend's table plus :data:`FLOW_PARAMS`."""
    params = dict(params or {})
    own = FLOW_PARAMS.resolve({k: params.pop(k) for k in list(params) if k in FLOW_PARAMS},
                              source="--set")
    out = resolve_params(params)
    out["_lossless"] = lossless_set(out)
    out["_user_keys"] = frozenset(params)   # what --set fixed (above the DCQCN preset's ECN, as packet)
    out.update(own)
    return out


#: the ECN keys the fluid DCQCN model marks with (:func:`ecn_fixed`)
ECN_KEYS = ("ecn_kmin_bytes", "ecn_kmax_bytes", "ecn_pmax")


def check_ecn_honoured(params: dict, cc: str) -> None:
    """ECN thresholds given with ``cc`` ``dctcp`` are an error: the flow model's DCTCP is a fixed efficiency
    that does not mark (packet DCTCP's K moves with them); only its fluid DCQCN marks."""
    if cc != "dctcp":
        return
    from ...errors import InputError
    for key in sorted(params.get("_user_keys", ())):
        if key.split(".", 1)[0] in ECN_KEYS:
            raise InputError("--backend flow cannot honour it with --cc dctcp (its DCTCP is a fixed efficiency, "
                             "no marking; only its fluid DCQCN marks)", where=f"--set {key}",
                             accepted="--backend packet for DCTCP's marking threshold, or --cc dcqcn on flow")


def ecn_fixed(params: dict, node_attrs: dict, node: str, prio: int) -> dict:
    """ECN values fixed by ``--set`` or by switch ``node``'s attributes for priority ``prio``.

    Same precedence as the packet backend (``netsim/backends/packet/network.py``): the
    congestion-control preset's ECN settings sit above the network defaults and below
    ``--set`` and node attributes; ``NAME.P`` wins over ``NAME``. Returns only the keys
    of :data:`ECN_KEYS` so fixed (the preset gives the rest).
    """
    from ...network.params import node_overrides, per_priority
    over = node_overrides(node_attrs, node=node)
    fixed = set(params.get("_user_keys", ())) | set(over)
    merged = dict(params)
    merged.update(over)
    out = {}
    for key in ECN_KEYS:
        if key in fixed or f"{key}.{prio}" in fixed:
            out[key] = float(per_priority(merged, key)[prio])
    return out


def ideal_function():
    """``f(graph, path, size_bytes, mtu_bytes, header_bytes) -> ns`` (fractional): the packet model's ideal FCT."""
    from ...network.ideal import hops, ideal_fct_exact_ns

    def ideal_fct_ns(graph, path, size_bytes, mtu_bytes, header_bytes):
        return ideal_fct_exact_ns(hops(graph, path), size_bytes, mtu_bytes, header_bytes)
    return ideal_fct_ns
