"""TCP-style reliable transport: cumulative ACKs, fast retransmit, NewReno, RTO.

Receiver: buffers out-of-order segments and ACKs every segment cumulatively
(so a gap produces duplicate ACKs at once). Each ACK echoes the CE mark of
the segment that triggered it (``ece``), which is the precise per-packet echo
DCTCP needs (RFC 8257 3.2 with delayed ACKs off); algorithms that are not
``ecn_capable`` send non-ECT packets and never see a mark.

Sender:

* duplicate ACKs: the third starts fast retransmit (RFC 5681) unless the
  cumulative ACK does not exceed ``recover`` (RFC 6582 3.2 step 1);
  ``recover`` = highest byte sent; ``cc.on_loss`` once; during recovery each
  further dupack inflates the usable window by one MSS (RFC 5681 3.2 step 4);
* partial ACK (below ``recover``): retransmit the first unacknowledged segment
  at once and stay in recovery (NewReno, RFC 6582); full ACK ends recovery
  (``cc.on_recovery_end``), the inflation is removed;
* retransmit timeout (RFC 6298, one timer per flow, exponential backoff):
  ``cc.on_timeout``, go back to ``snd_una`` (go-back-N; segments the receiver
  already holds are skipped as soon as its cumulative ACK reports them),
  ``recover`` = highest byte sent.

Delayed ACKs (``tcp_delayed_ack_segments`` > 1, off by default): an ACK
every N in-order segments or when the delayed-ACK timer
(``tcp_delayed_ack_timeout_ns``) expires, at once for out-of-order data and
the last byte; when the CE state changes with ACKs pending, the pending
segments are acknowledged first with the old ECE value (RFC 8257 3.2).

Left out: SACK, Nagle, receive-window limits, PAWS.
"""
from __future__ import annotations

from .flow import Flow
from .packet import ACK


class TcpFlow(Flow):
    transport = "tcp"
    echo_ce = True

    def __init__(self, *args, delack_segments: int = 1, delack_timeout_ns: int = 0, **kw):
        super().__init__(*args, **kw)
        self.delack = int(delack_segments)
        self.delack_ps = int(delack_timeout_ns) * 1000
        self.ack_pending = 0          # in-order segments received but not yet acknowledged
        self.ce_state = False         # CE of the last segment (RFC 8257 3.2 receiver state)
        self.last_ts = 0
        self.last_rtx = False
        self.delack_ev = None
        self.ooo: dict[int, int] = {}
        self.dupacks = 0
        self.in_recovery = False
        self.recover = -1

    # -- receiver ---------------------------------------------------------------------------------
    def on_data(self, pkt, now: int) -> None:
        self.rx_payload_bytes += pkt.payload
        ce = pkt.ce
        if ce:
            self.ecn_marked_packets += 1
        seq = pkt.seq
        rcv = self.rcv_nxt
        in_order = seq == rcv
        if in_order:
            rcv += pkt.payload
            ooo = self.ooo
            if ooo:
                while rcv in ooo:
                    rcv += ooo.pop(rcv)
            if self.win_lo_ps <= now < self.win_hi_ps:
                self.win_bytes += rcv - self.rcv_nxt
            self.rcv_nxt = rcv
        elif seq > rcv and seq not in self.ooo:
            self.ooo[seq] = pkt.payload
        if self.delack > 1:
            if self.ack_pending and ce != self.ce_state:
                # RFC 8257 3.2: CE state changed: ACK what is pending with the old state first
                self._pure_ack(self.rcv_nxt if not in_order else seq, self.ce_state, now)
            self.ce_state = ce
            if in_order and not self.ooo and rcv < self.size and self.ack_pending + 1 < self.delack:
                self.ack_pending += 1
                self.last_ts, self.last_rtx = pkt.ts, pkt.rtx
                if self.delack_ev is None and self.delack_ps > 0:
                    from .timers import _Tick
                    ev = self.delack_ev = _Tick(self._delack_fire, now + self.delack_ps, self._drive)
                    self._sched.schedule(ev.at, ev)
                if rcv >= self.size and self.end_ps < 0:
                    self._delivered(now)
                return
            self.ack_pending = 0
        self.send_control(ACK, rcv, pkt, now)
        if rcv >= self.size and self.end_ps < 0:
            self._delivered(now)

    def _pure_ack(self, seq: int, ece: bool, now: int) -> None:
        """An ACK not triggered by the current packet (delayed-ACK flush or CE-state change)."""
        from .packet import CONTROL_PRIORITY, Packet
        pkt = Packet(self, ACK, seq, self.ack_bytes, 0, CONTROL_PRIORITY, False, self.rroute, self.src,
                     self.last_ts)
        pkt.hop = 1
        pkt.rtx = self.last_rtx
        pkt.ece = ece and self.echo_ce
        self.ack_pending = 0
        self.rport.send_control(pkt, now)

    def _delack_fire(self, ev) -> None:
        self.delack_ev = None
        if self.ack_pending:
            self._pure_ack(self.rcv_nxt, self.ce_state, ev.at)

    # -- sender -----------------------------------------------------------------------------------
    def on_ack(self, pkt, now: int) -> None:
        if self.sender_done:
            return
        ack = pkt.seq
        cc = self.cc
        una = self.snd_una
        if ack > una:
            acked = self._new_ack(now, ack, pkt)
            now_ns = now // 1000
            cc.advance(now_ns)
            if self.in_recovery:
                if ack > self.recover:  # full ACK
                    self.in_recovery = False
                    self.dupacks = 0
                    self.inflation = 0
                    cc.on_ack(now_ns, acked, self._last_rtt, pkt.ece, self.in_flight())
                    cc.on_recovery_end(now_ns)
                else:  # partial ACK: retransmit the next hole, deflate by what was acked
                    self.inflation = max(0, self.inflation - acked)
                    if not self.sender_done:
                        self.rtxq.append(ack)
                    cc.on_ack(now_ns, acked, self._last_rtt, pkt.ece, self.in_flight())
            else:
                self.dupacks = 0
                cc.on_ack(now_ns, acked, self._last_rtt, pkt.ece, self.in_flight())
            if self.sender_done:
                return
        elif ack == una and self.snd_max > una:
            self.dupacks += 1
            if self.in_recovery:
                self.inflation += self.mss
            elif self.dupacks == 3 and ack > self.recover:
                self.in_recovery = True
                self.recover = self.snd_max - 1
                now_ns = now // 1000
                cc.advance(now_ns)
                cc.on_loss(now_ns, self.snd_max - una)
                self.rtxq.append(una)
                self.inflation = 3 * self.mss
        self.wake_sender(now)

    def on_timeout(self, now: int) -> None:
        now_ns = now // 1000
        self.cc.advance(now_ns)
        self.cc.on_timeout(now_ns, self.snd_max - self.snd_una)
        self.recover = self.snd_max - 1
        self.in_recovery = False
        self.dupacks = 0
        self.inflation = 0
        self.rtxq.clear()
        self.snd_nxt = self.snd_una
