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
from ...network.send import SendContract
from ...records import EMPTY_TAG, FlowTag
from ...units import PS_PER_S, ps_to_ns
from ..base import CC_TRACE, HOST_STACK, LINK_CHANGES, PFC_TRACE, QUEUE_TRACE, ROUTER, Backend, TraceSinks, \
    register_backend
from .completions import CompletionsMixin
from .components import FluidFlow, SlowStart
from .dcqcnhooks import DcqcnController
from .linkchange import LinkChanges
from .paths import PathTable
from .rates import RatesMixin
from .settings import check_ecn_honoured, resolve_network_params
from .solver import ComponentSolver



class FlowBackend(RatesMixin, CompletionsMixin, Backend):
    """Max-min fair fluid network over a topology graph (``--backend flow``)."""

    name = "flow"
    #: traces: approximate, from the fluid DCQCN model only (empty without DCQCN flows)
    capabilities = frozenset({HOST_STACK, LINK_CHANGES, ROUTER, QUEUE_TRACE, PFC_TRACE, CC_TRACE})

    def __init__(self, graph, *, env: simpy.Environment, params: dict | None = None, seed: int = 0,
                 cc: str = "none", cc_params: dict | None = None, sinks: TraceSinks | None = None,
                 router=None):
        self.graph = graph
        self.env = env
        self.params = resolve_network_params(params or {})
        self.seed = seed
        self.contract = SendContract(graph, self.params, cc or "none")
        self.cc = self.contract.default_cc
        check_ecn_honoured(self.params, self.cc)
        self.cc_params = cc_params or {}
        self.sinks = sinks or TraceSinks()
        self.sink = self.sinks.fct
        if router is None:
            from ...topology import Router
            router = Router(graph, seed=seed)
        self.router = router
        self._lid: dict[tuple[str, str], int] = {}   # directed link (a, b) -> id
        caps: list[float] = []                      # directed-link capacities (bytes/ps), filled below
        self.paths = PathTable(graph, self.params, router, self.cc_params, self._lid, caps)
        self.pathmodel = self.paths.pathmodel
        # the path table's lookups, bound once (the hot path of send)
        self._models, self._pair = self.paths.models, self.paths.pair
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
                self._lid[(a, b)] = len(caps)
                caps.append(rate)
        self._cap = caps
        self._users: list[dict[int, FluidFlow]] = [dict() for _ in caps]
        self.solver = ComponentSolver(caps, self._users, port_max=int(self.params["flow_port_fair_max_flows"]),
                                      hol=bool(self.params["flow_pfc_hol"]))
        # dynamic state
        self._heap: list = []
        self._next_fid = 0
        self._active = 0
        self._dirty: set[int] = set()          # links whose flows' rates may have changed
        self._fresh: list[FluidFlow] = []       # flows started since the last recomputation
        self._settle_pending = False
        self._timers: set[int] = set()
        self.dcqcn = DcqcnController(self)   # fluid DCQCN, the dynamic rate controller
        self.links = LinkChanges(self)       # degrade / fail a link during the run
        # counters
        self.n_flows = 0
        self.switched_flows = 0      # flows whose path crosses a network switch
        self.n_completed = 0
        self.bytes_delivered = 0
        self.events = 0
        self.recomputations = 0      # solves of changed components (a flow starting alone needs none)
        self.completion_instants = 0 # instants at which at least one flow completed
        self.rate_updates = 0       # flow rates set (a start counts one): the fluid model's work
        self.recompute_wall_s = 0.0
        self.max_active = 0

    # -- the seam ---------------------------------------------------------------
    def send(self, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
             cc: str | None = None, priority: int | None = None) -> simpy.Event:
        spec = self.contract.check(src, dst, size_bytes, tag, cc, priority)
        fid = self._next_fid
        self._next_fid = fid + 1
        if spec.local:
            self.n_flows += 1
            self.n_completed += 1
            self.bytes_delivered += spec.size_bytes
            return self.local_copy(fid, spec)
        size_bytes = spec.size_bytes
        env = self.env
        now = env.now
        ccname = spec.cc
        model = self._models.get(ccname) or self._model(ccname)
        info = self._pair.get((src, dst))
        if info is None:
            info = self._lookup(src, dst, fid)
        wire, ideal_ns, lat, cap = self._flow_consts(info, size_bytes, model)   # (a FlowConsts)
        if info.switched:
            self.switched_flows += 1
        f = FluidFlow()
        f.fid = fid
        f.src = src
        f.dst = dst
        f.size = size_bytes
        f.start_ps = f.t_upd = now
        f.links = links = info.links
        f.rem = wire
        f.rate = 0.0
        f.finish = -1
        f.ver = 0
        f.cap = cap
        f.solo = info.bott if info.bott < cap else cap
        f.ideal_ns = ideal_ns
        f.lat_ps = lat
        f.event = ev = simpy.Event(env)
        f.tag = tag
        f.cc = ccname
        f.prio = spec.priority
        f.eta = model.efficiency
        f.lossless = f.prio in self._lossless_prios
        f.bott = info.bott
        f.mtu = info.mtu
        f.rp = None
        f.held = False
        f.pf = False
        if model.init_cwnd_pkts and model.ramp_scale > 0.0:
            charged = min(info.bott, model.rate_cap(info.first_rate))   # as in the latency term
            f.ramp = SlowStart(model, info.rtt, charged, charged)
        else:
            f.ramp = None
        if model.dynamic and ccname == "dcqcn":
            self.dcqcn.admit(f, info, cap, now)
        users = self._users
        alone = f.rp is None
        for l in links:
            u = users[l]
            u[fid] = f
            if len(u) != 1:
                alone = False
        self.n_flows += 1
        self._active += 1
        if self._active > self.max_active:
            self.max_active = self._active
        if alone:
            self._start_alone(f, now)
        else:
            self._fresh.append(f)
            if not self._settle_pending:
                self._request_settle()
        return ev

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
    def _dq(self):
        """The fluid DCQCN model (:class:`~.dcqcnfluid.DcqcnFluid`), ``None`` until used."""
        return self.dcqcn.model

    # -- reporting --------------------------------------------------------------
    def flows_completed(self) -> int:
        return self.n_completed

    def stats(self) -> dict[str, Any]:
        return {
            "backend": "flow",
            "flows": self.n_flows,
            "switched_flows": self.switched_flows,
            "completed": self.n_completed,
            "bytes_delivered": self.bytes_delivered,
            "drops": 0,
            "ecn_marks": 0,
            "pfc_pauses": self._dq.net.pause_events if self._dq else 0,
            "retransmitted_bytes": 0,
            "sim_time_ns": ps_to_ns(self.env.now),
            "events": self.events,
            "recomputations": self.recomputations,
            "completion_instants": self.completion_instants,
            "rate_updates": self.rate_updates,
            "component_solves": self.solver.solves,
            "recompute_wall_s": round(self.recompute_wall_s, 6),
            "max_component_flows": max(self.solver.max_component, min(self.n_flows, 1)),
            "max_active_flows": self.max_active,
            "port_fair_solves": self.solver.port_fair_solves,
            "port_fair_fallbacks": self.solver.port_fair_fallbacks,
            "hol_paused_links": self.solver.hol_paused_links,
            "dcqcn_ticks": self._dq.ticks if self._dq else 0,
            "dcqcn_cnps": self._dq.cnps if self._dq else 0,
            "queues": ("approximate: fluid FIFO queues of DCQCN flows only, sampled at model steps"
                       if self._dq else "not modelled by flow backend (queues.csv and pfc.csv are empty)"),
            "pfc": ("approximate: per-ingress XOFF/XON of the fluid DCQCN model; other traffic lossless fluid"
                    if self._dq else "not modelled by flow backend (lossless fluid links)"),
        }

    def close(self) -> None:
        for s in (self.sinks.fct, self.sinks.queues, self.sinks.pfc, self.sinks.cc):
            if s is not None and hasattr(s, "flush"):
                s.flush()


@register_backend("flow", FlowBackend.capabilities, params=resolve_network_params)
def create_flow_backend(graph, *, env, params=None, seed=0, cc="none", cc_params=None, sinks=None,
                        **kw) -> FlowBackend:
    """Factory for ``create_backend("flow", ...)``."""
    return FlowBackend(graph, env=env, params=params, seed=seed, cc=cc, cc_params=cc_params,
                       sinks=sinks, **kw)
