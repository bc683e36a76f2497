"""No head-of-line pause into a relaying GPU or host: relays are flow-controlled per connection.

The head-of-line pass (:mod:`.hol`) pauses the ingress link just before a
held flow's bottleneck, for every flow on it, as PFC pauses a switch ingress
(one FIFO per priority) and as a NIC's buffer stops its PCIe link. An
endpoint that relays (a GPU with ``gpu_forwarding``, a host with
``host_forwarding``: :func:`netsim.topology.routing.relay_kinds`) is not such
a FIFO: what it forwards lands in its memory and is sent on as a new
transfer, and the library's flow control is per connection (NCCL's
per-channel FIFO slots), so a connection held on the onward link slows only
itself. The flow backend therefore never pauses a link *into* a relaying
endpoint; the held flow is still held by the solve. The packet backend's
relay (``RelayEndpoint``) models the same: links into it are never paused
and its egress takes turns between transit and its own connections
(``tests/validation/test_relay_fairness.py``).

Measured (ASTRA-sim ``[Ring, Switch]``, npus ``[4, 2]``, 50 / 25 GB/s,
16 MB ring all-reduce over the 8 GPUs, seed 0): flow 1.306 ms with the pause,
0.977 ms without (the analytic backend's 0.977 ms); packet 0.931 ms (0.886 ms
when it served transit first and paused into the relay). The rest is ECMP,
not the relay: a cross-server hop has two equal-cost relayed paths, picked
by hashing the flow id, and ids follow completion order, which differs
between backends; with every pair's path fixed the three agree (packet
1.094, flow and analytic 1.091 ms).

Left out: the per-connection buffer limit itself (a relayed connection's rate is
its max-min share, its queue in the relay's memory is not bounded).
"""
from __future__ import annotations

from typing import Mapping

from ...topology.routing import relay_kinds


def relay_ingress_links(graph, link_ids: Mapping[tuple, int]) -> frozenset:
    """Ids of the directed links whose head is a relaying endpoint (empty when nothing relays)."""
    kinds = relay_kinds(graph)
    if not kinds:
        return frozenset()
    nodes = graph.nodes
    return frozenset(l for (_, v), l in link_ids.items() if nodes[v].get("kind") in kinds)


def without_relay_pauses(paused: dict, relay_links: frozenset) -> dict:
    """``paused`` (``{link: reduced capacity}``) without the links into relaying endpoints."""
    if not relay_links or not paused:
        return paused
    return {k: c for k, c in paused.items() if k not in relay_links}
