"""The flow-level (fluid) backend: fair sharing of directed links, event-driven.

What is modelled
----------------
* Every full-duplex edge of the topology is two directed links of capacity
  ``rate_bps``. A flow follows ``Router.path`` (ECMP hash per flow) and
  occupies every directed link of its path from its start until its last byte
  has left the sender (fluid completion).
* Rates are recomputed only when a flow starts or ends. Changes at one instant
  are coalesced into one recomputation, and only the connected components
  (links ↔ flows) touched by the change are re-solved (:mod:`.solver`):
  max-min fair (:mod:`.maxmin`) or, for flows of a lossless class under PFC,
  ingress-port fair with PFC head-of-line blocking (:mod:`.portfair`), as a
  FIFO network with pause frames shares a link. One pending SimPy event exists
  for the backend: the next fluid completion.
* Wire overhead: a flow carries ``size · mtu/(mtu − header)`` wire bytes, so
  links carry payload at ``rate · payload/(payload + header)``.
* Latency: a flow completes ``latency`` after its fluid completion, where
  ``latency = ideal_fct − wire_bytes/bottleneck_rate`` — propagation and the
  store-and-forward of the first packet — so a flow alone on its path finishes
  in exactly :func:`netsim.network.ideal.ideal_fct_ns`.
* Congestion control as a model (:mod:`.ccmodel`): a per-algorithm efficiency
  on shared links, a per-flow cap, a slow-start ramp added to the latency;
  DCQCN runs its own rate law on fluid queues (:mod:`.dcqcnfluid`), its
  current rate being the flow's cap, evaluated at flow starts/ends and on a
  periodic tick only while not at rest.
* Links are lossless: no drops. Queues, ECN marks and PFC pauses exist only
  in the fluid DCQCN model's FIFO queues (:mod:`.fifo`), which write
  approximate ``queues.csv``/``pfc.csv``/``cc.csv`` rows; without DCQCN flows
  those files stay empty and ``stats()`` says so.

Deliberately left out: priorities (classes are not isolated), per-packet
spraying (``routing=spray`` is treated as ECMP), queueing delay, ACK
bandwidth on reverse paths, retransmission timeouts.
"""
from __future__ import annotations

from typing import Any

import simpy

from ...network.fabric import DATA_PRIORITIES
from ...network.flowkey import FlowKeys
from ...network.send import SendContract
from ...records import EMPTY_TAG, FlowTag
from ...units import PS_PER_S, ps_to_ns
from ..base import CC_TRACE, HOST_STACK, IN_NETWORK, IN_ORDER, LINK_CHANGES, PFC_TRACE, QUEUE_TRACE, ROUTER, Backend, \
    TraceSinks, register_backend
from . import dcqcnhooks  # noqa: F401  (registers the "dcqcn" rate controller)
from .batch import send_batch
from .controllers import RateController, controller_class
from .fluid import FluidNetwork
from .inorder import send_in_order
from .linkchange import LinkChanges
from .newflow import UNSEEN, new_flow, resolve
from .paths import PathTable
from .relayhol import relay_ingress_links
from .pausegate import PauseGate, standing_window
from .settings import check_ecn_honoured, resolve_network_params
from .solver import ComponentSolver


class FlowBackend(Backend):
    """The seam of the flow backend (``--backend flow``): checks and builds flows, hands them
    to its :class:`~.fluid.FluidNetwork` (``net``), whose rates its
    :class:`~.solver.ComponentSolver` (``solver``) solves; dynamic congestion control runs
    in :class:`~.controllers.RateController` objects (``controllers``, by algorithm)."""

    name = "flow"
    #: traces: approximate, from the fluid DCQCN model only (empty without DCQCN flows)
    capabilities = frozenset({HOST_STACK, LINK_CHANGES, ROUTER, IN_NETWORK, IN_ORDER, QUEUE_TRACE, PFC_TRACE,
                              CC_TRACE})

    def __init__(self, graph, *, env: simpy.Environment, params: dict | None = None, seed: int = 0,
                 cc: str = "none", cc_params: dict | None = None, sinks: TraceSinks | None = None,
                 router=None):
        self.graph = graph
        self.env = env
        self.params = resolve_network_params(params or {})
        self.seed = seed
        self.contract = SendContract(graph, self.params, cc or "none")
        self._flowkey = FlowKeys().key          # ECMP keys, the same on every backend
        self.cc = self.contract.default_cc
        self._prio0 = self.contract.priority_of(self.cc)
        check_ecn_honoured(self.params, self.cc)
        self.cc_params = cc_params or {}
        self.sinks = sinks or TraceSinks()
        self.sink = self.sinks.fct
        if router is None:
            from ...topology import Router
            router = Router(graph, seed=seed)
        self.router = router
        #: directed link (a, b) -> link id
        self.link_ids: dict[tuple[str, str], int] = {}
        caps: list[float] = []                      # directed-link capacities (bytes/ps), filled below
        self.paths = PathTable(graph, self.params, router, self.cc_params, self.link_ids, caps)
        self.pathmodel = self.paths.pathmodel
        # the path table's lookups, bound once (the hot path of send)
        self._pair = self.paths.pair
        self._model, self._lookup, self._info = self.paths.model, self.paths.lookup, self.paths.info
        self._flow_consts, self._ideal = self.paths.flow_consts, self.paths.ideal
        fair = self.params["flow_fairness"]
        self._lossless_prios = self.params["_lossless"] if fair == "auto" else (
            frozenset(DATA_PRIORITIES) if fair == "port" else frozenset())
        self._model(self.cc)  # validate the default algorithm now
        # directed links
        for u, v in sorted((min(a, b), max(a, b)) for a, b in graph.edges()):
            rate = float(graph.edges[u, v]["rate_bps"]) / 8.0 / PS_PER_S  # bytes per ps
            for a, b in ((u, v), (v, u)):
                self.link_ids[(a, b)] = len(caps)
                caps.append(rate)
        self.net = FluidNetwork(env, caps, None, self.sink)
        self.solver = ComponentSolver(caps, self.net.users, port_max=int(self.params["flow_port_fair_max_flows"]),
                                      hol=bool(self.params["flow_pfc_hol"]))
        self.solver.relay_links = relay_ingress_links(graph, self.link_ids)
        self.solver.gate = PauseGate(graph, self.link_ids, self.params, self.cc, self.cc_params)
        self.net.solver = self.solver
        self._start = self.net.start
        #: id of the next flow (flows are numbered in ``send`` order)
        self.next_fid = 0
        #: rate controllers (static CC models and dynamic ones), by algorithm, built on their first flow
        self.controllers: dict[str, RateController] = {}
        self.links = LinkChanges(self)       # degrade / fail a link during the run
        self.in_order = None                 # per-connection FIFOs (:mod:`.inorder`), built on first use
        # counters of the seam (the fluid network counts its own work)
        self.n_flows = 0
        self.switched_flows = 0      # flows whose path crosses a network switch
        self.n_local = 0             # self-sends, completed at once as local copies
        self.last_local_ps = 0       # when the last of them completed (sim_time_ns)
        self.local_bytes = 0

    def check_cc(self, name: str) -> None:
        """Raise :class:`InputError` (naming ``--cc``) if this backend has no model of algorithm ``name``."""
        self._model(name)

    # -- the seam ---------------------------------------------------------------
    def send(self, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
             cc: str | None = None, priority: int | None = None) -> simpy.Event:
        info = resolve(self._pair.get, src, dst, size_bytes)
        if info is not UNSEEN and cc is None and priority is None:
            ccname, prio = self.cc, self._prio0          # the contract's rules 1-4 hold (no SendSpec built)
        else:
            spec = self.contract.check(src, dst, size_bytes, tag, cc, priority)
            if spec.local:
                return self._local(spec)
            size_bytes, ccname, prio = spec.size_bytes, spec.cc, spec.priority
            if info is UNSEEN:
                info = None
        fid = self.next_fid
        self.next_fid = fid + 1
        env = self.env
        now = env.now
        ctl = self.controllers.get(ccname) or self._controller(ccname)
        ev = simpy.Event(env)
        f = new_flow(self, info, src, dst, size_bytes, tag, ccname, prio, ctl, fid, now, ev)
        self.n_flows += 1
        self._start(f, now)
        return ev

    def _local(self, spec) -> simpy.Event:
        """A self-send (``spec.local``): its local copy, numbered as a flow."""
        fid = self.next_fid
        self.next_fid = fid + 1
        self.n_flows += 1
        self.n_local += 1
        self.last_local_ps = self.env.now
        self.local_bytes += spec.size_bytes
        return self.local_copy(fid, spec)

    def send_batch(self, transfers, on_done, keys=None, connections=None) -> None:
        """Start ``transfers`` now in one call, flow by flow as :meth:`send` would (on ``connections``,
        in order, as :meth:`send_in_order`), arrivals of one delivery time in one event (:mod:`.batch`)."""
        send_batch(self, transfers, on_done, keys, connections)

    send_in_order = send_in_order      # a connection's flows leave in post order (:mod:`.inorder`)
    def controller(self, name: str) -> RateController:
        """The rate controller of algorithm ``name`` (built on first use)."""
        return self.controllers.get(name) or self._controller(name)

    def _window(self, info, ccname: str):
        """The :class:`~.pausegate.StandingWindow` of a ``ccname`` flow on ``info``'s path (cached)."""
        w = info.consts.get(ccname, UNSEEN)           # key: the algorithm's name (beside dcqcnhooks' "rp_line")
        if w is UNSEEN:
            w = info.consts[ccname] = standing_window(ccname, self.cc_params, self.params,
                                                   self.pathmodel.path(info.path))
        return w

    def _controller(self, name: str) -> RateController:
        """The rate controller of algorithm ``name`` (:func:`.controllers.controller_class`), built
        on its first flow."""
        model = self._model(name)
        ctl = self.controllers[name] = controller_class(model)(self, model)
        return ctl

    # -- link changes (the netsim.whatif protocol) ---------------------------------
    def set_link_rate(self, a: str, b: str, rate_bps: float) -> None:
        """Link a–b runs at ``rate_bps`` (both directions) from now on (:meth:`.LinkChanges.set_link_rate`)."""
        self.links.set_link_rate(a, b, rate_bps)

    def fail_link(self, a: str, b: str) -> None:
        """Remove link a–b now; its flows move to their new ECMP paths (:meth:`.LinkChanges.fail_link`)."""
        self.links.fail_link(a, b)

    @property
    def host_stack(self):
        """The runtime's :class:`netsim.hoststack.HostStack` (``None``: no host cost), read by the
        path table's constants."""
        return self.paths.host_stack

    @host_stack.setter
    def host_stack(self, stack) -> None:
        self.paths.host_stack = stack

    @property
    def dcqcn_model(self):
        """The fluid DCQCN model (:class:`~.dcqcnfluid.DcqcnFluid`), ``None`` until used."""
        ctl = self.controllers.get("dcqcn")
        return ctl.model if ctl is not None and ctl.dynamic else None

    # -- reporting --------------------------------------------------------------
    def flows_completed(self) -> int:
        return self.net.delivered.n_completed + self.n_local

    def stats(self) -> dict[str, Any]:
        net, solver, dq = self.net, self.solver, self.dcqcn_model
        return {
            "backend": "flow",
            "flows": self.n_flows,
            "switched_flows": self.switched_flows,
            "completed": net.delivered.n_completed + self.n_local,
            "bytes_delivered": net.delivered.bytes_delivered + self.local_bytes,
            "drops": 0,
            "ecn_marks": 0,
            "pfc_pauses": dq.net.pause_events if dq else 0,
            "retransmitted_bytes": 0,
            "sim_time_ns": ps_to_ns(self.env.now if self.flows_completed() < self.n_flows
                                    else max(net.delivered.last_ps, self.last_local_ps)),  # last completion
            "events": net.events,
            "recomputations": net.recomputations,
            "completion_instants": net.completion_instants,
            "rate_updates": net.rate_updates,
            "component_solves": solver.solves,
            "recompute_wall_s": round(net.recompute_wall_s, 6),
            "max_component_flows": max(solver.max_component, min(self.n_flows, 1)),
            "max_active_flows": net.max_active,
            "port_fair_solves": solver.port_fair_solves,
            "port_fair_fallbacks": solver.port_fair_fallbacks,
            "hol_paused_links": solver.hol_paused_links,
            "dcqcn_ticks": dq.ticks if dq else 0,
            "dcqcn_cnps": dq.cnps if dq else 0,
            "queues": ("approximate: fluid FIFO queues of DCQCN flows only, sampled at model steps"
                       if dq else "not modelled by flow backend (queues.csv and pfc.csv are empty)"),
            "pfc": ("approximate: per-ingress XOFF/XON of the fluid DCQCN model; other traffic lossless fluid"
                    if dq else "not modelled by flow backend (lossless fluid links)"),
        }

    def close(self) -> None:
        for s in (self.sinks.fct, self.sinks.queues, self.sinks.pfc, self.sinks.cc):
            if s is not None:          # a netsim.sinks.Sink: flush is part of the protocol
                s.flush()


@register_backend("flow", FlowBackend.capabilities, params=resolve_network_params)
def create_flow_backend(graph, *, env, params=None, seed=0, cc="none", cc_params=None, sinks=None,
                        **kw) -> FlowBackend:
    """Factory for ``create_backend("flow", ...)``."""
    return FlowBackend(graph, env=env, params=params, seed=seed, cc=cc, cc_params=cc_params,
                       sinks=sinks, **kw)
