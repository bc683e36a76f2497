"""RoCEv2-style reliable transport: go-back-N, NACKs, CNPs (DCQCN's NP).

Receiver (as a RoCE NIC's responder):

* in-order packet: advance the expected byte; ACK every
  ``roce_ack_every_packets`` packets (and always the last one);
* out-of-order packet (a gap, i.e. a loss): one NACK carrying the expected
  byte, then silence until the gap is filled (IB "sequence error" NAK);
* duplicate (already received): re-ACK;
* NP: a CE-marked packet triggers a CNP to the sender unless one was sent for
  this flow within ``cnp_interval_ns`` (DCQCN: 50 us).

Sender (requester): cumulative ACKs advance ``snd_una`` (one that answers a
retransmission also undoes the RTO backoff: an IB requester's Local ACK
Timeout is fixed, and without it a flow whose whole window was resent would
keep the backed-off RTO, as no retransmission gives a sample); a NACK rewinds
``snd_nxt`` to the NACKed byte (go-back-N) and starts a loss episode
(``cc.on_loss`` once, ``cc.on_recovery_end`` when everything sent before it is
acknowledged); the retransmit timer is the backstop (go back to ``snd_una``).
ACKs never carry ECE here: RoCE congestion signals travel as CNPs. An ACK
that echoes in-band telemetry (HPCC, :mod:`.telemetry`; the list in ``pkt.echo``) is handed to
``cc.on_telemetry`` before ``cc.on_ack``.

Left out: PSN wrap, read/atomic verbs, selective repeat.
"""
from __future__ import annotations

from .flow import Flow
from .packet import ACK, CNP, NACK


class RoceFlow(Flow):
    transport = "roce"

    def __init__(self, *args, ack_every: int = 1, cnp_interval_ns: int = 50_000, **kw):
        super().__init__(*args, **kw)
        self.ack_every = int(ack_every)
        self.cnp_interval_ps = int(cnp_interval_ns) * 1000
        self.last_cnp_ps = None
        self.acks_due = 0
        self.nack_sent = False
        self.in_recovery = False
        self.recover = 0

    # -- receiver ---------------------------------------------------------------------------------
    def on_data(self, pkt, now: int) -> None:
        self.rx_payload_bytes += pkt.payload
        if pkt.ce:
            self.ecn_marked_packets += 1
            last = self.last_cnp_ps
            if last is None or now - last >= self.cnp_interval_ps:
                self.last_cnp_ps = now
                self.cnps_sent += 1
                self.send_control(CNP, 0, None, now)
        seq = pkt.seq
        rcv = self.rcv_nxt
        if seq == rcv:
            self.rcv_nxt = rcv = rcv + pkt.payload
            self.nack_sent = False
            if self.win_lo_ps <= now < self.win_hi_ps:
                self.win_bytes += pkt.payload
            self.acks_due += 1
            if self.acks_due >= self.ack_every or rcv >= self.size:
                self.acks_due = 0
                self.send_control(ACK, rcv, pkt, now)
            if rcv >= self.size and self.end_ps < 0:
                self._delivered(now)
        elif seq > rcv:
            if not self.nack_sent:
                self.nack_sent = True
                self.send_control(NACK, rcv, pkt, now)
        else:
            self.send_control(ACK, rcv, pkt, now)

    # -- sender -----------------------------------------------------------------------------------
    def on_ack(self, pkt, now: int) -> None:
        if self.sender_done:
            return
        ack = pkt.seq
        cc = self.cc
        if ack > self.snd_una:
            if pkt.rtx:
                # progress after a timeout: a RoCE requester's retry timer is fixed (IB Local ACK Timeout,
                # no backoff) and its retry count restarts; Karn's rule would keep the backed-off RTO, as
                # every packet of a go-back-N flow whose window covered it is a retransmission (no sample)
                self.rto.reset_backoff()
            acked = self._new_ack(now, ack, pkt)
            now_ns = now // 1000
            if self.cc_reacts:
                cc.advance(now_ns)
                echo = pkt.echo
                if echo is not None and self.wants_int:
                    cc.on_telemetry(now_ns, echo, ack, self.snd_nxt)
                cc.on_ack(now_ns, acked, self._last_rtt, False, self.in_flight())
            if self.in_recovery and ack > self.recover:
                self.in_recovery = False
                cc.on_recovery_end(now_ns)
            if self.sender_done:
                return
        if pkt.kind == NACK and ack < self.snd_nxt:
            self.snd_nxt = ack  # go back N
            if not self.in_recovery:
                self.in_recovery = True
                self.recover = self.snd_max - 1
                now_ns = now // 1000
                cc.advance(now_ns)
                cc.on_loss(now_ns, self.snd_max - self.snd_una)
            if self.rto_deadline is None:
                self.arm_timer(now)
        self.wake_sender(now)

    def on_timeout(self, now: int) -> None:
        now_ns = now // 1000
        self.cc.advance(now_ns)
        self.cc.on_timeout(now_ns, self.snd_max - self.snd_una)
        self.snd_nxt = self.snd_una
        self.in_recovery = False
