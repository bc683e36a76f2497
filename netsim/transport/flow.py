"""Reliable-transport state shared by the TCP and RoCE flavours.

A :class:`Flow` holds both ends of one flow: the sender (sequence numbers,
window/pacing from its :class:`~netsim.transport.cc.base.CongestionControl`,
the single retransmit timer) and the receiver (next expected byte, CNP
generation). Subclasses :class:`~netsim.transport.tcp.TcpFlow` and
:class:`~netsim.transport.roce.RoceFlow` implement ``on_data`` (receiver),
``on_ack`` (sender) and ``on_timeout``.

The sender never queues data packets: the NIC (the endpoint's egress port)
pulls :meth:`next_packet` round robin over its sending flows whenever the wire
is free, after :meth:`ready` says the window allows it, and not before
``next_tx`` (pacing at ``cc.rate_bps``, and at most one payload byte per
``cap_ps_per_byte`` when a host-stack rate cap applies). Sequence numbers count payload bytes;
segment boundaries are fixed multiples of the MSS, so a retransmission is the
same segment as the original.

Hooks called on the congestion control (each preceded by ``advance(now_ns)``):
``on_send`` for every data packet handed to the NIC (originals and
retransmissions), ``on_ack`` for every ACK that advances the cumulative
acknowledgement, ``on_loss`` once when a loss episode starts (3 dupacks for
TCP, a NACK for RoCE), ``on_recovery_end`` when the episode's last byte is
acknowledged, ``on_timeout`` on a retransmit timeout, ``on_cnp`` for each CNP.
Two optional ones: an algorithm with ``wants_int`` (HPCC) gets an INT list on
its data packets (``int_bytes`` of header, paid out of the payload) and
``on_telemetry`` for each echoing ACK (:mod:`.roce`); one with ``set_path``
(Swift) is told the number of links of its forward route at the start (0
under per-packet spraying, where the route is not fixed).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from heapq import heappush

from .packet import CONTROL_PRIORITY, DATA, Packet
from .rto import RtoEstimator
from .timers import NORMAL, RetransmitTimer, _PaceTick, _pace_fire

class Flow(RetransmitTimer, ABC):
    """Sender and receiver state of one flow (see module docstring)."""

    transport = "base"
    #: ACKs echo the CE mark of the data packet that triggered them (TCP ECE)
    echo_ce = False

    def __init__(self, net, fid: int, src, dst, size_bytes: int, cc, cc_name: str, prio: int, *,
                 route, rroute, port, rport, mss_bytes: int, header_bytes: int, ack_bytes: int,
                 min_rto_ns: int, max_rto_ns: int, initial_rto_ns: int, start_ps: int, record=None):
        self.net = net
        self.env = net.env
        self._drive = net.drive_cb         # the scheduler's drive loop (hot sources end their callbacks with it)
        self._sched = net.sched
        self.fid = fid
        self.src, self.dst = src, dst
        self.size = size_bytes
        self.cc = cc
        self.cc_reacts = cc.reacts   # False: the per-packet CC hooks are no-ops and are skipped
        self.cc_name = cc_name
        self.prio = prio
        self.ect = bool(cc.ecn_capable)
        self.route, self.rroute = route, rroute
        # Swift's topology scaling: links of the forward path
        cc.set_path(hops=len(route) if route else (len(rroute) if rroute else 0))
        self.port, self.rport = port, rport
        #: the algorithm wants in-band telemetry (HPCC): data packets carry an INT list, echoed in ACKs
        self.wants_int = bool(cc.wants_int)
        extra = int(cc.int_bytes) if self.wants_int else 0
        self.mss = mss_bytes - extra      # the INT header is paid out of the payload (packets stay <= MTU)
        if self.mss <= 0:
            from ..errors import InputError
            raise InputError("MTU too small for the INT header", where="--set mtu_bytes",
                             value=mss_bytes + header_bytes,
                             accepted=f"more than header_bytes + {extra} bytes of INT header ({cc_name})")
        self.hdr = header_bytes + extra
        self.ack_bytes = ack_bytes + extra
        self.start_ps = start_ps
        self.record = record  # extra info for the record (tag, ideal)
        # sender
        self.snd_una = 0
        self.snd_nxt = 0
        self.snd_max = 0
        self.inflation = 0
        self.rtxq: deque = deque()
        self.in_ring = False
        #: earliest send time of the next packet, whole ps (pacing and the host-stack cap, rounded up: an
        #: integer time compares with the integer clock exactly as the real-valued one it rounds)
        self.next_tx = 0
        #: host-stack per-connection cap as ps per payload byte (0.0 = uncapped; netsim.hoststack)
        self.cap_ps_per_byte = 0.0
        self.pace_ev = None
        self._pace_tick = _PaceTick()
        self._pace_cbs = (_pace_fire, self._drive) if self._drive is not None else (_pace_fire,)
        self._hq = net.sched.heap       # the scheduler's heap and id counter (the pacing push is inlined)
        self._ids = net.sched.ids
        self.timer_ev = None
        self.rto_deadline = None
        self.rto = RtoEstimator(min_rto_ns, max_rto_ns, initial_rto_ns)
        self.sender_done = False
        self.failed = False
        self.consec_timeouts = 0
        self.max_timeouts = 15
        self.ack_end_ps = -1
        # receiver
        self.rcv_nxt = 0
        self.end_ps = -1
        #: payload bytes delivered in order inside the fairness window [win_lo_ps, win_hi_ps)
        self.win_bytes = 0
        self.win_lo_ps = 0
        self.win_hi_ps = 1 << 62
        self.rx_payload_bytes = 0  # every payload byte that reached the receiver, duplicates included
        # counters
        self.retransmitted_bytes = 0
        self.retransmits = 0
        self.timeouts = 0
        self.ecn_marked_packets = 0
        self.cnps_received = 0
        self.cnps_sent = 0

    # -- sender: what the NIC asks ----------------------------------------------------------------
    def ready(self) -> bool:
        """Can a packet be sent now as far as data and window go (pacing aside)?"""
        if self.rtxq:
            return not self.sender_done
        nxt = self.snd_nxt
        size = self.size
        if nxt >= size or self.sender_done:
            return False
        infl = nxt - self.snd_una - self.inflation
        if infl <= 0:
            return True
        payload = size - nxt
        if payload > self.mss:
            payload = self.mss
        return infl + payload <= self.cc.cwnd_bytes

    def next_packet(self, now: int) -> Packet:
        """Build the next data packet (a queued retransmission first, else from ``snd_nxt``)."""
        if self.rtxq:
            seq = self.rtxq.popleft()
        else:
            seq = self.snd_nxt
        payload = self.size - seq
        if payload > self.mss:
            payload = self.mss
        end = seq + payload
        if seq == self.snd_nxt:
            self.snd_nxt = end
        wire = payload + self.hdr
        pkt = Packet(self, DATA, seq, wire, payload, self.prio, self.ect, self.route, self.dst, now)
        pkt.hop = 1
        if self.wants_int:
            pkt.intl = []
        if seq < self.snd_max:
            pkt.rtx = True
            self.retransmitted_bytes += payload
            self.retransmits += 1
        else:
            self.snd_max = end
        cc = self.cc
        if self.cc_reacts:
            now_ns = now // 1000
            cc.advance(now_ns)
            cc.on_send(now_ns, payload)
        rate = cc.rate_bps
        if rate < self.port.rate_bps:   # paced: next send at now + wire time at ``rate``, rounded up to the ps
            t = now + wire * 8e12 / rate
            nt = int(t)
            self.next_tx = nt + 1 if nt < t else nt
        cap = self.cap_ps_per_byte
        if cap:
            t = now + payload * cap
            nt = int(t)
            if nt < t:
                nt += 1
            if nt > self.next_tx:
                self.next_tx = nt
        if self.rto_deadline is None:
            self.arm_timer(now)
        return pkt

    def wait_pacing(self) -> None:
        """The NIC skipped this flow because of pacing: wake the NIC at ``next_tx`` (rounded up).

        One pacing tick per flow, reused (at most one is pending: ``pace_ev``).
        ``next_tx`` is already whole ps (:meth:`next_packet` rounds it up).
        """
        if self.pace_ev is None:
            at = self.next_tx
            ev = self.pace_ev = self._pace_tick
            ev.callbacks = self._pace_cbs
            ev.at = at
            ev.flow = self
            heappush(self._hq, (at, NORMAL, next(self._ids), ev))

    def wake_sender(self, now: int) -> None:
        """Put the flow back on its NIC's round robin if it can send, and kick the NIC (``now``: ps)."""
        if not self.in_ring and self.ready():
            self.in_ring = True
            self.port.add_sender(self, now)

    # -- sender helpers ---------------------------------------------------------------------------
    def _new_ack(self, now: int, ack: int, pkt) -> int:
        """Advance ``snd_una`` to ``ack``; RTT sample (Karn); timer restart/stop. Returns acked bytes."""
        acked = ack - self.snd_una
        self.snd_una = ack
        self.consec_timeouts = 0
        if self.snd_nxt < ack:
            self.snd_nxt = ack
        rtt_ns = None
        if not pkt.rtx:
            rtt_ns = (now - pkt.ts) // 1000
            self.rto.sample(rtt_ns)
        if ack >= self.size:
            self.sender_done = True
            self.stop_timer()
            self._forget_timer()
            self.ack_end_ps = now
            self.rtxq.clear()
            self.net.flow_acked(self)
        elif ack >= self.snd_max:
            self.stop_timer()
        else:
            self.arm_timer(now)
        self._last_rtt = rtt_ns
        return acked

    def in_flight(self) -> int:
        v = self.snd_nxt - self.snd_una - self.inflation
        return v if v > 0 else 0

    # -- receiver helpers -------------------------------------------------------------------------
    def send_control(self, kind: int, seq: int, data_pkt, now: int) -> None:
        """Send an ACK/NACK (``data_pkt`` given) or a CNP back to the sender in the control class.

        An ACK/NACK reuses the delivered data packet's object (it is dead once
        delivered), keeping its ``ts``/``rtx`` for the RTT echo, its INT list
        as ``echo`` and turning its CE mark into ECE where the transport echoes it.
        """
        if data_pkt is None:
            pkt = Packet(self, kind, seq, self.ack_bytes, 0, CONTROL_PRIORITY, False, self.rroute, self.src, 0)
        else:
            pkt = data_pkt
            pkt.kind = kind
            pkt.seq = seq
            pkt.size = self.ack_bytes
            pkt.payload = 0
            pkt.prio = CONTROL_PRIORITY
            pkt.ect = False
            pkt.ece = pkt.ce and self.echo_ce
            pkt.ce = False
            pkt.route = self.rroute
            pkt.dst = self.src
            intl = pkt.intl
            if intl is not None:     # the INT echo rides in ``echo``: the reverse path's egresses skip the hook
                pkt.echo = intl
                pkt.intl = None
        pkt.hop = 1
        self.rport.send_control(pkt, now)

    def _delivered(self, now: int) -> None:
        if self.end_ps < 0 and self.rcv_nxt >= self.size:
            self.end_ps = now
            self.net.flow_received(self)

    # -- CNP (RoCE congestion notification) -------------------------------------------------------
    def on_cnp(self, pkt, now: int) -> None:
        """A CNP arrived at ``now`` (ps)."""
        self.cnps_received += 1
        now_ns = now // 1000
        self.cc.advance(now_ns)
        self.cc.on_cnp(now_ns)

    # -- implemented by each transport (TcpFlow, RoceFlow) -----------------------------------------
    @abstractmethod
    def on_data(self, pkt, now: int) -> None:
        """Receiver side: a data packet arrived at ``now`` (ps, the current time: the caller knows it)."""

    @abstractmethod
    def on_ack(self, pkt, now: int) -> None:
        """Sender side: an ACK (or NACK) arrived at ``now`` (ps)."""

    @abstractmethod
    def on_timeout(self, now: int) -> None:
        """The flow's single retransmit timer fired at ``now`` (ps)."""

    # -- observation ------------------------------------------------------------------------------
    def sample(self) -> tuple:
        """``(cwnd_bytes, rate_bps, alpha, srtt_ns)`` for cc.csv (None where not applicable)."""
        self.cc.advance(self.env.now // 1000)
        cw, rate, alpha = self.cc.sample()
        srtt = self.rto.srtt_ns
        return cw, rate, alpha, (None if srtt is None else int(round(srtt)))

