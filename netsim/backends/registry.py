"""The backend registry: capability names, registered backends and the flags a backend must honour.

Models what is known of a backend before one is built: the abilities a
backend class may declare beyond ``send`` (:data:`CAPABILITIES`), the
factories registered under ``--backend NAME`` with their capabilities and
``--set`` resolver (:func:`register_backend`), the shipped backends imported
on demand (only the one a run uses), and the command-line flags that need a
capability (:data:`FLAG_NEEDS`, :func:`check_flags`: exit 2 with one line
naming the flag, the backend and the backends that accept it).  Leaves out
the seam itself (:class:`netsim.backends.base.Backend`) and building a
backend (:func:`netsim.backends.base.create_backend`).
"""
from __future__ import annotations

from typing import Any, Iterable

from . import BUILTIN_BACKENDS

#: honours ``backend.host_stack`` (a :class:`netsim.hoststack.HostStack`, set before the first send)
HOST_STACK = "host_stack"
#: implements ``set_link_rate(a, b, rate_bps)`` and ``fail_link(a, b)`` (the :mod:`netsim.whatif` protocol)
LINK_CHANGES = "link_changes"
#: measures each flow's last-ACK time for HPCC ns-3's ``fct.txt`` when built with ``hpcc_fct=True``
#: (``hpcc_ack_fct_ns``); every backend writes ``fct.txt`` (:mod:`netsim.hpccfct`), the others from FCT + one ACK
HPCC_FCT = "hpcc_fct"
#: exposes ``router`` (the :class:`netsim.topology.Router` its flows follow)
ROUTER = "router"
#: implements ``send_in_network``: flows that end or start at a reducing switch (NVLS, SHARP; issue 20)
IN_NETWORK = "in_network"
#: implements ``send_in_order(connection, src, dst, size_bytes, tag, *, in_network=False, priority=None)``:
#: a connection's (queue pair's) flows leave in post order, each after the previous one's last byte
IN_ORDER = "in_order"
#: writes ``queues.csv`` / ``pfc.csv`` / ``cc.csv`` rows to the matching sinks
QUEUE_TRACE, PFC_TRACE, CC_TRACE = "queue_trace", "pfc_trace", "cc_trace"

#: skips steady states of its packet network (``--fast-forward on``; netsim.backends.packet.fastforward)
FAST_FORWARD = "fast_forward"
#: replays collectives repeated from an empty network exactly (``--memo on``; netsim.backends.packet.memo)
MEMO = "memo"
#: shares only each flow's pacing link (the first lowest-rate link of its path) among the flows paced
#: there; contention on every other link (incast at a receiver, shared fabric links) is not modelled:
#: ``netsim flows`` and cluster summaries say ``"contention": PACING_LINK_ONLY`` (netsim.simulate)
NO_FABRIC_CONTENTION = "no_fabric_contention"
#: ``summary.json`` ``contention`` of such a backend's runs with two or more traffic sources
PACING_LINK_ONLY = "pacing link only"

#: every capability a backend may declare, with its meaning
CAPABILITIES = {
    HOST_STACK: "host-stack cost model: per-message delay, per-connection rate cap",
    LINK_CHANGES: "link degrade/failure during a run: set_link_rate, fail_link",
    HPCC_FCT: "measured last-ACK times for HPCC ns-3 fct.txt (hpcc_ack_fct_ns)",
    ROUTER: "the router its flows follow: router",
    QUEUE_TRACE: "queues.csv samples",
    PFC_TRACE: "pfc.csv pause/resume events",
    CC_TRACE: "cc.csv congestion-control samples",
    IN_NETWORK: "flows to/from a switch that reduces in-network (nvls/sharp): send_in_network",
    IN_ORDER: "a connection's flows sent in post order: send_in_order",
    FAST_FORWARD: "packet-level steady-state fast-forward",
    MEMO: "exact replay of a collective repeated from an empty network (memo)",
    NO_FABRIC_CONTENTION: "shares only each flow's pacing link (first lowest-rate link of its path); no other "
                          "contention (summaries say contention: pacing link only)",
}

#: command-line flag -> the capability a backend needs to honour it
FLAG_NEEDS = {"--degrade-link": LINK_CHANGES, "--fail-link": LINK_CHANGES, "--fast-forward": FAST_FORWARD,
             "--memo": MEMO}


#: name -> factory(graph, *, env, params, seed, cc, cc_params, sinks, **options) -> Backend
BACKENDS: dict[str, Any] = {}
#: name -> the capabilities its backend class declares
BACKEND_CAPABILITIES: dict[str, frozenset[str]] = {}
#: name -> its ``--set`` resolver: network-parameter overrides -> resolved dict (InputError when bad)
BACKEND_PARAMS: dict[str, Any] = {}


def register_backend(name: str, capabilities: Iterable[str] = (), *, params=None):
    """Decorator registering a backend factory under ``--backend NAME``.

    ``capabilities``: what the backend honours (names in :data:`CAPABILITIES`);
    ``params``: its ``--set`` resolver (default
    :func:`netsim.network.params.resolve_params`).
    """
    caps = frozenset(capabilities)
    unknown = caps - set(CAPABILITIES)
    if unknown:
        raise ValueError(f"backend {name}: unknown capabilities {sorted(unknown)}")

    def deco(factory):
        from ..network.params import resolve_params
        BACKENDS[name] = factory
        BACKEND_CAPABILITIES[name] = caps
        BACKEND_PARAMS[name] = params or resolve_params
        return factory
    return deco


def _load_backends(name: str | None = None) -> None:
    """Import the shipped backend ``name`` (all of them when ``name`` is None or not a shipped one).

    A run imports only the backend it uses: importing the others cost a flow
    run about 0.1 s of start-up (``python -X importtime``).
    """
    import importlib
    if name in BACKENDS:
        return
    for mod in ((name,) if name in BUILTIN_BACKENDS else BUILTIN_BACKENDS):
        try:
            importlib.import_module(f"{__package__}.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{mod}":
                raise


def backend_capabilities(name: str) -> frozenset[str]:
    """Capabilities of the backend registered as ``name`` (:class:`InputError` if there is none)."""
    from ..errors import InputError
    _load_backends(name)
    if name not in BACKENDS:
        _load_backends()
        raise InputError("unknown backend", where="--backend", value=name,
                         accepted="one of " + ", ".join(sorted(BACKENDS)))
    return BACKEND_CAPABILITIES[name]


def resolve_backend_params(name: str, params: dict | None) -> dict:
    """``--set`` network overrides (no ``host.*`` keys) resolved by backend ``name``'s own table."""
    backend_capabilities(name)
    return BACKEND_PARAMS[name](dict(params or {}))


def check_flags(name: str, flags: Iterable[str]) -> None:
    """Reject up front a command-line flag the backend ``name`` cannot honour (table :data:`FLAG_NEEDS`).

    Raises
    ------
    InputError
        ``FLAG: not supported by the NAME backend (...); expected --backend A or B``.
    """
    from ..errors import InputError
    caps = backend_capabilities(name)
    for flag in flags:
        need = FLAG_NEEDS[flag]
        if need not in caps:
            _load_backends()
            able = sorted(n for n, c in BACKEND_CAPABILITIES.items() if need in c)
            raise InputError(f"not supported by the {name} backend ({CAPABILITIES[need]})", where=flag,
                             value=name, accepted=("--backend " + " or ".join(able)) if able else "no backend")
