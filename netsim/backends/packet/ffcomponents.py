"""Connected components of the packet network's active flows, for the fast-forward (issue #21).

Two active flows are in one component when their routes share an egress
port, data or ACK direction (``route`` and ``rroute``); a component is the
transitive closure. A component owns its ports: nothing outside it sends a
packet through them, so it can be frozen and its sequence spaces advanced
(:func:`.ffstate.jump` with :func:`owner`) while the rest of the network runs
packet by packet. :class:`Frozen` remembers a jump so that a flow starting on
a frozen component's ports cuts the jump short (:func:`thaw_plan`): the
component resumes at once, with the bytes of the time actually skipped.

Left out: coupling through a switch's shared buffer (a frozen component's
queues keep their bytes in it, as in the steady state), a frozen
component's pauses and drops (a component jumps only if it had none in the
windows tested), flows without a fixed route (spraying: never jumped).
"""
from __future__ import annotations

from dataclasses import dataclass

from .ffstate import JumpPlan


@dataclass(frozen=True)
class Component:
    """Active flows (ids, sorted) sharing ports, and those ports (network order)."""

    fids: tuple
    ports: tuple


@dataclass(frozen=True)
class Frozen:
    """A component's jump: frozen at ``t0_ps`` (bytes advanced then), resumes at ``t1_ps``."""

    t0_ps: int
    t1_ps: int
    comp: Component
    plan: JumpPlan


def _flow_ports(flow) -> tuple:
    return tuple(flow.route or ()) + tuple(flow.rroute or ())


def components(net) -> list:
    """The components of ``net``'s active flows (union-find over their ports), in flow-id order."""
    parent: dict = {}

    def find(x):
        while parent[x] is not x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    port_flow: dict = {}
    for fid in sorted(net.flows):
        parent[fid] = fid
        for p in _flow_ports(net.flows[fid]):
            other = port_flow.setdefault(id(p), fid)
            if other != fid:
                a, b = find(other), find(fid)
                if a != b:
                    parent[max(a, b)] = parent[min(a, b)] = min(a, b)
    groups: dict = {}
    for fid in sorted(net.flows):
        groups.setdefault(find(fid), []).append(fid)
    order = {id(p): i for i, p in enumerate(net.ports.values())}
    out = []
    for fids in groups.values():
        ports = {id(p): p for f in fids for p in _flow_ports(net.flows[f])}
        out.append(Component(tuple(fids), tuple(sorted(ports.values(), key=lambda p: order[id(p)]))))
    return out


def components_of(net, fids: tuple) -> list:
    """The component formed by the flows ``fids`` that are still active (as a one-element list, or empty)."""
    ports = {id(p): p for f in fids if f in net.flows for p in _flow_ports(net.flows[f])}
    return [Component(fids, tuple(ports.values()))] if ports else []


def touches(flow, comp: Component) -> bool:
    """Whether ``flow``'s route crosses a port of ``comp``."""
    ids = {id(p) for p in comp.ports}
    return any(id(p) in ids for p in _flow_ports(flow))


def owner(net, comp: Component):
    """The predicate saying whether a pending network event is ``comp``'s (its ports' and flows')."""
    port_ids = {id(p) for p in comp.ports} | {id(p._pipe_ev) for p in comp.ports}
    flow_ids = {id(net.flows[f]) for f in comp.fids}

    def owned(ev) -> bool:
        if id(ev) in port_ids:
            return True                                    # a port's wake-up or its wire's arrival
        port = getattr(ev, "port", None)
        if port is not None and not isinstance(port, bool):
            return id(port) in port_ids                    # a PFC message or watchdog check on its port
        flow = getattr(ev, "flow", None)                   # a pacing tick
        if flow is None and ev.callbacks:
            flow = getattr(ev.callbacks[0], "__self__", None)   # a retransmit or delayed-ACK tick
        return flow is not None and id(flow) in flow_ids
    return owned


def thaw_plan(fr: Frozen, now_ps: int, mss: dict) -> JumpPlan | None:
    """The negative jump that makes ``fr``'s component resume near ``now_ps`` instead of ``t1_ps``.

    It moves the component's events back by the whole ns left, and takes back the bytes (whole segments)
    and counters of that time. ``None`` if less than a ns is left.
    """
    left = fr.t1_ps - now_ps
    left -= left % 1000                                    # the algorithms' timers are in whole ns
    if left <= 0:
        return None
    plan = fr.plan
    kept = (plan.dt_ps - left) / plan.dt_ps
    back = {f: -(b - int(b * kept // mss[f]) * mss[f]) for f, b in plan.flow_bytes.items()}

    def neg(c):
        return tuple(-int(round(x * (1 - kept))) for x in c)
    return JumpPlan(-left, back, {f: neg(c) for f, c in plan.flow_counters.items()},
                    tuple(neg(c) for c in plan.port_counters), neg(plan.net_counters))
