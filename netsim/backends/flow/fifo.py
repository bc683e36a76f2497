"""Fluid FIFO queues with per-ingress PFC: where a DCQCN flow's bytes wait, and when they are marked.

The DCQCN fluid model (:mod:`.dcqcnfluid`) needs, per flow, *when* its bytes
leave a congested switch egress (marking happens at dequeue) and *whether*
its sender is paused. A single aggregate backlog per link cannot say that:
a flow that joins a long queue is marked only once its first bytes reach the
head, and a paused ingress leaves a gap in the FIFO that delays that flow's
next mark by a whole queueing delay. This module keeps, for every switch
egress a DCQCN flow crosses, a first-in-first-out fluid queue of segments
(bytes per flow, in arrival order) and, for every link into a switch, the
PFC ingress counter with XOFF/XON hysteresis.

One :meth:`FifoNet.step` moves the fluid over an interval ``dt``:

1. each flow injects ``min(R_C·dt, unsent)`` unless the link into its first
   switch (its NIC's uplink) is paused; the flows on that link share its rate;
2. queues are served upstream first (by hop index), each at its capacity
   unless its own link is paused by the switch downstream; departures move
   to the flow's next queue, or are delivered after its last one;
3. every ingress whose counter exceeds XOFF is paused, and resumed below XON
   (``XOFF = Kmax + gap``, ``XON = Kmax`` with ``gap = 2·delay·rate + 2·MTU``,
   as the packet backend's ``pfc_xoff_above_ecn``).

Deliberately left out: propagation delay between queues (bytes reach the
next queue in the same step), PFC headroom, non-DCQCN traffic in these
queues (the fair-share solver accounts for it), pause of non-switch hops.
"""
from __future__ import annotations

from .fifoqueue import FifoQueue


class FifoNet:
    """The FIFO queues and PFC state of the links DCQCN flows cross.

    ``cap[l]`` link capacity (bytes/ps), ``tail_switch[l]`` whether link ``l``
    leaves a switch (has a queue), ``gap[l]`` the PFC XOFF−XON gap of link
    ``l`` into a switch (bytes), ``kmax_of(l)`` the Kmax of egress ``l``.
    """

    def __init__(self, cap, tail_switch, gap, kmax_of):
        self.cap = cap
        self.tail_switch = tail_switch
        self.gap = gap
        self.kmax_of = kmax_of
        self.queues: dict[int, FifoQueue] = {}
        self.nusers: dict[int, int] = {}    # flows attached to each queue
        self.cnt: dict[int, float] = {}      # link into a switch -> its bytes held at that switch
        self.xoff: dict[int, float] = {}
        self.paused: set[int] = set()
        self.pause_events = 0               # XOFF crossings (pause frames) so far
        self.level: dict[int, int] = {}     # hop index of a queue (serve order)
        self.order: list[int] | None = None
        #: fid -> {queue link, or -1 for the sender: (the flow's next queue link or None, that queue's
        #: ingress link)}; and fid -> {queue link: its ingress link on the flow's path}
        self.nxt: dict[int, dict] = {}
        self.upof: dict[int, dict] = {}

    def attach(self, f) -> None:
        """Register the queues of flow ``f``'s path."""
        links = f.links
        hops: dict = {}
        ups: dict = {}
        prev = -1
        for k, l in enumerate(links):
            if not self.tail_switch[l]:
                continue
            if l not in self.queues:
                self.queues[l] = FifoQueue()
                self.nusers[l] = 0
                self.order = None
            self.nusers[l] += 1
            if self.level.get(l, -1) < k:
                self.level[l] = k
                self.order = None
            up = links[k - 1] if k else None
            if up is not None:
                # the switch pauses the ingress once the egress it feeds is beyond Kmax (the largest
                # Kmax of the switch's egresses seen so far, as the packet backend's automatic XOFF)
                x = self.kmax_of(l) + self.gap[up]
                if x > self.xoff.get(up, 0.0):
                    self.xoff[up] = x
            hops[prev] = (l, up)
            ups[l] = up
            prev = l
        hops[prev] = (None, None)
        self.nxt[f.fid] = hops
        self.upof[f.fid] = ups

    def detach(self, f) -> None:
        """Flow ``f`` completed: its queued bytes leave the queues and the counters."""
        self.nxt.pop(f.fid, None)
        ups = self.upof.pop(f.fid, None)
        if ups is None:
            return
        for l, up in ups.items():
            qu = self.queues[l]
            gone = qu.drop_flow(f.fid)
            if gone and up is not None:
                self.cnt[up] = max(0.0, self.cnt.get(up, 0.0) - gone)
            self.nusers[l] -= 1
            if self.nusers[l] == 0:          # its last flow is gone, and with it every queued byte
                del self.queues[l], self.nusers[l]
                self.order = None

    def busy(self) -> bool:
        """Some byte queued or some ingress paused."""
        return bool(self.paused) or any(qu.q > 0.0 for qu in self.queues.values())

    def step(self, flows, inject: dict[int, float], dt: float):
        """Move the fluid over ``dt`` ps.

        ``inject[fid]`` are the bytes each flow's RP would send (``R_C·dt``,
        capped by what is unsent). Returns ``(sent, departed, qavg)``: bytes
        each flow actually injected, ``{link: {fid: bytes}}`` departed from
        each queue, and the mean standing queue of each queue over the step (bytes).
        """
        cap, queues, cnt, paused, nxt = self.cap, self.queues, self.cnt, self.paused, self.nxt
        touched: set[int] = set()
        sent: dict[int, float] = {}
        flows = self._hot(flows, inject, dt, sent)
        # 1. injection: the link into the flow's first switch (its NIC's uplink) is shared by the flows
        #    on it and stops them while paused (hops before it — NVLink, PCIe — pass the fluid through)
        by_nic: dict = {}
        for f in flows:
            up = nxt[f.fid][-1][1]
            if up in paused:
                sent[f.fid] = 0.0
                continue
            g = by_nic.get(up)
            if g is None:
                by_nic[up] = [f]
            else:
                g.append(f)
        for up, fs in by_nic.items():
            want = 0.0
            for f in fs:
                want += inject[f.fid]
            room = cap[up] * dt if up is not None else want
            scale = room / want if want > room > 0.0 else 1.0
            for f in fs:
                b = inject[f.fid] * scale
                sent[f.fid] = b
                if b > 0.0:
                    l, up_l = nxt[f.fid][-1]
                    if l is not None:
                        self._arrive(f.fid, l, up_l, b, touched)
        # 2. serve queues upstream first
        departed: dict[int, dict] = {}
        qavg: dict[int, float] = {}
        order = self.order
        if order is None:
            order = self.order = sorted(queues, key=lambda x: (self.level.get(x, 0), x))
        for l in order:
            qu = queues[l]
            q_start = qu.q                  # the standing queue, before this step's arrivals
            if qu.arrivals:
                qu.push()
            if qu.q <= 0.0:
                continue
            out = {} if l in paused else qu.serve(cap[l] * dt)
            qavg[l] = 0.5 * (q_start + qu.q)
            if not out:
                continue
            departed[l] = out
            upof = self.upof
            for fid, b in out.items():
                hops = nxt.get(fid)
                if hops is None:
                    continue
                up = upof[fid][l]
                if up is not None:
                    cnt[up] -= b
                    touched.add(up)
                nl, nup = hops[l]
                if nl is not None:
                    self._arrive(fid, nl, nup, b, touched)
        # arrivals for queues already served this step wait for the next step (their segment is pushed then)
        self._pfc(touched)
        return sent, departed, qavg

    def _pfc(self, touched: set[int]) -> None:
        """3. PFC hysteresis of the step: an ingress whose count of bytes queued downstream
        rose above XOFF pauses; a paused one resumes once it fell to XOFF - gap (XON)."""
        xoff, gap, cnt, paused = self.xoff, self.gap, self.cnt, self.paused
        for i in touched | paused:
            x = xoff.get(i)
            if x is None:
                continue
            c = cnt.get(i, 0.0)
            if i in paused:
                if c <= x - gap[i]:
                    paused.discard(i)
            elif c > x:
                paused.add(i)
                self.pause_events += 1

    def _hot(self, flows, inject: dict, dt: float, sent: dict) -> list:
        """The flows this step must move through the queues; the others pass straight through.

        A flow is cold when every queue on its path is empty with nothing
        arriving, no link of it (nor its NIC uplink) is offered more than its
        capacity this step and its uplink is not paused: its bytes would leave
        every queue in the step they arrive, so it injects all it wants
        (``sent``) and touches no queue or counter.
        """
        cap, queues, paused = self.cap, self.queues, self.paused
        room = {}
        for f in flows:
            w = inject[f.fid]
            if w <= 0.0:
                continue
            fid = f.fid
            up = self.nxt[fid][-1][1]
            if up is not None:
                room[up] = room.get(up, 0.0) + w
            for l in self.upof[fid]:
                room[l] = room.get(l, 0.0) + w
        hot_links = {l for l, w in room.items() if w > cap[l] * dt}
        for l, qu in queues.items():
            if qu.q > 0.0 or qu.arrivals:
                hot_links.add(l)
        hot_links |= paused
        if not hot_links:
            for f in flows:
                sent[f.fid] = inject[f.fid]
            return []
        hot = []
        for f in flows:
            fid = f.fid
            ups = self.upof[fid]
            if self.nxt[fid][-1][1] in hot_links or not hot_links.isdisjoint(ups) or \
                    not hot_links.isdisjoint(ups.values()):
                hot.append(f)
            else:
                sent[fid] = inject[fid]
        return hot

    def _arrive(self, fid: int, l: int, up, b: float, touched: set) -> None:
        arr = self.queues[l].arrivals
        arr[fid] = arr.get(fid, 0.0) + b
        if up is not None:
            self.cnt[up] = self.cnt.get(up, 0.0) + b
            touched.add(up)
