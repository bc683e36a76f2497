"""The one check of network parameters that every backend goes through.

``netsim flows`` and ``netsim run`` (and their Python APIs ``run_flows`` and
``run_training``) call :func:`check_network_params` before anything is
simulated: ``--set`` overrides against the packet table (shared by every
backend, so a name the flow or analytic backend does not model is still
checked), the backend's own table and the host stack's, and every node
attribute of the topology that overrides a network parameter. Each value goes
through :meth:`netsim.params.Param.parse` (type, bounds, finite). Left out:
congestion-control parameters, checked by
:func:`netsim.transport.cc.config.resolve_cc_params` with the same machinery.
"""
from __future__ import annotations

from .errors import InputError


def check_network_params(backend: str, params: dict | None, graph=None, *, source: str | None = None) -> None:
    """The one check of network parameters every backend goes through (``netsim flows`` and ``netsim run``).

    Checks ``--set`` overrides against the packet table (``SIM_PARAMS``, shared by
    every backend: a name the flow or analytic backend does not model is still
    checked, then ignored), the backend's own table and the host stack's
    (``host.KEY``); with ``graph``, also every node attribute that overrides a
    network parameter (``source`` names the topology file in the message). All
    values go through :meth:`netsim.params.Param.parse`: type, bounds, finite.

    Raises
    ------
    InputError
        One line naming ``--set`` (or the file and node), the key, the value and what is accepted.
    """
    from .backends.base import backend_capabilities, resolve_backend_params
    from .hoststack import HostStack, split_host_params
    backend_capabilities(backend)   # an unknown --backend is its own error, not one of --set
    try:
        net_params, host_params = split_host_params(dict(params or {}))
        resolve_backend_params(backend, net_params)   # the backend's registered resolver (no name branch)
        HostStack(host_params)
    except InputError as exc:
        raise _blame(exc, "--set") from None
    if graph is not None:
        check_node_params(graph, source=source)
    from .honours import check_honoured
    check_honoured(backend, params, graph, source=source)   # what this backend cannot honour is an error


def check_node_params(graph, *, source: str | None = None) -> None:
    """Check every node attribute of ``graph`` that overrides a network parameter (all backends alike)."""
    from .network.params import PER_PRIORITY, node_overrides, parse_override
    for name in sorted(graph.nodes, key=str):
        attrs = graph.nodes[name]
        try:
            node_overrides(attrs, node=name)
            for key in attrs:   # NAME.P with a bad P is not "some other attribute": it is a typo
                if isinstance(key, str) and key.rpartition(".")[0] in PER_PRIORITY:
                    parse_override(key, attrs[key], where=f"node {name}, attribute {key}")
        except InputError as exc:
            raise _blame(exc, source) from None


def _blame(exc: InputError, source: str | None) -> InputError:
    """``exc`` with ``source`` (a file or flag) in front, unless it already names one."""
    if not source or exc.source is not None or str(exc).startswith(source):
        return exc
    return type(exc)(str(exc), source=source)
