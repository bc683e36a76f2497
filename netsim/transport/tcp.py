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

Left out: SACK, delayed ACKs, Nagle, receive-window limits, PAWS.
"""
from __future__ import annotations

from .flow import Flow
from .packet import ACK


class TcpFlow(Flow):
    transport = "tcp"
    echo_ce = True

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.ooo: dict[int, int] = {}
        self.dupacks = 0
        self.in_recovery = False
        self.recover = -1

    # -- receiver ---------------------------------------------------------------------------------
    def on_data(self, pkt) -> None:
        now = self.env._now
        self.rx_payload_bytes += pkt.payload
        if pkt.ce:
            self.ecn_marked_packets += 1
        seq = pkt.seq
        rcv = self.rcv_nxt
        if seq == rcv:
            rcv += pkt.payload
            self.win_bytes += pkt.payload
            ooo = self.ooo
            if ooo:
                while rcv in ooo:
                    n = ooo.pop(rcv)
                    self.win_bytes += n
                    rcv += n
            self.rcv_nxt = rcv
        elif seq > rcv and seq not in self.ooo:
            self.ooo[seq] = pkt.payload
        self.send_control(ACK, rcv, pkt)
        if rcv >= self.size and self.end_ps < 0:
            self._delivered(now)

    # -- sender -----------------------------------------------------------------------------------
    def on_ack(self, pkt) -> None:
        if self.sender_done:
            return
        now = self.env._now
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
        self.wake_sender()

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
