"""In-band network telemetry (INT) as HPCC uses it: one record per switch hop.

Modelled: a data packet of an algorithm that asks for INT (``wants_int``)
carries a list ``pkt.intl``; every *switch* egress port that transmits it
appends an :class:`IntHop` — the port's queue length after the dequeue
(bytes, all priorities), the bytes the port has transmitted so far
(including this packet), the time (ps) and the link rate (bit/s) — as the
HPCC switch does at dequeue (Li et al., SIGCOMM'19 §4.1; HPCC ns-3
``SwitchNode::SwitchNotifyDequeue``). The receiver's ACK reuses the data
packet (:meth:`netsim.transport.flow.Flow.send_control`), so the list is
echoed to the sender unchanged. Host NIC ports do not stamp (the sender's
own NIC is never the bottleneck it reacts to; HPCC's NICs do not either).

The wire cost is the INT header carried by data packets and their ACKs:
:func:`int_header_bytes` (HPCC ns-3 ``IntHeader``: 8 bytes per hop slot,
``max_hops`` slots, plus a 2-byte hop count), paid out of the payload so a
packet never exceeds the MTU.

The transmitted-bytes field is the port's ``tx_bytes`` counter: every byte
the egress has started sending — data of any algorithm, ACKs, CNPs — as a
switch's port counter (HPCC ns-3 ``txBytes`` of the egress device), so
HPCC sees the true utilisation when it shares a link with other traffic.

Left out: counter wrap-around and the field widths of the real header
(values are exact here).

>>> int_header_bytes(5)
42
"""
from __future__ import annotations

from .packet import DATA

#: bytes of one INT hop record in HPCC's ns-3 ``IntHop`` (a 64-bit word: rate, time, bytes, queue)
INT_HOP_BYTES = 8
#: bytes of the hop counter in HPCC's ns-3 ``IntHeader`` (``uint16_t nhop``)
INT_COUNT_BYTES = 2


def int_header_bytes(max_hops: int) -> int:
    """Bytes the INT header adds to a data packet or ACK with ``max_hops`` hop slots."""
    return INT_COUNT_BYTES + INT_HOP_BYTES * int(max_hops)


class IntHop:
    """One switch hop's telemetry, as stamped at its egress."""

    __slots__ = ("port", "qlen_bytes", "tx_bytes", "ts_ps", "rate_bps")

    def __init__(self, port, qlen_bytes: int, tx_bytes: int, ts_ps: int, rate_bps: float):
        self.port = port              #: the egress port (identity of the link, for matching hops)
        self.qlen_bytes = qlen_bytes  #: egress queue after this packet's dequeue, bytes
        self.tx_bytes = tx_bytes      #: bytes this port has sent (every packet), this one included
        self.ts_ps = ts_ps            #: stamp time, ps
        self.rate_bps = rate_bps      #: link rate, bit/s

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"IntHop(q={self.qlen_bytes} tx={self.tx_bytes} ts={self.ts_ps} B={self.rate_bps:g})"


def stamp(port, pkt, now_ps: int) -> None:
    """Egress hook: ``port`` starts transmitting ``pkt`` at ``now_ps``; append its hop if a switch.

    Called by the packet backend's egress port for every packet whose
    ``intl`` is not ``None`` (the one line of the hook); ACKs carrying an
    echo and packets leaving a host NIC are left alone.
    """
    if pkt.kind != DATA or not hasattr(port.node, "admit"):   # only forwarding nodes (switches) stamp
        return
    # the port's own counter of every byte it sent (``tx_bytes``, counted after this hook) plus this packet
    pkt.intl.append(IntHop(port, port.qtotal, port.tx_bytes + pkt.size, now_ps, port.rate_bps))
