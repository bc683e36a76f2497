"""Rate controllers of the flow backend: the one hook interface, the static controllers, the registry.

Every congestion-control algorithm acts on its fluid flows through one
:class:`RateController`, and so does the host stack:

* :meth:`RateController.shape` — the flow's constants (:class:`~.settings.FlowConsts`:
  wire bytes, ideal FCT, latency term, rate cap), once per path signature, size
  and algorithm (the path table caches them). The static CC model
  (:class:`CCModelController`: a :class:`~.ccmodel.CCModel`'s rate cap and
  slow-start ramp; its ``efficiency`` on shared links is read by the solver)
  and the host stack (:class:`HostStackController`: per-message delay and
  per-connection cap, applied after the CC's controller) act here only;
* ``dynamic`` controllers (fluid DCQCN, :class:`.dcqcnhooks.DcqcnController`)
  also own their flows and change their rate caps over time: :meth:`~RateController.admit`
  at a flow's start, :meth:`~RateController.release` at its end,
  :meth:`~RateController.catch_up`, :meth:`~RateController.detach`,
  :meth:`~RateController.attach` around link changes.

A new CC rate model is one class (subclass :class:`CCModelController`, override
``shape`` and, for a dynamic one, the flow hooks with ``dynamic = True``) plus
``@register_rate_controller("name")`` and its parameter row in
:data:`.ccmodel.MODEL_TABLES`. An algorithm with no registered class gets
:class:`CCModelController`; so does a registered dynamic one run with
``flow_dynamic=false``.

A controller is built once per backend and algorithm, on its first flow, as
``cls(backend, model)``; it reads the backend's public set-up (``graph``,
``params``, ``cc_params``, ``sinks``, ``link_ids``) and acts on its fluid
network (``backend.net``) only through :meth:`~.fluid.FluidNetwork.mark_dirty`
(caps changed on these links) and :meth:`~.fluid.FluidNetwork.call_at`
(evaluate me then).

Left out: controllers that change a flow's path or its latency term during
the run (only its cap), and several dynamic controllers on one flow.
"""
from __future__ import annotations

from typing import Callable, Protocol

from ...errors import InputError
from ...units import PS_PER_S
from .ccmodel import CCModel
from .components import FluidFlow
from .settings import FlowConsts, PathInfo


class RateController(Protocol):
    """The hook interface of a rate controller (times in ps, rates in bytes/ps).

    The path table calls :meth:`shape`; for a ``dynamic`` controller the
    backend calls :meth:`admit` at a flow's start, the fluid network
    :meth:`release` when a flow it took completes, and the link changes
    :meth:`catch_up`, :meth:`detach` and :meth:`attach`.
    """

    #: True: the flow hooks are called (the controller changes caps over time)
    dynamic: bool
    #: the algorithm's resolved parameters
    cc_model: CCModel

    def shape(self, info: PathInfo, size_bytes: int, c: FlowConsts) -> FlowConsts:
        """The constants of a flow of ``size_bytes`` on ``info``'s path, given ``c`` (those before
        this controller: the path's alone, or an earlier controller's)."""
        ...

    def admit(self, flow: FluidFlow, info: PathInfo, cap: float, now_ps: int) -> bool:
        """Take ``flow`` (per-flow ``cap``) starting now on ``info``'s path: set its ``cap``,
        ``ceil`` and ``solo`` and return True, or leave it alone and return False."""
        ...

    def release(self, flow: FluidFlow) -> None:
        """``flow``, taken by :meth:`admit`, completes now."""
        ...

    def catch_up(self) -> None:
        """Bring the controller's state to now (before a link's capacity changes)."""
        ...

    def detach(self, flow: FluidFlow) -> None:
        """``flow`` leaves its path (rerouted after a link failure)."""
        ...

    def attach(self, flow: FluidFlow) -> None:
        """``flow`` joins its new path."""
        ...


class CCModelController:
    """The static controller of a congestion-control model: its per-flow rate cap (a fraction
    of the first hop's rate) and its slow-start ramp, charged in the latency term at the
    lone-flow rate (a flow whose first solve gives it less is corrected then,
    :meth:`.components.SlowStart.recharge`). No flow hooks."""

    dynamic = False

    def __init__(self, backend, model: CCModel):
        self.cc_model = model

    def shape(self, info: PathInfo, size_bytes: int, c: FlowConsts) -> FlowConsts:
        m = self.cc_model
        cap = m.rate_cap(info.first_rate)
        cap = cap if cap < c.cap else c.cap
        lat = c.latency_ps
        if m.init_cwnd_pkts:
            lat += m.ramp_ps(c.wire_bytes, min(info.bott, cap), info.rtt, info.mtu)
        return FlowConsts(c.wire_bytes, c.ideal_ns, lat, cap)

    def admit(self, flow, info, cap, now_ps) -> bool:
        return False

    def release(self, flow) -> None:
        pass

    def catch_up(self) -> None:
        pass

    def detach(self, flow) -> None:
        pass

    def attach(self, flow) -> None:
        pass


class HostStackController(CCModelController):
    """The host stack (:class:`netsim.hoststack.HostStack`, set by the runtime) as a controller
    applied after the CC's: the per-message CPU delay added to the latency term and the
    per-connection cap (the sender's own limit: at most its NIC's line rate, not clamped to the
    path's bottleneck, which the links enforce) on paths that leave the server through a NIC
    (:meth:`netsim.network.path.PathModel.host_cost`)."""

    def __init__(self, pathmodel, stack, model: CCModel):
        self.cc_model = model
        self.pathmodel = pathmodel
        self.stack = stack

    def shape(self, info: PathInfo, size_bytes: int, c: FlowConsts) -> FlowConsts:
        from ...hoststack import transport_of
        pm, name = self.pathmodel, self.cc_model.name
        hc = pm.host_cost(pm.path(info.path), name, transport_of(name), self.stack)
        if hc is None:
            return c
        # the sender's own limit, not the path's: a DCQCN RP injects up to it and overruns a slower
        # bottleneck, as the packet backend's does (it paces only below the NIC's line rate); the
        # kernel-TCP cap is on payload, so in wire bytes (HostCost.wire_cap_bps)
        cap = min(c.cap, hc.wire_cap_bps / 8.0 / PS_PER_S)
        return FlowConsts(c.wire_bytes, c.ideal_ns, c.latency_ps + hc.overhead_ps, cap)


#: registered controllers by congestion-control name: ``name -> class`` built as ``cls(backend, model)``
RATE_CONTROLLERS: dict[str, Callable[..., RateController]] = {}


def register_rate_controller(name: str):
    """Class decorator: the :class:`RateController` of algorithm ``name`` (one per name)."""
    def deco(cls):
        if name in RATE_CONTROLLERS:
            raise ValueError(f"rate controller {name!r} registered twice")
        RATE_CONTROLLERS[name] = cls
        return cls
    return deco


def controller_class(model: CCModel) -> Callable[..., RateController]:
    """The controller class of algorithm ``model.name``: its registered class (a dynamic one
    only when ``model.dynamic``), else :class:`CCModelController`.

    Raises
    ------
    InputError
        ``model.dynamic`` and no dynamic controller is registered for its name.
    """
    cls = RATE_CONTROLLERS.get(model.name)
    if model.dynamic:
        if cls is None or not cls.dynamic:
            dyn = sorted(n for n, c in RATE_CONTROLLERS.items() if c.dynamic)
            raise InputError("congestion control has no dynamic flow model", where="--cc-param",
                             value=f"{model.name}.flow_dynamic=true",
                             accepted="flow_dynamic=true only for " + (", ".join(dyn) or "none"))
        return cls
    return cls if cls is not None and not cls.dynamic else CCModelController
