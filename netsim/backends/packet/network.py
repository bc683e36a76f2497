"""The packet network: nodes and ports wired from a topology graph.

Builds one :class:`~.node.Forwarder` or :class:`~.node.Endpoint` per graph
node and one :class:`~.port.Port` per direction of every edge, applies the
simulation parameters (run-wide, overridden per node by node attributes, per
priority by ``NAME.P`` keys), turns routes into tuples of ports, carries PFC
PAUSE/RESUME messages and counts drops. Random draws come from one stream per port and per spraying
node (:mod:`.streams`). PFC thresholds and the switch
buffer they must fit are set by :mod:`.thresholds`; every event is scheduled
through the network's :class:`~.scheduler.Scheduler`. Also runs the two samplers
(queues.csv, cc.csv): each is one self-rescheduling event that stops when no
flow is active, so an idle network has no pending event.
"""
from __future__ import annotations

from ...errors import InputError
from ...transport.packet import N_DATA_PRIORITIES, N_PRIORITIES
from ...units import PS_PER_NS
from ...network.params import lossless_set, node_overrides, per_priority
from .node import ENDPOINT_KINDS, Endpoint, Forwarder, RelayEndpoint
from .pfcwatch import PfcWatch
from .port import Port
from .scheduler import Scheduler
from .streams import assign_streams
from .thresholds import order_pfc_after_ecn, reserve_headroom, set_pfc_thresholds, use_dynamic_thresholds


class _Msg:
    """A PFC PAUSE/RESUME reaching the upstream egress port (its own SimPy event)."""

    __slots__ = ("callbacks", "port", "prio", "pause")
    _ok = True

    def __init__(self, cb, port, prio, pause):
        self.callbacks = (cb,)
        self.port, self.prio, self.pause = port, prio, pause


class _Every:
    """A periodic sampler that runs only while flows are active."""

    __slots__ = ("callbacks", "net", "fn", "period_ps", "running")
    _ok = True

    def __init__(self, net, fn, period_ns: int):
        self.callbacks = None
        self.net, self.fn, self.period_ps, self.running = net, fn, int(period_ns) * PS_PER_NS, False

    def ensure(self) -> None:
        if self.running or self.period_ps <= 0:
            return
        self.running = True
        now = self.net.env.now
        p = self.period_ps
        at = (now // p + 1) * p if now % p else now
        self.callbacks = (self._fire,)
        self.net.sched.schedule(at, self)

    def _fire(self, _ev) -> None:
        self.fn()
        if self.net.active:
            self.callbacks = (self._fire,)
            self.net.sched.schedule(self.net.env.now + self.period_ps, self)
        else:
            self.running = False


def _ignore_flow(flow) -> None:
    """Default flow callback of a :class:`Network` with no backend attached."""


class Network:
    """Devices and ports of one simulation (see module docstring)."""

    def __init__(self, graph, env, params: dict, seed: int, router, sinks, *, ecn_for_rate=None,
                 user_keys: frozenset = frozenset(), ecn_capable_cc: bool = False):
        self.graph = graph
        self.env = env
        self.params = params
        # per-flow completion callbacks, set by the owning backend (no-ops for a bare network)
        self.flow_received = self.flow_acked = self.flow_failed = _ignore_flow
        rs = int(params.get("random_seed", -1))
        #: the run seed of every random stream (streams.py: one stream per port and per spraying node)
        self.stream_seed = seed if rs < 0 else rs
        self.router = router
        self.sinks = sinks
        self.lossless = lossless_set(params)
        self.ecn_for_rate = ecn_for_rate
        self.user_keys = user_keys
        self._node_keys: dict = {}
        self.nodes: dict = {}
        self.node_params: dict = {}
        self.ports: dict = {}
        self.active = 0
        self.drops = 0
        self.dropped_bytes = 0
        self.dropped_payload_bytes = 0
        self.headroom_overflows = 0
        self.drops_by_prio = [0] * N_PRIORITIES
        self.pfc_events = 0
        self.touched_ports: list = []
        #: in-band telemetry stamped at forwarding egresses (intport.enable_int, on the first HPCC flow)
        self.int_on = False
        #: the SimPy fast path: heap pushes and the drive loop (scheduler.py)
        self.sched = Scheduler(env)
        #: the bound method every hot event carries last in its callbacks (Scheduler.drive)
        self.drive_cb = self.sched.drive_cb
        self._route_cache: dict = {}
        from ...topology.routing import relay_kinds
        relay = relay_kinds(graph)    # GPUs (hosts) that also forward: node.RelayEndpoint
        self._auto_pfc: dict = {}   # (a, b) -> per priority: (xoff was auto, xon was auto)
        for name in sorted(graph.nodes, key=str):
            attrs = graph.nodes[name]
            kind = attrs.get("kind")
            p = dict(params)
            over = node_overrides(attrs, node=name)
            self._node_keys[name] = frozenset(over)
            p.update(over)
            self.node_params[name] = p
            if kind in relay:
                self.nodes[name] = RelayEndpoint(self, name, kind, p)
            elif kind in ENDPOINT_KINDS:
                self.nodes[name] = Endpoint(self, name, kind, p)
            else:
                self.nodes[name] = Forwarder(self, name, kind, p, lossless_set(p) if kind == "switch" else None)
        for u, v in sorted(graph.edges, key=lambda e: (str(e[0]), str(e[1]))):
            e = graph.edges[u, v]
            for a, b in ((u, v), (v, u)):
                self._add_port(a, b, e)
        order_pfc_after_ecn(self, self._auto_pfc, ecn_capable_cc)
        reserve_headroom(self, self._auto_pfc)
        use_dynamic_thresholds(self)
        assign_streams(self, self.stream_seed)
        self._setup_pfc_watch()
        for node in self.nodes.values():
            if isinstance(node, Forwarder) and node.is_switch and node.buf.static:
                share = node.buf.shared / max(1, len(node.ports))
                for port in node.ports.values():
                    port.limit = share
        self.queue_sampler = _Every(self, self._sample_queues, params["queue_sample_ns"])
        self.cc_sampler = _Every(self, self._sample_cc, params["cc_sample_ns"])
        self.flows: dict = {}  # active flows by id (for the cc sampler)

    def _setup_pfc_watch(self) -> None:
        """Deadlock detection (run-wide) and the PFC watchdog (per switch) of :mod:`.pfcwatch`."""
        for name in sorted(self.nodes, key=str):
            run_wide = sorted(self._node_keys[name] & {"fast_forward", "fast_forward_tolerance",
                                                         "fast_forward_cycle_tolerance", "memo"})
            if run_wide:
                flag = "--memo" if run_wide[0] == "memo" else "--fast-forward"
                raise InputError(f"{flag[2:]} is run-wide", where=f"node {name}, attribute {run_wide[0]}",
                                 accepted=f"{flag} on|off or --set " + run_wide[0] + "=... instead")
            if "pfc_deadlock_detect_ns" in self._node_keys[name]:
                raise InputError("PFC deadlock detection is run-wide", where=f"node {name}, attribute "
                                 "pfc_deadlock_detect_ns", accepted="--set pfc_deadlock_detect_ns=... instead")
        self.pfc_watch = None
        if not self.lossless_anywhere():
            return   # nothing ever pauses
        watch = PfcWatch(self, self.params)
        for (a, b), port in sorted(self.ports.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
            na = self.nodes[a]
            if isinstance(na, Forwarder) and na.is_switch and self.node_params[a]["pfc_watchdog"]:
                watch.enable_watchdog(port, self.node_params[a])
        if watch.deadlock_ps or watch.watchdog:
            self.pfc_watch = watch

    def lossless_anywhere(self) -> bool:
        """Whether any node pauses at all (a lossless switch priority, or an NVLink/PCIe/NIC hop)."""
        return any(isinstance(n, Forwarder) and any(n.lossless) for n in self.nodes.values())

    def _add_port(self, a, b, e) -> None:
        na, nb = self.nodes[a], self.nodes[b]
        rate = e.get("rate_bps")
        err = float(e.get("error_rate", 0.0) or 0.0)
        if not rate or rate <= 0:
            raise InputError("link has no positive rate_bps", where=f"link {a}-{b}", value=rate)
        if not 0.0 <= err < 1.0:
            raise InputError("bad error_rate", where=f"link {a}-{b}", value=err, accepted="0 <= error_rate < 1")
        port = Port(self, na, nb, rate, round(float(e.get("delay_ns", 0.0)) * PS_PER_NS), err)
        pa, pb = self.node_params[a], self.node_params[b]
        if isinstance(na, Forwarder) and na.is_switch:
            if self.ecn_for_rate is not None:
                implied = self.ecn_for_rate(port.rate_bps)
                fixed = self.user_keys | self._node_keys[a]
                keep = {k: v for k, v in implied.items() if k in pa and k not in fixed}
                if keep:
                    pa = dict(pa)
                    pa.update(keep)
            port.ecn_on = bool(pa["ecn"])
            port.mark_deq = port.ecn_on and pa["ecn_mark_at"] == "dequeue"
            port.kmin[:N_DATA_PRIORITIES] = per_priority(pa, "ecn_kmin_bytes")
            port.kmax[:N_DATA_PRIORITIES] = per_priority(pa, "ecn_kmax_bytes")
            port.pmax[:N_DATA_PRIORITIES] = per_priority(pa, "ecn_pmax")
        port.strict = pa["scheduler"] == "strict"
        q = per_priority(pa, "dwrr_quantum_bytes")
        # DRR serves a packet per visit only with quantum >= the largest packet (Shreedhar & Varghese)
        port.quantum[:N_DATA_PRIORITIES] = [max(x, pa["mtu_bytes"]) for x in q]
        # PFC thresholds of b's ingress for this link (0 = auto, from this link's delay and rate)
        switch_ingress = isinstance(nb, Forwarder) and nb.is_switch
        auto = set_pfc_thresholds(port, switch_ingress, pb)
        if switch_ingress:
            self._auto_pfc[(a, b)] = auto
        if isinstance(na, (Endpoint, RelayEndpoint)):
            from collections import deque
            port.ring = deque()
            port.relay_fair = isinstance(na, RelayEndpoint)   # transit and own flows take turns (egress.py)
            port.choose_wake()
        if isinstance(nb, RelayEndpoint):
            nb.never_pause(port)
        if self.params["routing"] == "spray" or isinstance(nb, RelayEndpoint):
            port.use_generic_arrival()
        na.ports[b] = port
        self.ports[(a, b)] = port

    # -- routes -----------------------------------------------------------------------------------
    def route_ports(self, path: tuple) -> tuple:
        """Egress ports along a node path (interned: equal paths share one tuple)."""
        r = self._route_cache.get(path)
        if r is None:
            ports = self.ports
            r = self._route_cache[path] = tuple(ports[(a, b)] for a, b in zip(path[:-1], path[1:]))
        return r

    # -- events from the devices ------------------------------------------------------------------
    def drop(self, pkt, port) -> None:
        self.drops += 1
        self.drops_by_prio[pkt.prio] += 1
        self.dropped_bytes += pkt.size
        self.dropped_payload_bytes += pkt.payload

    def pfc_signal(self, port, prio: int, pause: bool) -> None:
        """The peer of ``port`` asks it to pause/resume ``prio``; effective one link delay later."""
        port.pause_sent[prio] = pause
        self.sched.schedule(self.env.now + port.delay_ps, _Msg(self._pfc_arrive, port, prio, pause))

    def _pfc_arrive(self, msg) -> None:
        port = msg.port
        if port.storm is not None and self.pfc_watch.pfc_frame(port, msg.prio, msg.pause):
            return
        if port.paused[msg.prio] == msg.pause or (port.down and msg.pause):
            return
        self.pfc_events += 1
        sink = self.sinks.pfc
        if sink is not None:
            sink.add(((self.env.now + 500) // PS_PER_NS, port.name, port.peer_name, msg.prio,
                      "pause" if msg.pause else "resume"))
        port.set_paused(msg.prio, msg.pause)

    # -- samplers ---------------------------------------------------------------------------------
    def _sample_queues(self) -> None:
        sink = self.sinks.queues
        if sink is None:
            return
        t = (self.env.now + 500) // PS_PER_NS
        for port in self.touched_ports:
            qb, last = port.qbytes, port.last_sample
            for p in port.dprios:
                q = qb[p]
                if q or last[p]:
                    sink.add((t, port.name, port.peer_name, p, q))
                    last[p] = q

    def _sample_cc(self) -> None:
        sink = self.sinks.cc
        if sink is None:
            return
        t = (self.env.now + 500) // PS_PER_NS
        for f in self.flows.values():
            if f.sender_done:
                continue
            cw, rate, alpha, srtt = f.sample()
            sink.add((t, f.fid, f.cc_name, "" if cw is None else int(cw), "" if rate is None else rate,
                      "" if alpha is None else alpha, "" if srtt is None else srtt))

