"""The packet: a small slotted object with protocol fields only.

No per-packet process, timer or event: a packet on a link waits in the
link's pipe (``netsim.backends.packet.port``) with its arrival time
``ts_arr``; a delivered data packet is turned into its own ACK.

A packet carries its route as a tuple of egress ports (``route`` and the
index of the next one, ``hop``), so switches do no lookup under ECMP. Under
per-packet spraying ``route`` is ``None`` and each switch picks among its
equal-cost next hops.

Fields deliberately left out: addresses, checksums, options — only what the
protocol state machines read.
"""
from __future__ import annotations

#: packet kinds
DATA, ACK, NACK, CNP = 0, 1, 2, 3
KIND_NAMES = ("data", "ack", "nack", "cnp")

#: number of data priorities: the eight IEEE 802.1p priority code points 0..7 (PFC pauses each apart)
N_DATA_PRIORITIES = 8
#: internal index of the control class (ACK, NACK, CNP): served first, never paused
CONTROL_PRIORITY = N_DATA_PRIORITIES
#: number of priority slots per port: 802.1p priorities 0..7 plus the control class
N_PRIORITIES = N_DATA_PRIORITIES + 1


class Packet:
    """One packet on the wire.

    Attributes
    ----------
    flow : object
        The transport flow it belongs to (sender and receiver state live there).
    kind : int
        :data:`DATA`, :data:`ACK`, :data:`NACK` or :data:`CNP`.
    seq : int
        DATA: byte offset of the first payload byte. ACK/NACK: cumulative
        acknowledgement (next expected byte).
    size : int
        Bytes on the wire, headers included.
    payload : int
        Payload bytes (0 for control packets).
    prio : int
        Priority slot 0..7, or :data:`CONTROL_PRIORITY`.
    ect, ce : bool
        ECN-capable transport; congestion experienced (set by a switch).
    route, hop : tuple, int
        Egress ports from source to destination and index of the next one.
    in_port : Port
        The egress port that last transmitted it (so a node knows its ingress).
    pfc_port : Port | None
        Upstream port whose PFC ingress counter currently holds this packet.
    ts : int
        DATA: send time (ps); ACK: echo of the data packet's ``ts``.
    ece : bool
        ACK: echo of the CE mark of the packet that triggered it.
    rtx : bool
        DATA: this is a retransmission (no RTT sample from it, Karn).
    ts_arr : int
        Arrival time (ps) at the end of the link it is on.
    intl : list | None
        DATA of an algorithm using in-band telemetry (HPCC): one
        :class:`~netsim.transport.telemetry.IntHop` per switch egress so far;
        ``None`` otherwise, and on control packets: an ACK carries the list it
        echoes in ``echo`` instead, so no egress port offers it to the INT hook.
    echo : list | None
        ACK/NACK of a data packet that carried INT: that packet's list, as
        the receiver got it. ``None`` otherwise.
    """

    __slots__ = ("flow", "kind", "seq", "size", "payload", "prio", "ect", "ce",
                 "route", "hop", "in_port", "pfc_port", "ts", "ece", "rtx", "dst", "ts_arr", "intl",
                 "echo")

    def __init__(self, flow, kind: int, seq: int, size: int, payload: int, prio: int, ect: bool,
                 route, dst, ts: int = 0):
        self.flow = flow
        self.kind = kind
        self.seq = seq
        self.size = size
        self.payload = payload
        self.prio = prio
        self.ect = ect
        self.ce = False
        self.route = route
        self.hop = 0
        self.in_port = None
        self.pfc_port = None
        self.ts = ts
        self.ece = False
        self.rtx = False
        self.dst = dst
        self.intl = None
        self.echo = None

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return (f"Packet({KIND_NAMES[self.kind]} flow={getattr(self.flow, 'fid', None)} seq={self.seq} "
                f"size={self.size} prio={self.prio} hop={self.hop})")
