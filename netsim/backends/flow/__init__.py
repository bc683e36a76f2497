"""Flow-level (fluid) backend, event-driven (``--backend flow``).

A fluid model of the network: flows share directed links by max-min or
ingress-port (PFC) fairness, rates change only when a flow starts or ends,
and congestion control is a model (efficiency, cap, slow-start ramp; DCQCN
its own rate law on fluid FIFO queues). Left out: packets, drops, queueing
delay outside the DCQCN model (whose FIFO wait is in the FCT), priorities (classes are not isolated) — see
docs/flow-backend.md. Importing this package registers the ``flow`` backend
factory. Modules, by part:

The fluid network
    :mod:`.backend` — the seam: ``send`` builds a flow and hands it to the fluid network; ``stats``.
    :mod:`.batch` — ``send_batch``: a collective step's transfers started in one call, arrivals grouped per instant.
    :mod:`.newflow` — one flow built from its send (path info, constants, ECMP key, controller): shared by both.
    :mod:`.fluid` — the fluid network: links, active flows, completion heap, the settle of an instant.
    :mod:`.completions` — a completion instant: flows off their links, records, which departures need no solve.
    :mod:`.components` — connected components of flows, arrivals that need no solve; the flow record.
    :mod:`.paths` — the path table: routes, CC models, per-path constants (wire bytes, ideal FCT, latency, caps).
    :mod:`.linkchange` — link changes: ``set_link_rate`` / ``fail_link`` during a run.
    :mod:`.settings` — the backend's parameters, network parameters, path record, ideal FCT.

The rate solver
    :mod:`.solver` — one component's rates: memo, max-min or port fairness, head-of-line pass.
    :mod:`.maxmin` — the one max-min solver (vectorized progressive filling) and link numbering.
    :mod:`.portfair` — ingress-port fairness: the fixed point, warm start, feasibility.
    :mod:`.portround` — the round loop of the port-fair fixed point.
    :mod:`.portplan` — integer-indexed groups of shared links the round loop runs on.
    :mod:`.portproblem` — the link structure of one component (incidence, flatness, trees).
    :mod:`.porttree` — path-prefix trees, their hierarchical split and offers.
    :mod:`.flatoffer` — offers of a flat tree (two and three flows unrolled).
    :mod:`.hol` — PFC head-of-line blocking as a post-pass (paused ingress capacities).
    :mod:`.relayhol` — no head-of-line pause into a relaying GPU or host (per-connection flow control).
    :mod:`.pausegate` — pauses only where a window-limited standing queue reaches XOFF.
    :mod:`.inorder` — a connection's flows leave the sender in post order (one queue pair's FIFO).

Rate controllers
    :mod:`.controllers` — the one hook of every rate controller, the static ones (CC model, host stack), the registry.
    :mod:`.ccmodel` — congestion control as efficiency, cap and slow-start ramp (the static models).
    :mod:`.dcqcnhooks` — fluid DCQCN as a rate controller the backend owns (admit, release, ticks).
    :mod:`.dcqcnfluid` — DCQCN's reaction points driven by fluid queues, CNPs.
    :mod:`.dcqcntrace` — the fluid DCQCN model's approximate queue, PFC and cc trace rows.
    :mod:`.fifo` — fluid FIFO queues with per-ingress PFC.
    :mod:`.fifoqueue` — one switch egress's fluid FIFO (segments of bytes per flow).
    :mod:`.queueing` — the FIFO wait a DCQCN flow's last byte still owes at its fluid completion.
    :mod:`.hpccflow` — HPCC's rate alone on a path (η less the INT header), the ``hpcc`` model's cap.

Calibration against the packet backend and the agreement scenarios are not
installed: ``tools/flow_calibrate.py`` and ``tests/validation/flow_scenarios.py``
in a checkout; ``tools/flow_golden.py`` checks outputs byte-for-byte between two
checkouts.
"""
from .backend import FlowBackend, create_flow_backend  # noqa: F401  (registers "flow")
from .settings import FLOW_PARAMS  # noqa: F401
