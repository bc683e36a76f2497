"""A packet flow's set-up from the run's parameters: its congestion control, timers and host cost.

:func:`transport_flow` builds the transport flow :meth:`.backend.PacketBackend.send`
starts: the algorithm's resolved parameters (:func:`cc_params`), its RoCE or
TCP transport with the path's MSS, line rate, base RTT and BDP, the RTO
before the first RTT sample (:func:`initial_rto_ns`), the CNP interval and the
per-message host-stack delay and rate cap (:func:`host_cost`, the rule of
:class:`netsim.network.path.PathModel`). :func:`ecn_for_rate` gives the
network the switch ECN settings the run's algorithm implies per port rate.

Left out: the route and the record (the backend's), the packets themselves
(:mod:`netsim.transport`).
"""
from __future__ import annotations

import math

from ...errors import InputError
from ...units import PS_PER_NS


def cc_params(be, name: str) -> dict:
    """The resolved parameters of algorithm ``name`` on packet backend ``be`` (``--cc-param`` over its
    defaults; ``none`` takes the network's ``window_bytes``), resolved once."""
    r = be._cc_resolved.get(name)
    if r is None:
        cls = be.registry[name]
        over = dict(be.cc_params_in.get(name, {}))
        if name == "none" and "window_bytes" in cls.PARAMS and "window_bytes" not in over \
                and be.params["window_bytes"]:
            over["window_bytes"] = be.params["window_bytes"]
        r = be._cc_resolved[name] = cls.PARAMS.resolve(over, source=f"--cc-param {name}")
    return r


def cnp_interval(be, algo, ccp: dict) -> int:
    """NP interval: the algorithm's attribute, else its parameter, else the SIM default."""
    v = algo.cnp_interval_ns
    if v is None:
        v = ccp.get("cnp_interval_ns")
    return int(be.params["cnp_interval_ns"] if v is None else v)


def ecn_for_rate(be, rate_bps: float) -> dict:
    """ECN settings the run's algorithm implies for a switch port of ``rate_bps``.

    :func:`netsim.transport.cc.config.ecn_overrides` (DCQCN presets scaled
    with the port rate, marking at dequeue; DCTCP's K, at enqueue; nothing
    for cubic/none). The network applies them above its defaults and below
    ``--set`` and node attributes.
    """
    from ...transport.cc.config import ecn_overrides
    if be.registry[be.cc_default].ecn_settings is None:
        return {}
    return dict(ecn_overrides(be.cc_default, cc_params(be, be.cc_default), rate_bps,
                              mtu_bytes=be.params["mtu_bytes"]))


def initial_rto_ns(be, min_rto_ns: int, base_rtt_ns: float) -> int:
    """RTO before the first RTT sample: ``initial_rto_ns`` if set, else max(min RTO, k x base RTT).

    RFC 6298 (2.1) starts at 1 s, which would stall a datacenter flow that
    loses its first window; starting at RTOmin (1 ms) instead fires
    spuriously on any path whose RTT exceeds it. ``k`` =
    ``initial_rto_rtts`` (3: what RFC 6298's SRTT + 4 RTTVAR gives after
    the first sample, RTTVAR = SRTT/2).
    """
    p = be.params
    if p["initial_rto_ns"]:
        return int(p["initial_rto_ns"])
    return int(max(min_rto_ns, math.ceil(p["initial_rto_rtts"] * base_rtt_ns)))


def host_cost(be, pm, cc_name: str, transport: str) -> tuple:
    """(per-message delay ps, cap as ps per payload byte or 0.0) of a flow on path ``pm``.

    :meth:`netsim.network.path.PathModel.host_cost` (the rule every backend
    applies); the cap paces the sender when it is below the CC's line rate.
    """
    key = (pm.nodes, cc_name)
    v = be._host_cost_cache.get(key)
    if v is None:
        hc = be.paths.host_cost(pm, cc_name, transport, be.host_stack)
        if hc is None:
            v = (0, 0.0)
        else:
            v = (hc.overhead_ps, 8e12 / hc.cap_bps if hc.cap_bps < pm.line_rate_bps else 0.0)
        be._host_cost_cache[key] = v
    return v


def transport_flow(be, fid: int, src: str, dst: str, size_bytes: int, cc_name: str, prio: int, pm, route,
                   rroute, data_route, ack_route, now: int):
    """The transport flow (RoCE or TCP, as algorithm ``cc_name``'s ``transport``) of flow ``fid`` on packet
    backend ``be``: its congestion control built for path ``pm`` (MSS, line rate, base RTT, BDP), its RTOs,
    its ports (``route``/``rroute``; ``data_route``/``ack_route`` ``None`` when sprayed) given priority
    ``prio``, and its host-stack delay and cap; started at ``now`` (ps) by the caller."""
    p = be.params
    net = be.net
    cls = be.registry[cc_name]
    hdr, mss, ack_b = pm.header_bytes, pm.mss_bytes, pm.ack_bytes
    base_rtt_ns = pm.base_rtt_ns
    bdp = pm.bdp_window_bytes
    line = pm.line_rate_bps
    ccp = cc_params(be, cc_name)
    algo = cls(ccp, mss_bytes=mss, line_rate_bps=line, base_rtt_ns=int(round(base_rtt_ns)),
               bdp_bytes=bdp, now_ns=now // PS_PER_NS)
    for port in route:
        port.add_prio(prio)
    min_rto = algo.min_rto_ns
    if min_rto is None:
        min_rto = ccp.get("min_rto_ns") if ccp.get("min_rto_ns") is not None else p["min_rto_ns"]
    kw = dict(route=data_route, rroute=ack_route, port=route[0], rport=rroute[0], mss_bytes=mss,
              header_bytes=hdr, ack_bytes=ack_b, min_rto_ns=min_rto, max_rto_ns=p["max_rto_ns"],
              initial_rto_ns=initial_rto_ns(be, min_rto, base_rtt_ns), start_ps=now)
    if cls.transport == "roce":
        from ...transport.roce import RoceFlow
        flow = RoceFlow(net, fid, src, dst, size_bytes, algo, cc_name, prio,
                        ack_every=p["roce_ack_every_packets"],
                        cnp_interval_ns=cnp_interval(be, algo, ccp), **kw)
    elif cls.transport == "tcp":
        from ...transport.tcp import TcpFlow
        flow = TcpFlow(net, fid, src, dst, size_bytes, algo, cc_name, prio,
                       delack_segments=p["tcp_delayed_ack_segments"],
                       delack_timeout_ns=p["tcp_delayed_ack_timeout_ns"], **kw)
    else:
        raise InputError("unknown transport of congestion control", where=f"cc {cc_name}",
                         value=cls.transport, accepted="tcp or roce")
    if flow.wants_int and not net.int_on:    # the first flow wanting telemetry: switches stamp from now on
        from .intport import enable_int
        enable_int(net)
    flow.max_timeouts = p["max_timeouts"]
    if be.host_stack is not None:
        delay_ps, cap = host_cost(be, pm, cc_name, cls.transport)
        flow.next_tx = now + delay_ps           # per-message host time before the first packet
        flow.cap_ps_per_byte = cap              # per-connection CPU limit (kernel TCP)
    return flow
