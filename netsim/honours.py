"""Which packet-network parameters the flow and analytic backends honour, and the check that rejects the rest.

Every ``--set`` key (and every node attribute that overrides one) either
changes a backend's answer the way it changes the packet backend's, or is an
error on that backend (:class:`~netsim.errors.InputError`: exit 2, one line
naming ``--set`` or the topology file and node, the key, the backend and what
is accepted). :func:`netsim.checks.check_network_params` calls
:func:`check_honoured`, so the CLI (``netsim flows``, ``netsim run``, sweeps)
and the Python API (``run_flows``, ``run_training``) reject alike.

What the flow backend honours (docs/flow-backend.md, "Parameters"): MTU,
header and ACK sizes, the priorities of RoCE and TCP, the host stack, the
ECN thresholds (Kmin, Kmax, Pmax, also ``NAME.P``) through its fluid DCQCN
marking, and the trace sampling periods. It models one fabric: RoCE lossless
under PFC, TCP lossy. So ``pfc=off``, a ``lossless_priorities`` or a
``roce_priority`` / ``tcp_priority`` that makes RoCE lossy or TCP lossless
(the packet backend then drops and retransmits) are rejected, as are the keys
of :data:`FLOW_IGNORES`, which it never reads. The analytic backend honours
:data:`ANALYTIC_HONOURS` only (no PFC, ECN or loss at all: its priorities
only label the flows); node attributes are not checked on it (it models
no switch: a topology's switch attributes describe hardware it abstracts away).

On the flow backend the ECN thresholds are read by its fluid DCQCN only, so
:func:`check_flow_ecn` refuses them when no flow of the run uses DCQCN.

Left out: congestion-control parameters (``--cc-param``), checked by the CLI
(``netsim/cli/args.py``) and by :func:`netsim.transport.cc.config.resolve_cc_params`.
"""
from __future__ import annotations

from .errors import InputError

#: packet-network ``--set`` keys the analytic backend uses (its own table and ``host.KEY`` aside)
ANALYTIC_HONOURS = ("mtu_bytes", "header_bytes", "roce_priority", "tcp_priority", "host_stack")
#: packet-network ``--set`` keys the flow backend's fluid model never reads (netsim/backends/flow/ has no
#: reference to them): buffer sharing, ECN on/off and marking point, PFC XON offsets and headroom, the egress
#: scheduler, ACK/CNP pacing, retransmission timers, ``routing=spray``, the Jain window and the packet RNG.
#: E.g. ``--set ecn=off`` with DCQCN on a 7->1 incast: packet 1.16 ms, flow unchanged 3.40 ms.
#: Read (not here): ``window_bytes`` and the static XOFF/XON thresholds, by the pause gate of window-limited
#: lossless flows (netsim/backends/flow/pausegate.py through netsim/network/pfcxoff.py); the dynamic
#: threshold's inputs are refused with ``pfc_threshold`` itself (the fluid model has no shared buffer).
FLOW_IGNORES = ("buffer_bytes", "buffer_mode", "buffer_alpha", "ecn", "ecn_mark_at",
                "pfc_xoff_above_ecn", "pfc_headroom_bytes",
                "scheduler", "dwrr_quantum_bytes", "roce_ack_every_packets",
                "tcp_delayed_ack_segments", "tcp_delayed_ack_timeout_ns", "cnp_interval_ns", "min_rto_ns",
                "initial_rto_ns", "initial_rto_rtts", "max_rto_ns", "max_timeouts", "random_seed", "routing",
                "jain_start_ns", "jain_window_ns",
                # PFC as switches do it (packet backend only: its switch MMU, docs/packet.md)
                "pfc_threshold", "pfc_dynamic_alpha", "pfc_dynamic_xon_offset_bytes", "pfc_deadlock_detect_ns",
                "pfc_watchdog", "pfc_watchdog_detection_ns", "pfc_watchdog_restoration_ns", "pfc_watchdog_action",
                # packet-level steady-state skipping (issue #21): the fluid model has no packets to skip
                "fast_forward", "fast_forward_tolerance",
                "fast_forward_cycle_tolerance", "memo")
#: ECN thresholds: the flow backend's fluid DCQCN marks with them; its other algorithms do not mark
FLOW_DCQCN_ONLY = ("ecn_kmin_bytes", "ecn_kmax_bytes", "ecn_pmax")
#: congestion controls whose flow-backend model reads :data:`FLOW_DCQCN_ONLY` (the fluid DCQCN marking,
#: netsim/backends/flow/dcqcnfluid.py); cubic, dctcp, hpcc, swift and none are fixed efficiencies there
FLOW_ECN_READERS = ("dcqcn",)
#: keys that decide which class is lossless (the flow and analytic backends model RoCE lossless, TCP lossy)
LOSSLESS_KEYS = ("pfc", "lossless_priorities", "roce_priority", "tcp_priority")
_LOSSLESS_WHY = ("models lossless RoCE under PFC and lossy TCP only (no drops or retransmissions of a "
                 "lossy RoCE class, no lossless TCP)")


def check_honoured(backend: str, params: dict | None, graph=None, *, source: str | None = None) -> None:
    """Reject every ``--set`` key (and, with ``graph``, node attribute) ``backend`` cannot honour.

    Raises
    ------
    InputError
        One line: ``--set KEY`` (or ``source: node N, attribute KEY``), the backend, the value, what is accepted.
    """
    if backend not in ("flow", "analytic"):
        return
    from .network.params import SIM_PARAMS
    keys = {k: v for k, v in (params or {}).items() if not k.startswith("host.")}
    for key, value in keys.items():
        base = key.split(".", 1)[0]
        if base not in SIM_PARAMS or (backend == "flow" and base in LOSSLESS_KEYS):
            continue  # unknown names are the parameter check's; flow's lossless rule is below
        if backend == "flow" and base in FLOW_IGNORES:
            raise InputError("--backend flow cannot honour it (its fluid model has no such mechanism)",
                             where=f"--set {key}", value=value,
                             accepted=f"--backend packet for this parameter, or no --set {base} with --backend "
                                      "flow (see netsim defaults)")
        if backend == "analytic" and base not in ANALYTIC_HONOURS:
            from .backends.analytic import ANALYTIC_PARAMS
            if key in ANALYTIC_PARAMS:
                continue
            raise _analytic_error(f"--set {key}", value)
    if backend == "flow":
        _check_lossless(backend, keys, "--set {key}")
    if graph is not None and backend == "flow":
        _check_nodes(backend, graph, source)   # analytic: a topology's switch attributes describe what it has not
    if graph is not None:
        _check_loss(backend, graph, source)


def check_flow_ecn(sets: dict, ccs) -> None:
    """Flow backend: ``--set`` ECN thresholds when no flow of the run uses a congestion control whose
    fluid model marks (:data:`FLOW_ECN_READERS`) are an error: they would change nothing, while the
    packet backend's marking moves with them.  ``ccs``: ``--cc`` and any flow file's ``cc`` column values.
    """
    used = sorted({str(c) for c in ccs if c})
    if any(c in FLOW_ECN_READERS for c in used):
        return
    for key, value in sets.items():
        if key.split(".", 1)[0] in FLOW_DCQCN_ONLY:
            names = "/".join(used) or "none"
            why = ("its DCTCP is a fixed efficiency, no marking" if used == ["dctcp"]
                   else f"its {names} model reads no ECN threshold")
            raise InputError(f"--backend flow cannot honour it with --cc {names} ({why}; only its fluid DCQCN "
                             "marks)", where=f"--set {key}", value=value,
                             accepted="--cc dcqcn (or a flow file's cc column dcqcn) on flow, or --backend packet "
                                      "for this cc's marking")


def _check_loss(backend: str, graph, source: str | None) -> None:
    """A link with random loss (``error_rate`` > 0, from HPCC files) is modelled by the packet backend only."""
    for u, v, d in sorted(graph.edges(data=True), key=lambda e: (str(e[0]), str(e[1]))):
        if d.get("error_rate", 0):
            prefix = f"{source}: " if source else ""
            raise InputError(f"--backend {backend} cannot honour it (no packets to lose, no retransmissions)",
                             where=f"{prefix}link {u} -- {v}, field error_rate", value=d["error_rate"],
                             accepted="--backend packet, or error_rate 0 on every link")


def _check_lossless(backend: str, over: dict, where: str) -> None:
    """RoCE's priority lossless and TCP's lossy once ``over`` applies to the defaults, else an error."""
    from .network.params import SIM_PARAMS, lossless_set, parse_override
    given = [k for k in LOSSLESS_KEYS if k in over]
    if not given:
        return
    p = SIM_PARAMS.defaults()
    try:
        for k in given:
            p[k] = parse_override(k, over[k])
        ll = lossless_set(p)
    except InputError:
        return  # a bad value: the parameter check (netsim.checks) names it with its flag
    if int(p["roce_priority"]) in ll and int(p["tcp_priority"]) not in ll:
        return
    key = given[0]
    raise InputError(f"--backend {backend} cannot honour it: it {_LOSSLESS_WHY}", where=where.format(key=key),
                     value=over[key], accepted=f"pfc=on with roce_priority in lossless_priorities and tcp_priority "
                                               f"not in it on --backend {backend}; or --backend packet")


def _analytic_error(where: str, value) -> InputError:
    from .backends.analytic import ANALYTIC_PARAMS
    return InputError("--backend analytic cannot honour it (no queues, PFC, ECN, loss or congestion control)",
                      where=where, value=value,
                      accepted="with --backend analytic: " + ", ".join(list(ANALYTIC_PARAMS.params)
                                                                       + list(ANALYTIC_HONOURS[2:]))
                      + ", host.KEY; or --backend packet or flow")


def _check_nodes(backend: str, graph, source: str | None) -> None:
    """Flow backend: a flow-ignored key, or a lossless-class change, as any node's attribute is an error."""
    from .network.params import node_overrides
    for name in sorted(graph.nodes, key=str):
        over = node_overrides(graph.nodes[name], node=name)
        prefix = f"{source}: " if source else ""
        for key in over:
            base = key.split(".", 1)[0]
            if base in LOSSLESS_KEYS:
                continue
            if base in FLOW_IGNORES:
                raise InputError(f"--backend {backend} cannot honour this attribute",
                                 where=f"{prefix}node {name}, attribute {key}", value=graph.nodes[name][key],
                                 accepted=f"--backend packet, or no {key} attribute with --backend {backend}")
        _check_lossless(backend, over, f"{prefix}node {name}, attribute {{key}}")
