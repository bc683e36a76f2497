"""Link changes during a packet run (the :mod:`netsim.whatif` protocol): a new rate, a failure.

Functions of a :class:`~.backend.PacketBackend` (``be``), which exposes them
as ``set_link_rate`` and ``fail_link``. Left out: a failed link coming back.
"""
from __future__ import annotations

from ...errors import InputError
from ...units import PS_PER_NS


def set_link_rate(be, a, b, rate_bps: float) -> None:
    """Link a-b runs at ``rate_bps`` (both directions) from now on.

    The ports serialize every packet that *starts* from now on at the new
    rate (a packet on the wire finishes at the old one). The graph edge is
    updated, so flows started later derive their base RTT, window and
    ideal FCT from the new rate; running flows keep their ideal FCT, and
    their congestion control is told the new base RTT and BDP
    (``on_path_change``: adaptive algorithms keep their state, ``none``'s
    BDP window becomes the path's new BDP). ECN thresholds derived from the
    rate at start-up are kept.
    """
    if not be.graph.has_edge(a, b):
        raise InputError("no such link", where="set_link_rate", value=f"{a}:{b}")
    rate = float(rate_bps)
    if not rate > 0:
        raise InputError("link rate must be positive", where=f"link {a}:{b}", value=rate_bps)
    be.graph.edges[a, b]["rate_bps"] = rate
    for key in ((a, b), (b, a)):
        port = be.net.ports[key]
        port.rate_bps = rate
        port.ps_per_byte = 8e12 / rate
    be._host_cost_cache.clear()
    be.paths.invalidate()
    changed = (be.net.ports[(a, b)], be.net.ports[(b, a)])
    for fid in sorted(be.net.flows):
        f = be.net.flows[fid]
        if not (f.sender_done and f.end_ps >= 0) and any(q in changed for q in (f.route or ()) + (f.rroute or ())):
            _tell_path(be, f, f.record.path)


def _tell_path(be, f, path) -> None:
    """Flow ``f``'s congestion control learns the base RTT and BDP of ``path`` (its path from now on)."""
    pm = be.paths.path(path)
    f.cc.on_path_change(be.env.now // PS_PER_NS, base_rtt_ns=int(round(pm.base_rtt_ns)),
                        bdp_bytes=pm.bdp_window_bytes)


def fail_link(be, a, b) -> None:
    """Remove link a-b now; traffic reroutes, what was on the link is lost.

    * the graph loses the edge and the router forgets its routes
      (``Router.invalidate()``); spraying switches forget their next hops;
    * both directions of the link become black holes: packets on the wire,
      queued at either end, or still arriving with a route through it are
      serialized as before and then dropped (counted in ``drops``), so
      buffer and PFC accounting drain normally; a pause in force on them is
      lifted and later PAUSE frames are ignored;
    * every running flow whose data or ACK route used the link gets a new
      ECMP route (same flow id); lost packets are recovered by its
      transport (TCP: dupacks/NewReno or RTO; RoCE: NACK go-back-N or RTO).
      Its congestion control is told the new path's base RTT and BDP
      (``on_path_change``): adaptive algorithms keep their state, ``none``'s
      BDP window becomes the new path's (a flow moved from a 10G to a 100G
      path is not held to the 10G path's window). Flows posted on an
      in-order connection but not yet started are moved alike.

    Raises
    ------
    RoutingError
        A running flow's endpoints are no longer connected.
    """
    if not be.graph.has_edge(a, b):
        raise InputError("no such link", where="fail_link", value=f"{a}:{b}")
    net = be.net
    be.graph.remove_edge(a, b)
    be.router.invalidate()
    net._route_cache.clear()
    for node in net.nodes.values():
        sp = getattr(node, "spray", None)
        if sp:
            sp.clear()
    dead = (net.ports[(a, b)], net.ports[(b, a)])
    for port in dead:
        port.fail()
    be._host_cost_cache.clear()
    be.paths.invalidate()
    spray = be.params["routing"] == "spray"
    for fid in sorted(net.flows):
        f = net.flows[fid]
        if f.sender_done and f.end_ps >= 0:
            continue
        old = (f.port, f.rport) + ((f.route or ()) + (f.rroute or ()) if not spray else ())
        if not any(q in dead for q in old):
            continue
        path = be.router.path(f.src, f.dst, f.record.path_key)   # the flow's ECMP key; RoutingError if disconnected
        route = net.route_ports(path)
        rroute = net.route_ports(tuple(reversed(path)))
        for q in route:
            q.add_prio(f.prio)
        _tell_path(be, f, path)
        if not spray:
            f.route, f.rroute = route, rroute
        f.rport = rroute[0]
        if route[0] is not f.port:
            if f.in_ring:
                f.port.remove_sender(f)
            f.in_ring = False
            f.port = route[0]
        f.wake_sender(be.env.now)
