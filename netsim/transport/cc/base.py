"""The congestion-control contract: a pure state machine, no SimPy inside.

The transport (``netsim.transport``) owns reliability — sequence numbers,
ACKs, duplicate-ACK fast retransmit, the single retransmit timer, go-back-N —
and calls the hooks below; the algorithm only updates its state and exposes
two limits the transport obeys before every transmission:

* :attr:`CongestionControl.cwnd_bytes` — bytes allowed in flight
  (``math.inf`` for a purely rate-based algorithm);
* :attr:`CongestionControl.rate_bps` — the pacing rate of this flow
  (``math.inf`` = send at the NIC's line rate, unpaced).

Algorithms never schedule events. Anything periodic (DCQCN's α timer and
rate-increase timer) is evaluated lazily: every hook first calls
:meth:`advance` with the current time, which applies all the timer expiries
that fell before ``now_ns``. This is exactly equivalent to real timers, since
timer ticks between two events commute with nothing but those events, and it
keeps one pending event per busy resource in the engine.

A new algorithm is one subclass with ``name``, ``transport``, ``PARAMS`` and
the hooks it needs, registered with :func:`register`.

>>> cc = NoneCC(NoneCC.PARAMS.resolve({"window_bytes": "64KB"}), mss_bytes=1000,
...             line_rate_bps=100e9, base_rtt_ns=2000)
>>> cc.cwnd_bytes, cc.rate_bps
(64000, inf)
"""
from __future__ import annotations

import math
from typing import Callable, ClassVar, Mapping, NamedTuple

from ...params import Param, ParamTable

REGISTRY: dict[str, type["CongestionControl"]] = {}


class PresetTable(ParamTable):
    """A :class:`ParamTable` whose ``None`` values mean "from the preset" (resolvable twice)."""

    def resolve(self, overrides=None, *, base=None, source=None) -> dict:
        def clean(d):
            return {k: v for k, v in (d or {}).items() if v is not None}
        return super().resolve(clean(overrides), base=clean(base), source=source)


def preset_param(presets: dict, name: str, kind: str, doc: str, **kw) -> Param:
    """A parameter of a :class:`PresetTable` whose default (``None``) comes from the chosen preset;
    its source lists every preset's value of ``name``."""
    vals = ", ".join(f"{k}: {v[name]}" for k, v in presets.items())
    return Param(name, None, kind, f"{doc} (None = from the preset)", f"presets — {vals}", **kw)


def register(cls):
    """Class decorator: make an algorithm available as ``--cc NAME``."""
    REGISTRY[cls.name] = cls
    return cls


class PathRefusal(NamedTuple):
    """Why an algorithm cannot run on a path (:meth:`CongestionControl.check_path`)."""

    what: str        #: the problem, e.g. "base RTT at or above Swift's fabric target"
    value: str       #: the figures: the path's base RTT and the threshold it meets
    accepted: str    #: what would work, naming the ``--cc-param`` key to raise


class CongestionControl:
    """Base class: every hook is a no-op; subclasses override what they use.

    Parameters
    ----------
    params : dict
        Resolved values of ``PARAMS`` (see :meth:`ParamTable.resolve`).
    mss_bytes : int
        Payload bytes per full packet (``mtu_bytes - header_bytes``).
    line_rate_bps : float
        Rate of the sender's first hop (NIC), bit/s.
    base_rtt_ns : int
        Unloaded round-trip time of the flow's path, ns (propagation plus
        serialization of one MTU packet and one ACK at every hop).
    bdp_bytes : int, optional
        Bandwidth-delay product of the path at its bottleneck rate.
    now_ns : int
        Time the flow starts.
    """

    name: ClassVar[str] = "base"
    #: ``"tcp"``: lossy class, cumulative ACKs, 3-dupack fast retransmit, RTO.
    #: ``"roce"``: lossless class, go-back-N on loss, CNPs from the receiver.
    transport: ClassVar[str] = "tcp"
    #: Whether data packets are sent ECN-capable (ECT), so switches mark CE.
    ecn_capable: ClassVar[bool] = False
    #: Whether data packets carry in-band telemetry (HPCC), stamped per switch hop and echoed in ACKs.
    wants_int: ClassVar[bool] = False
    #: The host stack whose costs the flows pay when it is not the transport's (Swift in Snap: ``roce``).
    host_transport: ClassVar[str | None] = None
    #: ``ecn_settings(params, link_rate_bps, *, mtu_bytes, base_rtt_ns) -> dict``: the switch ECN
    #: parameters the algorithm implies (DCQCN, DCTCP), a classmethod; ``None``: it implies none.
    ecn_settings: ClassVar[Callable[..., dict] | None] = None
    PARAMS: ClassVar[ParamTable] = ParamTable("base", [])
    #: Whether the per-packet hooks (:meth:`advance`, :meth:`on_send`, :meth:`on_ack`,
    #: :meth:`on_telemetry`) can change the window or rate; ``False`` lets the transport skip them
    #: (``none``: a fixed window, every hook a no-op).
    reacts: ClassVar[bool] = True

    def __init__(self, params: dict, *, mss_bytes: int, line_rate_bps: float, base_rtt_ns: int,
                 bdp_bytes: int | None = None, now_ns: int = 0):
        self.params = params
        self.mss_bytes = mss_bytes
        self.line_rate_bps = line_rate_bps
        self.base_rtt_ns = base_rtt_ns
        self.bdp_bytes = bdp_bytes if bdp_bytes is not None else int(line_rate_bps * base_rtt_ns / 8e9)
        self.cwnd_bytes: float = math.inf
        self.rate_bps: float = math.inf
        self.alpha: float | None = None
        #: INT header bytes a data packet carries (``wants_int``), paid out of the payload
        self.int_bytes: int = 0
        #: the algorithm's own minimum RTO (ns) or ``None`` (the network's ``min_rto_ns``)
        self.min_rto_ns: int | None = None
        #: the receiver's CNP interval (ns) the algorithm sets (DCQCN's NP) or ``None`` (the network's)
        self.cnp_interval_ns: int | None = None

    @classmethod
    def check_path(cls, base_rtt_ns: float, hops: int, params: Mapping) -> PathRefusal | None:
        """``None`` when the algorithm can run on a path of unloaded RTT ``base_rtt_ns`` and ``hops``
        links under resolved ``params``, else why not; checked at send time on every backend
        (:meth:`netsim.network.send.SendContract.check_path`). The default accepts every path."""
        return None

    # -- lazily evaluated timers ------------------------------------------------
    def advance(self, now_ns: int) -> None:
        """Apply every internal timer expiry that happened before ``now_ns``."""

    # -- events from the transport ----------------------------------------------
    def on_send(self, now_ns: int, size_bytes: int) -> None:
        """``size_bytes`` of payload were just handed to the NIC."""

    def on_ack(self, now_ns: int, acked_bytes: int, rtt_ns: int | None, ece: bool,
               in_flight_bytes: int) -> None:
        """A new cumulative ACK covered ``acked_bytes``; ``ece`` echoes a CE mark."""

    def on_loss(self, now_ns: int, in_flight_bytes: int) -> None:
        """Fast retransmit entered recovery (once per recovery episode)."""

    def on_recovery_end(self, now_ns: int) -> None:
        """The ACK that ends fast recovery arrived."""

    def on_timeout(self, now_ns: int, in_flight_bytes: int) -> None:
        """The retransmit timer fired."""

    def on_cnp(self, now_ns: int) -> None:
        """A congestion notification packet (RoCEv2) arrived."""

    def set_path(self, *, hops: int) -> None:
        """The flow's forward path has ``hops`` links (Swift's topology-scaled target); the default ignores it."""

    def on_path_change(self, now_ns: int, *, base_rtt_ns: int, bdp_bytes: int) -> None:
        """The flow was moved to another path (a failed link, :mod:`netsim.whatif`) at ``now_ns``.

        The default keeps every state: an algorithm that adapts (window or
        rate from ACKs, marks, delay) learns the new path from its feedback.
        An algorithm whose window is a constant of the path (``none``'s BDP
        window) re-derives it here.
        """

    # -- observation ------------------------------------------------------------
    def sample(self) -> tuple[float | None, float | None, float | None]:
        """``(cwnd_bytes, rate_bps, alpha)`` for ``cc.csv``; ``None`` where not applicable."""
        cw = None if math.isinf(self.cwnd_bytes) else self.cwnd_bytes
        rate = None if math.isinf(self.rate_bps) else self.rate_bps
        return cw, rate, self.alpha


@register
class NoneCC(CongestionControl):
    """No congestion control: a fixed window, unpaced (``--cc none``).

    ``window_bytes = 0`` (the default) means one bandwidth-delay product of
    the flow's path at its bottleneck rate, so a lone flow neither idles nor
    overruns a slower later hop. Runs on the ``roce`` transport (lossless
    class, go-back-N on a loss).
    """

    name = "none"
    transport = "roce"
    reacts = False
    PARAMS = ParamTable("none", [
        Param("window_bytes", 0, "size",
              "fixed window; 0 = one BDP of the path at its bottleneck rate",
              "netsim issue #2 (BDP window so a lone flow neither idles nor overruns)"),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        w = params.get("window_bytes", 0)
        self.cwnd_bytes = w if w > 0 else max(self.bdp_bytes, self.mss_bytes)

    def on_path_change(self, now_ns: int, *, base_rtt_ns: int, bdp_bytes: int) -> None:
        """A BDP window (``window_bytes`` 0) becomes the new path's BDP; a stated window stays."""
        self.base_rtt_ns, self.bdp_bytes = base_rtt_ns, bdp_bytes
        if not self.params.get("window_bytes", 0) > 0:
            self.cwnd_bytes = max(bdp_bytes, self.mss_bytes)
