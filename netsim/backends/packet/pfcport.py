"""PFC state of a :class:`~.port.Port`: the pause it obeys and the ingress group it counts for its peer.

A port ``a -> b`` carries two PFC roles. As ``a``'s egress it obeys PAUSE
from ``b`` per priority (:meth:`PfcMixin.set_paused`: time paused and the
number of pauses are counted; a resume kicks the port). As the upstream end
of ``b``'s ingress it holds ``b``'s per-priority ingress accounting
(``ing``, ``hdr``, ``xoff``, ``xon``, ``headroom``, ``pause_sent``; see
:mod:`.thresholds` and ``Forwarder.admit``), which
:meth:`PfcMixin._release_ingress` decrements as a lossless packet leaves
``b``'s buffer, sending RESUME at XON.

Left out: pause quanta (a PAUSE holds until RESUME, as XON/XOFF switches
send them), pause-frame serialization.
"""
from __future__ import annotations

from .thresholds import dynamic_xon


class PfcMixin:
    """PFC pause and ingress release of a :class:`~.port.Port` (methods only; state lives in the port)."""

    __slots__ = ()

    def _release_ingress(self, pkt, pp, prio: int, size: int) -> None:
        """A lossless packet leaves the buffer: release it from its ingress group (``pp``), headroom first.

        RESUME goes upstream once the group is at or below XON with its
        headroom empty (a group paused because the shared pool was full, not
        its own share, waits until what landed in headroom has drained, so a
        resumed sender finds the whole headroom again).
        """
        pkt.pfc_port = None
        c = pp.ing[prio] - size
        pp.ing[prio] = c
        h = pp.hdr[prio]
        if h:
            if h > size:
                h -= size
                self.buf.hdr_used -= size
            else:
                self.buf.hdr_used -= h
                h = 0
            pp.hdr[prio] = h
        if pp.pause_sent[prio] and not h:
            if c <= pp.xon[prio] or (pp.dyn_alpha and c <= dynamic_xon(pp, self.buf, prio)):
                self.net.pfc_signal(pp, prio, False)


    def set_paused(self, prio: int, on: bool) -> None:
        now = self.env.now
        if on == self.paused[prio]:
            return
        self.paused[prio] = on
        if on:
            self.pause_since[prio] = now
            self.pauses += 1
            watch = self.net.pfc_watch
            if watch is not None:
                watch.paused(self, prio, now)
        else:
            self.pause_time_ps += now - self.pause_since[prio]
            self.kick(now)

