"""The packet-level backend: ``create_backend("packet", graph, ...)``.

:class:`PacketBackend` implements the :class:`~netsim.backends.base.Backend`
seam over a :class:`~.network.Network`: :meth:`send` builds a transport flow
(TCP-style or RoCE-style, chosen by the congestion control's ``transport``)
on the flow's ECMP route and returns an event that succeeds, with the
:class:`~netsim.records.FlowRecord`, when the last byte reaches the receiver.

``send`` is checked by :class:`netsim.network.send.SendContract` (the same
rules and messages on every backend; a self-send is a local copy completed at
once). Per flow the backend takes from :class:`netsim.network.path.PathModel`:
the path MTU and header, the line rate handed to the CC, the base RTT, the
ideal FCT and the host-stack cost; it adds the ports of the route and the BDP
at the bottleneck rate (plus one MSS of rounding guard).
"""
from __future__ import annotations

import time
from functools import partial
from typing import NamedTuple

from ...network.flowkey import FlowKeys
from ...network.params import resolve_params
from ...network.path import PathModel
from ...network.send import SendContract, cc_registry  # noqa: F401  (cc_registry: used by tests)
from ...records import EMPTY_TAG, FlowTag, make_record
from ...units import PS_PER_NS
from ..base import (CC_TRACE, FAST_FORWARD, HOST_STACK, HPCC_FCT, IN_NETWORK, IN_ORDER, LINK_CHANGES, MEMO,
                    PFC_TRACE, QUEUE_TRACE, ROUTER, Backend, register_backend)
from . import linkchange
from .flowsetup import ecn_for_rate, transport_flow
from .accounting import FlowAccounting
from .fastforward import FastForward
from .hpccfct import hpcc_ip, hpcc_row  # noqa: F401  (hpcc_ip: re-exported)
from .innetwork import InNetworkSwitches, switch_ends
from .network import Network
from .summary import packet_stats


class FlowMeta(NamedTuple):
    """What a flow's ``fct.csv`` row needs besides the transport's counters (``flow.record``)."""

    tag: FlowTag
    ideal_fct_ns: int
    event: object           #: the simpy.Event handed out by ``send``
    path: tuple
    mtu_bytes: int
    header_bytes: int
    bottleneck_bps: float
    path_key: int           #: the ECMP key it was routed with (netsim.network.flowkey)


class PacketBackend(Backend):
    """Packet-level SimPy network (see module docstring)."""

    name = "packet"
    capabilities = frozenset({HOST_STACK, LINK_CHANGES, HPCC_FCT, ROUTER, QUEUE_TRACE, PFC_TRACE, CC_TRACE,
                              FAST_FORWARD, IN_NETWORK, IN_ORDER, MEMO})

    def __init__(self, graph, *, env, params, seed, cc, cc_params, sinks, hpcc_fct: bool = False,
                 keep_flows: bool = False):
        from ...hoststack import HostStack, split_host_params
        from ...topology.routing import Router
        self.env = env
        self.graph = graph
        self.sinks = sinks
        self.sink = sinks.fct
        params, host_params = split_host_params(params)
        self.params = resolve_params(params)
        p = self.params
        #: host-stack cost model (netsim.hoststack.HostStack) or None; the runtime may set it
        self.host_stack = HostStack(host_params) if (host_params or p["host_stack"]) else None
        self._host_cost_cache: dict = {}
        self.seed = seed
        self.contract = SendContract(graph, p, cc or "none")
        self.flowkeys = FlowKeys()              # ECMP keys, the same on every backend
        self.registry = self.contract.registry
        self.cc_default = self.contract.default_cc
        self.paths = PathModel(graph, p)
        self.cc_params_in = {k: dict(v) for k, v in (cc_params or {}).items()}
        for name in self.cc_params_in:
            self.contract.check_cc(name, "--cc-param")
        self._cc_resolved: dict = {}
        self.router = Router(graph, seed=seed, mode=p["routing"])
        # switch ECN settings: SIM default < what the run's CC implies for the port's rate < --set < node attribute
        self.net = Network(graph, env, p, seed, self.router, sinks, ecn_for_rate=partial(ecn_for_rate, self),
                           user_keys=frozenset(params or {}),
                           ecn_capable_cc=bool(self.registry[self.cc_default].ecn_capable))
        self.net.flow_received = self._received
        self.net.flow_acked = self._acked
        self.net.flow_failed = self._failed
        #: reducing switches able to end and start flows (NVLS, SHARP: send_in_network; .innetwork)
        self.in_network = InNetworkSwitches(self.net)
        self.in_order = None            # per-connection send queues (:mod:`.inorder`), built on first use
        self.hold = self.last_flow = None
        self.failed = 0
        self.next_fid = 0
        self.flows_started = 0
        self.completed = 0
        self.bytes_delivered = 0
        #: transport counters and Jain's index of finished flows, as running sums (nothing kept per flow)
        self.accounting = FlowAccounting(p["jain_start_ns"], p["jain_window_ns"])
        #: steady-state skipping (``fast_forward``, issue #21) or None
        self.ff = FastForward(self) if p["fast_forward"] else None
        self.hpcc_fct = hpcc_fct
        #: flow id -> FCT until the sender's last ACK (ns), with ``hpcc_fct`` (netsim.hpccfct writes fct.txt)
        self.hpcc_ack_fct_ns: dict = {}
        self._wall0 = time.perf_counter()
        self._eid0 = self.net.sched.events_scheduled()
        self.last_ps = 0            # when the last sender retired (its last ACK): the Jain window end
        self.last_end_ps = 0        # when the last flow finished (receiver, as fct.csv end_ns): sim_time_ns
        #: every flow object, by id (only with ``keep_flows=True``: for tests and debugging)
        self.all_flows: dict | None = {} if keep_flows else None
        if p["memo"]:      # exact replay of repeated collectives (issue #21): hooks of its own, none when off
            from .memo import Memo
            self.memo = Memo(self)

    # -- link changes (netsim.whatif protocol) ----------------------------------------------------
    def set_link_rate(self, a, b, rate_bps: float) -> None:
        """Link a-b runs at ``rate_bps`` from now on (:func:`.linkchange.set_link_rate`)."""
        if self.ff is not None:
            self.ff.thaw_all()     # a frozen component resumes before its links change
        linkchange.set_link_rate(self, a, b, rate_bps)

    def fail_link(self, a, b) -> None:
        """Remove link a-b now; traffic reroutes, what was on it is lost (:func:`.linkchange.fail_link`)."""
        if self.ff is not None:
            self.ff.thaw_all()
        linkchange.fail_link(self, a, b)

    # -- the seam ---------------------------------------------------------------------------------
    def send(self, src, dst, size_bytes: int, tag: FlowTag = EMPTY_TAG, *, cc: str | None = None,
             priority: int | None = None):
        spec = self.contract.check(src, dst, size_bytes, tag, cc, priority)
        fid = self.next_fid
        self.next_fid += 1
        if spec.local:
            self.flows_started += 1
            self.completed += 1
            self.bytes_delivered += spec.size_bytes
            self.last_end_ps = max(self.last_end_ps, self.env.now)    # a local copy completes now
            return self.local_copy(fid, spec)
        size_bytes = spec.size_bytes
        cc_name = spec.cc
        p = self.params
        key = self.flowkeys.key(src, dst, tag)
        path = self.router.path(src, dst, key)
        net = self.net
        route = net.route_ports(path)
        rpath = tuple(reversed(path))
        rroute = net.route_ports(rpath)
        if p["routing"] == "spray":
            data_route = ack_route = None
        else:
            data_route, ack_route = route, rroute
        pm = self.paths.path(path)
        self.contract.check_path(cc_name, pm, self.cc_params_in, src, dst)   # e.g. Swift's target < base RTT
        now = self.env.now
        flow = transport_flow(self, fid, src, dst, size_bytes, cc_name, spec.priority, pm, route, rroute,
                              data_route, ack_route, now)
        if p["jain_window_ns"] > 0:
            flow.win_lo_ps = p["jain_start_ns"] * PS_PER_NS
            flow.win_hi_ps = flow.win_lo_ps + p["jain_window_ns"] * PS_PER_NS
        ideal = int(round(pm.ideal_fct_ns(size_bytes)))
        ev = self.env.event()
        flow.record = _new(FlowMeta, (tag, ideal, ev, path, pm.mtu_bytes, pm.header_bytes, pm.bottleneck_bps, key))
        net.flows[fid] = flow
        if self.all_flows is not None:
            self.all_flows[fid] = flow
        net.active += 1
        self.flows_started += 1
        net.queue_sampler.ensure()
        net.cc_sampler.ensure()
        if self.ff is not None:
            self.ff.ensure()
        if self.hold is None:
            flow.wake_sender(now)
        else:
            self.hold(flow, now)
        if self.in_order is not None:
            self.last_flow = flow
        return ev

    def send_in_order(self, connection, src, dst, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
                      in_network: bool = False, priority: int | None = None):
        """Like :meth:`send` (``send_in_network`` if ``in_network``) on ``connection`` (a hashable key, one
        per queue pair): the flow's packets leave after the connection's earlier flows' (:mod:`.inorder`)."""
        fifo = self.in_order
        if fifo is None:
            from .inorder import InOrderSends
            fifo = self.in_order = InOrderSends(self)
        return fifo.send(connection, src, dst, size_bytes, tag, in_network, priority)

    def send_in_network(self, src, dst, size_bytes: int, tag: FlowTag = EMPTY_TAG):
        """A flow ending or starting at a reducing switch, which terminates / originates it (:mod:`.innetwork`)."""
        with self.contract.in_network(src, dst):
            for sw in switch_ends(self.graph, src, dst):
                self.in_network.enable(sw)
            return self.send(src, dst, size_bytes, tag)

    # -- completion -------------------------------------------------------------------------------
    def _received(self, flow) -> None:
        tag, ideal, ev, path, mtu, hdr, bott, key = flow.record
        start_ns = (flow.start_ps + 500) // PS_PER_NS
        end_ns = (flow.end_ps + 500) // PS_PER_NS
        rec = make_record(flow.fid, str(flow.src), str(flow.dst), flow.size, start_ns, end_ns, ideal, tag,
                          cc=flow.cc_name, priority=flow.prio, retransmitted_bytes=flow.retransmitted_bytes,
                          ecn_marked_packets=flow.ecn_marked_packets, retransmits=flow.retransmits,
                          timeouts=flow.timeouts, cnps_received=flow.cnps_received, path_key=key)
        self.completed += 1
        self.bytes_delivered += flow.size
        self.accounting.recorded_row(flow, rec)
        if self.sink is not None:
            self.sink.add(rec)
        self._maybe_retire(flow)
        ev.succeed(rec)

    def _failed(self, flow) -> None:
        """The flow gave up after ``max_timeouts`` consecutive timeouts: it never completes."""
        self.failed += 1
        net = self.net
        if net.flows.pop(flow.fid, None) is not None:
            net.active -= 1
            self.accounting.flow_ended(flow, completed=False)

    def _acked(self, flow) -> None:
        if self.hpcc_fct:
            hpcc_row(self, flow)
        self._maybe_retire(flow)

    def _maybe_retire(self, flow) -> None:
        if flow.end_ps < 0 or not flow.sender_done:
            return
        if self.env.now > self.last_ps:
            self.last_ps = self.env.now
        if flow.end_ps > self.last_end_ps:
            self.last_end_ps = flow.end_ps   # the receiver's last byte, as fct.csv end_ns: sim_time_ns
        net = self.net
        if net.flows.pop(flow.fid, None) is None:
            return
        net.active -= 1
        self.accounting.flow_ended(flow, completed=True)

    # -- summary ----------------------------------------------------------------------------------
    def jain_fairness(self) -> float | None:
        """Jain's index (sum x)^2 / (n sum x^2) of per-flow throughputs (None without data).

        ``jain_window_ns`` = 0: x = size / FCT of every completed flow.
        Otherwise the window is W = [jain_start_ns, jain_start_ns + jain_window_ns),
        cut at the end of the run; x = payload bytes the flow delivered (in
        order, at the receiver) inside W / length of W, over every flow that
        started before W ends — so a flow that finished before or early in W
        counts with the little it delivered there (e.g. 2 equal flows, one
        done before the last half of the run: index 0.5 over that half).
        """
        end = self.last_ps if not self.net.flows else self.env.now
        return self.accounting.jain(end, self.net.flows.values())

    def flows_completed(self) -> int:
        return self.completed

    def stats(self) -> dict:
        return packet_stats(self)      # the run's counters (summary.py)

    def close(self) -> None:
        for s in (self.sinks.fct, self.sinks.queues, self.sinks.pfc, self.sinks.cc):
            if s is not None:
                s.flush()
        if self.ff is not None:
            self.ff.close()      # fast_forward.csv: the skipped intervals


@register_backend("packet", PacketBackend.capabilities)
def _factory(graph, *, env, params, seed, cc, cc_params, sinks, **kw):
    return PacketBackend(graph, env=env, params=params, seed=seed, cc=cc, cc_params=cc_params, sinks=sinks, **kw)


_new = tuple.__new__     # FlowMeta(...) without its Python-level __new__ (once per flow)
