"""The analytic backend: closed-form alpha-beta cost per flow, no fabric contention.

A flow of ``S`` bytes on its routed path takes exactly the time it would take
*alone* on that path with packetized store-and-forward — the packet helper's
:func:`netsim.network.ideal.ideal_fct_exact_ns` (tandem of deterministic
servers; packets of at most ``mtu_bytes`` incl. ``header_bytes``). For whole
packets that is ``a + 8 W / r_b``: ``W`` wire bytes, ``r_b`` the bottleneck
rate, ``a`` = propagation plus one packet's serialization on every other
hop. (Collectives' software latency is added by the collectives layer,
:mod:`netsim.collectives.protocol`, on every backend.)

The only interaction between flows: each flow's bytes are paced through the
**first bottleneck link of its path** (the first link with the path's lowest
rate — a GPU's NVLink, a NIC's uplink), and flows charged to the same such
link share it: equally (``source_sharing=fair``, processor sharing, what the
packet backend's per-flow interleaving and the flow backend's max-min give)
or one after another (``fifo``: only the oldest flow on the link drains). A flow's time is then its drain time there
plus the rest of its lone-flow time (latency, store-and-forward). Without
this a rank could send to all its peers at full rate at once and an
all-to-all would take ``1/(n-1)`` of its real time. Nothing else is shared:
no queueing on other links, no incast at receivers, no ACK traffic, no ECN,
no PFC, no congestion control (``cc`` is recorded but ignored), no loss.
Where that is wrong — flows paced at different links meeting on a third, as
ECMP collisions in a spine — :mod:`.contention` measures the overrun and
reports it (``unmodelled_contention`` in ``stats()``, a warning at close).

Host stack and link changes (issue 5): with ``backend.host_stack`` set (a
:class:`netsim.hoststack.HostStack`), a flow whose path crosses a NIC pays
the transport's per-message overhead (added to its latency) and is capped at
the per-connection rate (kernel TCP ≈ 42 Gbit/s); capped flows share their
link max-min. ``--set host.KEY=VALUE`` or ``--set host_stack=on`` turn it on
as on the packet backend. ``set_link_rate`` / ``fail_link`` implement the
:mod:`netsim.whatif` link-change protocol: every flow still draining across
the changed link is re-timed (bits left at the new bottleneck, or on its new
route); a flow past its pacing link keeps its end time (left out).

Parameters: :data:`ANALYTIC_PARAMS` (``mtu_bytes`` and ``header_bytes`` are
the network's own :data:`netsim.network.params.SIM_PARAMS` entries, so every
backend agrees on wire bytes); every other network ``--set`` name is checked
and has no effect here. ``send`` is checked by the one
:class:`netsim.network.send.SendContract`; path MTU, bottleneck, ideal FCT
and host-stack cost come from :class:`netsim.network.path.PathModel`.
Two SimPy events per flow (drain, delivery).

Modules: this one holds the backend (routing, events, records);
:mod:`.linkchange` re-times the flows a link change touches; :mod:`.pathcost` a flow's cost on its path alone (lone-flow time,
wire bits, pacing link, host-stack cost, cached per path); :mod:`.sharing`
the rates of the flows sharing a pacing link; :mod:`.contention` the
overruns of the links it does not share.
"""
from __future__ import annotations

import sys
from typing import Any

import simpy

from ...network.flowkey import FlowKeys
from ...network.path import PathModel
from ...network.send import SendContract
from ...records import EMPTY_TAG, FlowTag, make_record
from ...units import PS_PER_S, ps_to_ns
from ..base import HOST_STACK, IN_NETWORK, IN_ORDER, LINK_CHANGES, NO_FABRIC_CONTENTION, ROUTER, Backend, TraceSinks, \
    register_backend
from .contention import LinkLoads
from .linkchange import retime
from .params import check_cc_params, resolve_analytic_params
from .pathcost import PathCosts
from .sharing import PacedFlow, PacingShare, advance, assign_rates


class AnalyticBackend(Backend):
    """Closed-form per-flow cost; see the module docstring for what is modelled."""

    name = "analytic"
    capabilities = frozenset({HOST_STACK, LINK_CHANGES, ROUTER, IN_NETWORK, IN_ORDER, NO_FABRIC_CONTENTION})

    def __init__(self, graph, *, env: simpy.Environment, params: dict, seed: int = 0, cc: str = "none",
                 cc_params: dict | None = None, sinks: TraceSinks | None = None):
        self.graph = graph
        self.env = env
        from ...hoststack import HostStack, split_host_params
        params, host_params = split_host_params(params)
        self.params = resolve_analytic_params(params)
        self.contract = SendContract(graph, self.params, cc or "none")
        self.flowkeys = FlowKeys()              # ECMP keys, the same on every backend
        check_cc_params(cc_params)
        self.cc = self.contract.default_cc
        self.seed = seed
        self.sinks = sinks or TraceSinks()
        self.sink = self.sinks.fct
        from ...topology.routing import Router
        self.router = Router(graph, seed=seed)
        self.pathmodel = PathModel(graph, self.params)
        self._routes: dict[tuple, list] = {}  # (src, dst) -> equal-cost paths (at most 2 kept)
        self._shares: dict[tuple, PacingShare] = {}  # first directed link -> its active flows (sharing.py)
        self._fifo = self.params["source_sharing"] == "fifo"
        # netsim.hoststack.HostStack: from --set host.KEY / host_stack=on (as the packet backend), or the runtime's
        self.host_stack = HostStack(host_params) if (host_params or self.params["host_stack"]) else None
        self._next_id = 0
        self._loads = LinkLoads()               # what the model does not share (contention.py)
        self.costs = PathCosts(self.pathmodel, self._loads)   # per-path costs, cached (pathcost.py)
        self._warned = False
        #: print the overrun warning at close (a caller that reports contention itself turns it off)
        self.warn_overrun = True
        self.in_order = None            # per-connection send queues (:mod:`.inorder`), built on first use
        self.hold, self.last_flow = False, None
        self.flows = self.completed = self.bytes_delivered = self.events = 0
        self.last_done_ps = 0      # when the last flow completed: summary sim_time_ns (docs/packet.md)

    # -- path model (pathcost.py) -----------------------------------------------------------------
    def path_alpha_beta(self, src: str, dst: str, flow_id: int = 0) -> tuple[float, float]:
        """``(a_s, B_bps)`` of the path: latency of a full-packet flow and payload bandwidth.

        :meth:`.pathcost.PathCosts.alpha_beta` of the routed path: a flow whose
        size is a multiple of the payload takes exactly ``a + 8 S / B``.
        """
        return self.costs.alpha_beta(tuple(self.router.path(src, dst, flow_id)))

    # -- the seam ----------------------------------------------------------------------------------
    def _route(self, src: str, dst: str, key: int) -> tuple:
        """The path of a flow with ECMP key ``key`` (:mod:`netsim.network.flowkey`)."""
        paths = self._routes.get((src, dst))
        if paths is None:
            paths = self._routes[(src, dst)] = [tuple(p) for p in self.router.paths(src, dst, limit=2)]
        return paths[0] if len(paths) == 1 else tuple(self.router.path(src, dst, key))

    def send(self, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
             cc: str | None = None, priority: int | None = None) -> simpy.Event:
        spec = self.contract.check(src, dst, size_bytes, tag, cc, priority)
        fid = self._next_id
        self._next_id += 1
        self.flows += 1
        if spec.local:
            self.completed += 1
            self.bytes_delivered += spec.size_bytes
            self.last_done_ps = max(self.last_done_ps, int(self.env.now))
            return self.local_copy(fid, spec)
        now = self.env.now
        key = self.flowkeys.key(src, dst, tag)
        meta = (fid, src, dst, spec.size_bytes, now, tag, spec.cc, spec.priority, key)
        ev = self.env.event()
        ev.callbacks.append(self._done)
        path = self._route(src, dst, key)
        self.contract.check_path(spec.cc, self.pathmodel.path(path), None, src, dst)  # e.g. Swift's target
        flow = self._flow_on(path, meta, ev)
        if self.in_order is not None:         # send_in_order: it may wait behind its connection's flow
            self.last_flow = flow
            if self.hold:
                return ev
        self._join(flow, now)
        return ev

    def send_in_order(self, connection, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
                      in_network: bool = False, priority: int | None = None) -> simpy.Event:
        """Like :meth:`send` (``send_in_network`` if ``in_network``) on ``connection`` (a hashable key, one
        per queue pair): the flow drains after the connection's earlier flows (:mod:`.inorder`)."""
        fifo = self.in_order
        if fifo is None:
            from .inorder import InOrderSends
            fifo = self.in_order = InOrderSends(self)
        return fifo.send(connection, src, dst, size_bytes, tag, in_network, priority)

    def _flow_on(self, path: tuple, meta: tuple, ev, bits_left: float | None = None) -> PacedFlow:
        """A :class:`.sharing.PacedFlow` of ``meta``'s size on ``path`` (``bits_left``: bits still to drain)."""
        lone, bits, tail, link, bott = self.costs.cost(path, meta[3])
        cap = bott
        if self.host_stack is not None:        # host CPU cost: per-message delay, per-connection cap
            over_ps, cap = self.costs.host_cost(path, meta[6], bott, self.host_stack)
            tail += over_ps
        links = self.costs.links(path)
        return PacedFlow(bits if bits_left is None else bits_left, cap, tail, lone, meta, ev, path, links)

    def _join(self, flow: PacedFlow, now: int) -> PacingShare:
        """Add ``flow`` to the share of its path's first bottleneck link and reschedule that share."""
        _, _, _, link, bott = self.costs.cost(flow.path, flow.meta[3])
        sh = self._shares.get(link)
        if sh is None:
            sh = self._shares[link] = PacingShare(bott, now)
        advance(sh, now)
        sh.rate_bps = bott          # the pacing link's rate now (a link change may have moved it)
        sh.flows.append(flow)
        self._reschedule(sh)
        return sh

    # -- processor sharing of a source's first link (sharing.py) ------------------------------------
    def _reschedule(self, sh: PacingShare) -> None:
        sh.gen += 1
        if not sh.flows:
            return
        t_ps = assign_rates(sh, self._fifo)
        LinkLoads.count(sh.flows, self.env.now)   # the loads of every link they cross (contention.py)
        gen = sh.gen
        ev = self.env.timeout(max(0, int(round(t_ps))))
        self.events += 1
        ev.callbacks.append(lambda _e: self._drained(sh) if sh.gen == gen else None)

    # -- link changes (netsim.whatif protocol) -------------------------------------------------------
    def set_link_rate(self, a: str, b: str, rate_bps: float) -> None:
        """Link a–b runs at ``rate_bps`` from now on.

        Every flow still draining whose path crosses a–b is re-timed: its bits
        left are advanced to now at the old rates, then its bottleneck, pacing
        link and latency tail are those of the path at the new rates (a flow
        whose bottleneck moves changes share). New flows see the new rate.
        """
        self.graph.edges[a, b]["rate_bps"] = float(rate_bps)
        self._forget_paths()
        self._retime(a, b, reroute=False)

    def fail_link(self, a: str, b: str) -> None:
        """Remove link a–b: draining flows that crossed it move to their new route with their bits
        left (as the flow backend); new flows route around it; no route left raises ``RoutingError``."""
        self.graph.remove_edge(a, b)
        self.router.invalidate()
        self._routes.clear()
        self._forget_paths()
        self._retime(a, b, reroute=True)

    def _forget_paths(self) -> None:
        self.costs.forget()

    def _retime(self, a: str, b: str, *, reroute: bool) -> None:
        retime(self, a, b, reroute=reroute)     # re-place the draining flows crossing a–b (linkchange.py)

    def _drained(self, sh: PacingShare) -> None:
        now = self.env.now
        advance(sh, now)
        keep, done = [], []
        for f in sh.flows:
            if f.bits * PS_PER_S <= f.rate * 1.0:  # within 1 ps of done
                LinkLoads.change(f.links, -f.load, now)
                self._finish_at(f.meta, now + f.tail, f.lone, f.event)
                done.append(f)
            else:
                keep.append(f)
        sh.flows = keep
        if self.in_order is not None:
            for f in done:
                self.in_order.drained(f)
        self._reschedule(sh)

    def _finish_at(self, meta: tuple, end_ps: float, lone_ps: float, ev: simpy.Event) -> simpy.Event:
        """Make ``ev`` succeed at ``end_ps`` with the flow's record (one scheduled event)."""
        fid, src, dst, size, start_ps, tag, cc, prio, key = meta
        now = self.env.now
        end = max(int(round(end_ps)), now)
        ideal_ns = max(1, ps_to_ns(int(round(lone_ps)))) if lone_ps > 0 else 0
        rec = make_record(fid, src, dst, size, ps_to_ns(start_ps), ps_to_ns(end), ideal_ns, tag, cc=cc,
                          priority=prio, path_key=key)
        # what simpy.Timeout does in its constructor, applied to the event already handed out
        ev._ok = True
        ev._value = rec
        self.env.schedule(ev, simpy.events.NORMAL, end - now)
        self.events += 1
        return ev

    def _done(self, ev) -> None:
        rec = ev.value
        self.completed += 1
        self.last_done_ps = max(self.last_done_ps, int(self.env.now))
        self.bytes_delivered += rec.size_bytes
        if self.sink is not None:
            self.sink.add(rec)

    def flows_completed(self) -> int:
        return self.completed

    def stats(self) -> dict[str, Any]:
        out = {"backend": self.name, "flows": self.flows, "completed": self.completed,
               "bytes_delivered": self.bytes_delivered,
               "sim_time_ns": ps_to_ns(self.last_done_ps if self.completed == self.flows else int(self.env.now)),
               "events": self.events}
        report = self._loads.report()
        if report is not None:                  # links the model does not share were overrun (contention.py)
            out["unmodelled_contention"] = report.as_dict()
        return out

    def overrun_message(self) -> str | None:
        """The one-line report of links concurrent flows overran (:mod:`.contention`), or ``None``."""
        report = self._loads.report()
        return None if report is None else report.message()

    def close(self) -> None:
        report = self._loads.report()
        if report is not None and not self._warned and self.warn_overrun:
            self._warned = True
            # one ``netsim: warning:`` line on stderr, as the packet backend's PFC reports (not a Python warning)
            print(f"netsim: warning: {report.message()}", file=sys.stderr)
        if self.sink is not None:          # a netsim.sinks.Sink: flush is part of the protocol
            self.sink.flush()


@register_backend("analytic", AnalyticBackend.capabilities, params=resolve_analytic_params)
def create_analytic(graph, *, env, params, seed=0, cc="none", cc_params=None, sinks=None) -> AnalyticBackend:
    """Factory for ``--backend analytic``."""
    return AnalyticBackend(graph, env=env, params=params, seed=seed, cc=cc, cc_params=cc_params, sinks=sinks)
