"""Argument checks shared by ``netsim run`` and ``netsim flows``, made before anything is read or simulated.

* the positional files: a directory or a missing file is named by its
  argument (``TOPOLOGY``, ``WORKLOAD``, ``FLOWS``);
* ``--out`` must be a directory, new or existing (an existing regular file is
  named as the culprit, not reported as ``File exists``);
* options a backend cannot honour are errors, never silently ignored:
  the analytic backend has no queues, PFC, ECN, loss or congestion-control
  dynamics (its ``--cc`` only picks each flow's transport, RoCE or TCP), so
  ``--cc-param``, ``--cc-params-file`` and every packet-network ``--set`` key
  other than :data:`ANALYTIC_HONOURS` exit 2; the flow backend rejects the
  packet-network keys of :data:`FLOW_IGNORES`.

Each check raises :class:`~netsim.errors.InputError` (one line, exit 2).
"""
from __future__ import annotations

import os

from ..errors import InputError

#: packet-network ``--set`` keys the analytic backend uses (its own table and ``host.KEY`` aside)
ANALYTIC_HONOURS = ("mtu_bytes", "header_bytes", "roce_priority", "tcp_priority", "host_stack")
#: packet-network ``--set`` keys the flow backend's fluid model never reads (netsim/backends/flow/ has no
#: reference to them): buffers and their sharing, ECN on/off and marking point, PFC thresholds, the egress
#: scheduler, windows, ACK/CNP pacing, retransmission timers, ``routing=spray``, the Jain window and the
#: packet RNG. E.g. ``--set ecn=off`` with DCQCN on a 7->1 incast: packet 1.16 ms, flow unchanged 3.40 ms.
FLOW_IGNORES = ("buffer_bytes", "buffer_mode", "buffer_alpha", "ecn", "ecn_mark_at", "pfc_xoff_bytes",
                "pfc_xon_bytes", "pfc_xoff_above_ecn", "pfc_headroom_bytes", "internal_xoff_bytes",
                "internal_xon_bytes", "scheduler", "dwrr_quantum_bytes", "window_bytes", "roce_ack_every_packets",
                "tcp_delayed_ack_segments", "tcp_delayed_ack_timeout_ns", "cnp_interval_ns", "min_rto_ns",
                "initial_rto_ns", "initial_rto_rtts", "max_rto_ns", "max_timeouts", "random_seed", "routing",
                "jain_start_ns", "jain_window_ns")
BACKENDS = ("packet", "flow", "analytic")


def check_out_dir(path: str, flag: str = "--out") -> None:
    """``--out DIR``: a directory that exists or can be created (not an existing file, not under one)."""
    p = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(p) and not os.path.isdir(p):
        raise InputError("is an existing file, not a directory", where=f"{flag} {path}",
                         accepted="a directory for the run's outputs (new or existing)")
    parent = p
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InputError(f"cannot create a directory under the file {parent}", where=f"{flag} {path}",
                         accepted="a directory path that is not below an existing file")


def check_input_file(path: str, arg: str, what: str, *, builder_ok: bool = False, noun: str = "file") -> None:
    """A positional input is a readable regular file (or, with ``builder_ok``, may be a builder expression)."""
    p = os.path.expanduser(path)
    if os.path.isdir(p):
        raise InputError("is a directory", where=f"{arg} {path}", accepted=what)
    if os.path.exists(p) and not os.path.isfile(p):
        raise InputError("is not a regular file", where=f"{arg} {path}", accepted=what)
    if not os.path.exists(p) and not builder_ok:
        raise InputError(f"{noun} not found", where=f"{arg} {path}", accepted=what)


def check_backend_options(args, *, command: str) -> None:
    """Reject what ``args.backend`` cannot honour (see module docstring)."""
    backend = args.backend
    if backend not in BACKENDS:
        return  # create_backend names the accepted backends
    if backend == "flow":
        for item in args.set:
            key = item.split("=", 1)[0].strip()
            if key.split(".", 1)[0] in FLOW_IGNORES:
                raise InputError("--backend flow cannot honour it (its fluid model has no such mechanism)",
                                 where=f"--set {key}", value=item.split("=", 1)[1] if "=" in item else None,
                                 accepted="--backend packet for this parameter, or no --set "
                                          f"{key.split('.', 1)[0]} with --backend flow (see netsim defaults)")
        return
    if backend != "analytic":
        return
    why = "--backend analytic cannot honour it (no congestion-control dynamics; --cc only picks the transport)"
    if args.cc_param:
        raise InputError(why, where=f"--cc-param {args.cc_param[0]}",
                         accepted="no --cc-param with --backend analytic, or --backend packet or flow")
    if args.cc_params_file:
        raise InputError(why, where=f"--cc-params-file {args.cc_params_file}",
                         accepted="no --cc-params-file with --backend analytic, or --backend packet or flow")
    try:
        from ..backends.analytic import ANALYTIC_PARAMS
        from ..network.params import SIM_PARAMS
    except ImportError:  # pragma: no cover
        return
    for item in args.set:
        key = item.split("=", 1)[0].strip()
        base = key.split(".", 1)[0]
        if key.startswith("host.") or key in ANALYTIC_PARAMS or base not in SIM_PARAMS:
            continue  # host stack, the analytic table, or unknown (named by the parameter check)
        if base not in ANALYTIC_HONOURS:
            raise InputError("--backend analytic cannot honour it (no queues, PFC, ECN, loss or "
                             "congestion control)", where=f"--set {key}",
                             value=item.split("=", 1)[1] if "=" in item else None,
                             accepted="with --backend analytic: " + ", ".join(list(ANALYTIC_PARAMS.params)
                                                                              + list(ANALYTIC_HONOURS[2:]))
                             + ", host.KEY; or --backend packet or flow")
