"""In-network reduction on the packet backend: a reducing switch terminates and originates transport flows.

NVLS (NVSwitch ``multimem`` reduction) and CollNet/SHARP reduce inside a
switch (a node with ``nvls: true`` or ``sharp: true``). The collectives code
(:mod:`netsim.collectives.nvls`, :mod:`netsim.collectives.collnet`) is the
same on every backend: it calls ``send_in_network(gpu, switch, nbytes)`` for
each contribution and ``send_in_network(switch, gpu, nbytes)`` for each
reduced or multicast chunk, and joins on the arrivals (the reduction of a
chunk completes when all of its contributions have arrived). This module
makes a switch able to be such an end on the packet network:

* **the switch terminates the transport**: a data packet whose route is used
  up at the switch (or, sprayed, whose ``dst`` is the switch) is handed to its
  flow's receiver there, which acknowledges it from the switch's egress port
  towards the sender (RoCE ACK/NACK/CNP, or TCP's ACKs), exactly as a GPU's
  NIC would; ACKs of flows the switch sends end there too;
* **the switch originates flows**: its egress ports get the round robin of
  sending flows every endpoint port has (window, pacing and PFC honoured), so
  a reduced chunk leaves the switch as one transport flow per destination;
* **multicast down** is per-port copies at the switch egress: the
  collectives send the chunk once up to the switch and then once down each
  destination's port, so each GPU's down link carries the chunk once and no
  port carries it twice (the copies share no egress, so they never queue
  behind each other).

Everything else at the switch is unchanged: packets in transit (ring flows
through the NVSwitch, other servers' traffic through a rail switch) are
forwarded as before, with the same buffer, PFC and ECN. A switch is
enabled on the first in-network send that names it, so a run without
in-network collectives keeps the fast arrival path at every port.

A terminated packet takes no buffer or PFC ingress count at the switch (it is
consumed on arrival, as at a GPU), and a chunk leaves the switch only once all
of it has arrived (the collectives' join: store and forward per chunk, on
every backend). An inner hop of a SHARP tree (leaf to spine) is a flow
between two enabled switches.

Left out: the reduction's arithmetic time and the switch's reduction-buffer
limit (a chunk is reduced the instant its last contribution has arrived),
SHARP's limited concurrent aggregation trees, one transport stream
replicated in the switch with a combined acknowledgement (each copy is its
own flow with its own ACK clock, on its own port), and in-network flows
rerouted by a link failure.
"""
from __future__ import annotations

from collections import deque

from ...errors import InputError
from .node import ENDPOINT_KINDS, Endpoint, Forwarder


class InNetworkSwitches:
    """The reducing switches of one packet :class:`~.network.Network` made able to end and start flows."""

    def __init__(self, net):
        self.net = net
        #: names of the switches enabled so far
        self.enabled: set = set()

    def enable(self, name) -> None:
        """Let switch ``name`` terminate and originate transport flows from now on (idempotent).

        Raises
        ------
        InputError
            ``name`` is not a forwarding node of this network.
        """
        if name in self.enabled:
            return
        net = self.net
        node = net.nodes.get(name)
        if not isinstance(node, Forwarder):
            raise InputError("an in-network transfer ends at a switch", where="in-network flow", value=name,
                             accepted="a switch or NVSwitch with nvls: true or sharp: true")
        for port in node.ports.values():        # egress: the switch's sending flows, round robin
            if port.ring is None:
                port.ring = deque()
                if not port.touched:            # endpoint ports are not queue-sampled: keep this one
                    port.touched = True
                    net.touched_ports.append(port)
        receive = _terminating_receive(node)
        for nbr in node.ports:                  # ingress: every arrival passes the switch's own receive
            port = net.ports[(nbr, name)]
            port.recv = receive
            generic = (port._arrive, net.drive_cb)
            if port.down:
                continue                        # a failed link drops everything: keep its black hole
            if port.wd is not None and port.wd[3] is not None:
                port.wd[3] = generic            # stormed by the PFC watchdog: restore to the generic path
            else:
                port.use_generic_arrival()
                if port.pipe:
                    port._pipe_ev.callbacks = port.pipe_cbs
        self.enabled.add(name)


def _terminating_receive(node: Forwarder):
    """``receive(pkt)`` of ``node``: the flow's end when its route is used up there, else forwarding."""
    name = node.name
    forward = node.receive

    def receive(pkt) -> None:
        route = pkt.route
        if (pkt.hop >= len(route)) if route is not None else (pkt.dst == name):
            Endpoint.receive(node, pkt)
        else:
            forward(pkt)
    return receive


def switch_ends(graph, src, dst) -> tuple:
    """The switch ends of an in-network transfer ``src -> dst`` (those that are not a gpu or host)."""
    return tuple(x for x in (src, dst) if graph.nodes[x].get("kind") not in ENDPOINT_KINDS)
