"""In-band network telemetry (INT) as HPCC uses it: one record per switch hop.

Modelled: a data packet of an algorithm that asks for INT (``wants_int``)
carries a list ``pkt.intl``; every *switch* egress port that transmits it
appends a record in the layout of :class:`IntHop` (a plain 5-tuple;
``IntHop`` names its fields) — the port's queue length after the dequeue
(bytes, all priorities), the bytes the port has transmitted so far
(including this packet), the time (ps) and the link rate (bit/s) — as the
HPCC switch does at dequeue (Li et al., SIGCOMM'19 §4.1; HPCC ns-3
``SwitchNode::SwitchNotifyDequeue``). The receiver's ACK reuses the data
packet (:meth:`netsim.transport.flow.Flow.send_control`) and moves the
list to its ``echo`` field, so it is echoed to the sender unchanged and the
reverse path does not stamp it. Host NIC ports do not stamp (the sender's
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

from operator import itemgetter


_new = tuple.__new__
#: The packet backend stamps a hop as the plain tuple ``(port, qlen, tx, ts, rate)`` where a switch
#: egress starts a transmission (:class:`IntHop` is its layout with names): a plain tuple comes from
#: CPython's free list and unpacks on the specialised path on every ACK; an ``IntHop`` instance (a
#: tuple subclass) costs an allocation, a slower deallocation and a generic unpack.

#: bytes of one INT hop record in HPCC's ns-3 ``IntHop`` (a 64-bit word: rate, time, bytes, queue)
INT_HOP_BYTES = 8
#: bytes of the hop counter in HPCC's ns-3 ``IntHeader`` (``uint16_t nhop``)
INT_COUNT_BYTES = 2


def int_header_bytes(max_hops: int) -> int:
    """Bytes the INT header adds to a data packet or ACK with ``max_hops`` hop slots."""
    return INT_COUNT_BYTES + INT_HOP_BYTES * int(max_hops)


class IntHop(tuple):
    """One switch hop's telemetry, as stamped at its egress: ``(port, qlen_bytes, tx_bytes, ts_ps, rate_bps)``.

    The layout of a record, with named fields (tests and readers build records with it); the
    packet backend stamps plain tuples of the same layout, which HPCC unpacks on every ACK.

    >>> h = IntHop("p", 1500, 9000, 10, 100e9)
    >>> h == ("p", 1500, 9000, 10, 100e9), h.qlen_bytes, h.ts_ps
    (True, 1500, 10)
    """

    __slots__ = ()

    def __new__(cls, port, qlen_bytes: int, tx_bytes: int, ts_ps: int, rate_bps: float):
        return _new(cls, (port, qlen_bytes, tx_bytes, ts_ps, rate_bps))

    #: the egress port (identity of the link, for matching hops)
    port = property(itemgetter(0))
    #: egress queue after this packet's dequeue, bytes
    qlen_bytes = property(itemgetter(1))
    #: bytes this port has sent (every packet), this one included
    tx_bytes = property(itemgetter(2))
    #: stamp time, ps
    ts_ps = property(itemgetter(3))
    #: link rate, bit/s
    rate_bps = property(itemgetter(4))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"IntHop(q={self[1]} tx={self[2]} ts={self[3]} B={self[4]:g})"
