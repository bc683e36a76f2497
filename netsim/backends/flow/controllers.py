"""Rate controllers of the flow backend: the one hook interface and its registry.

A congestion-control algorithm acts on a fluid flow in one of two ways:

* **static** — three constants per flow (an efficiency on shared links, a
  rate cap, a slow-start ramp in the latency term), a
  :class:`~.ccmodel.CCModel` resolved from its row of
  :data:`.ccmodel.MODEL_TABLES` and applied by the path table
  (:meth:`.paths.PathTable.flow_consts`) together with the host stack's
  per-message delay and per-connection cap. A new static model is one row
  there (``MODEL_TABLES["name"] = _table(...)``);
* **dynamic** (``CCModel.dynamic``) — a :class:`RateController` that owns the
  flows of its algorithm and changes their rate caps over time (fluid DCQCN,
  :class:`.dcqcnhooks.DcqcnController`). A new dynamic model is one class
  implementing :class:`RateController` plus ``@register_rate_controller("name")``
  and a ``dynamic=True`` row in :data:`.ccmodel.MODEL_TABLES`.

A controller is built once per backend, on the first flow of its algorithm,
as ``cls(backend)``; it reads the backend's public set-up (``graph``,
``params``, ``cc_params``, ``sinks``, ``link_ids``) and acts on its fluid
network (``backend.net``) only through
:meth:`~.fluid.FluidNetwork.mark_dirty` (caps changed on these links) and
:meth:`~.fluid.FluidNetwork.call_at` (evaluate me then).

Left out: controllers that change a flow's path or its latency term during
the run (only its cap), and several controllers on one flow.
"""
from __future__ import annotations

from typing import Callable, Protocol

from ...errors import InputError
from .components import FluidFlow
from .settings import PathInfo


class RateController(Protocol):
    """The hook interface of a dynamic rate controller (times in ps, rates in bytes/ps).

    The fluid network calls :meth:`release` when a flow the controller took
    completes; the backend calls :meth:`admit` at a flow's start and the link
    changes call :meth:`catch_up`, :meth:`detach` and :meth:`attach`.
    """

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


#: dynamic controllers by congestion-control name: ``name -> class`` built as ``cls(backend)``
RATE_CONTROLLERS: dict[str, Callable[..., RateController]] = {}


def register_rate_controller(name: str):
    """Class decorator: the :class:`RateController` of algorithm ``name`` (one per name)."""
    def deco(cls):
        if name in RATE_CONTROLLERS:
            raise ValueError(f"rate controller {name!r} registered twice")
        RATE_CONTROLLERS[name] = cls
        return cls
    return deco


def controller_class(name: str) -> Callable[..., RateController]:
    """The registered controller class of dynamic algorithm ``name``.

    Raises
    ------
    InputError
        No controller is registered for ``name`` (its model says ``dynamic``).
    """
    cls = RATE_CONTROLLERS.get(name)
    if cls is None:
        raise InputError("congestion control has no dynamic flow model", where="--cc-param",
                         value=f"{name}.flow_dynamic=true",
                         accepted="flow_dynamic=true only for " + (", ".join(sorted(RATE_CONTROLLERS)) or "none"))
    return cls
