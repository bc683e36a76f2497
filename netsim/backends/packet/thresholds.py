"""PFC thresholds (static, or dynamic as Broadcom-class switches set them) and the switch buffer they live in.

Every switch ingress (link ``a -> b`` into switch ``b``) has, per lossless
priority (its *priority group*), three thresholds held on the port ``a -> b``
(the upstream end, which PAUSE stops):

* **headroom** — buffer reserved for the bytes that still arrive after
  PAUSE was sent: one round trip of the link plus what is being serialized
  at either end, ``2 x delay x rate + 2 x MTU`` (:func:`round_trip_bytes`;
  Cisco, *Priority Flow Control: Build Reliable Layer 2 Infrastructure*,
  and IEEE 802.1Qbb Annex N: MTU(receiver) + 2 x cable delay x rate + MTU(sender)
  + interface and response latencies, which are zero here: a PAUSE takes
  effect exactly one propagation delay after it is sent; every packet on
  the link is at most ``b``'s MTU, as flows use the smallest MTU of their path);
* **XOFF** — the group's allocation of the shared pool: beyond it (or when
  the pool is full) PAUSE goes upstream and packets land in headroom;
  automatic (0): twice the automatic XON, raised above the switch's ECN
  Kmax for ECN-capable congestion control (:func:`order_pfc_after_ecn`);
* **XON** — RESUME once the group holds this little and its headroom is
  empty; automatic: :func:`round_trip_bytes`, so the bytes left cover the
  RESUME round trip and the egress does not idle.

:func:`reserve_headroom` makes them consistent with ``buffer_bytes``: the
headroom of every (ingress, lossless priority) of a switch is reserved out
of its buffer, the rest is the shared pool that lossy and lossless traffic
share, an automatic XOFF is cut to the pool (XON to half of it when it would
not stay below), an explicit XOFF above the pool or a buffer that cannot hold
the headroom is an input error. So a lossless group never holds more than
XOFF + headroom and the switch never more than ``buffer_bytes`` of data.

With ``pfc_threshold: dynamic`` (:func:`use_dynamic_thresholds`) a switch
ingress group's XOFF is instead ``pfc_dynamic_alpha x free``, the free part
of the shared pool after the packet (Choudhury & Hahne's dynamic threshold,
as Broadcom MMUs and SONiC's ``dynamic_th`` buffer profiles configure
lossless priority groups; HPCC's ns-3 switch computes its PFC threshold the
same way, ``free >> pfc_a_shift``), re-evaluated on every arrival; RESUME
when, on a release of that group with its headroom empty, it holds at most
``max(XON, dynamic XOFF - pfc_dynamic_xon_offset_bytes)`` — the SAI rule
for lossless priority groups (``saibuffer.h``,
``SAI_BUFFER_PROFILE_ATTR_XON_OFFSET_TH``: XON when the PG's usage
``<= max(XON_TH, limit - XON_OFFSET_TH)``; SONiC ``BUFFER_PROFILE`` fields
``xon`` and ``xon_offset``). XON_TH is ``pfc_xon_bytes``, automatic: one
link round trip (:func:`round_trip_bytes`), so a group whose dynamic XOFF
has shrunk below a round trip (small buffer, many groups) still resumes
with a round trip's worth of bytes left to send and the egress it feeds
does not run dry before the upstream restarts (resuming only when empty
made an 8 -> 1 incast with a 300 KB buffer 2.8 % slower than static XOFF). The
headroom is reserved as for static thresholds. A group whose count does not
change is not re-evaluated when the pool frees up (as in HPCC's ns-3 switch).

NVLink/PCIe/NIC hops model credit-based flow control: the same PAUSE/RESUME
on every priority, an unbounded buffer and no headroom limit (credits never
overflow). Left out: per-port reserved minimums (HPCC's ``reserve``),
buffer cells (bytes are counted exactly).
"""
from __future__ import annotations

from ...errors import InputError
from ...transport.packet import N_DATA_PRIORITIES
from ...network.params import per_priority
from ...network.pfcxoff import round_trip_bytes  # noqa: F401 (the one formula; re-exported)

#: headroom of an ingress into a forwarding device without a finite buffer (credit-based hops)
UNBOUNDED = float("inf")


def set_pfc_thresholds(port, switch_ingress: bool, pb: dict) -> list:
    """Set XON/XOFF/headroom of the ingress at ``port``'s peer (``pb``: the peer's parameters).

    Returns, per data priority, whether (XOFF, XON) were automatic (for
    :func:`order_pfc_after_ecn` and :func:`reserve_headroom`).
    """
    n = N_DATA_PRIORITIES
    auto_xon = round_trip_bytes(port.delay_ps, port.rate_bps, pb["mtu_bytes"])
    if switch_ingress:
        xon = per_priority(pb, "pfc_xon_bytes")
        xoff = per_priority(pb, "pfc_xoff_bytes")
        port.headroom[:n] = [h if h > 0 else auto_xon for h in per_priority(pb, "pfc_headroom_bytes")]
    else:
        xon = [pb["internal_xon_bytes"]] * n
        xoff = [pb["internal_xoff_bytes"]] * n
        port.headroom[:n] = [UNBOUNDED] * n
    auto = [(xf <= 0, xn <= 0) for xf, xn in zip(xoff, xon)]
    xon = [x if x > 0 else auto_xon for x in xon]
    port.xon[:n] = xon
    port.xoff[:n] = [x if x > 0 else 2 * xn for x, xn in zip(xoff, xon)]
    return auto


def order_pfc_after_ecn(net, auto_pfc: dict, ecn_capable_cc: bool) -> None:
    """Raise automatic PFC thresholds of switch ingresses above the switch's ECN Kmax.

    A per-ingress XOFF of ~2 x (2 BDP + 2 MTU) (56 KB at 100 G, 1 us) sits
    far below e.g. the ``hpcc`` DCQCN preset's Kmin (400 KB at 100 G): PFC
    would pause before any packet is marked and DCQCN would never see a
    CNP. With ``pfc_xoff_above_ecn`` on (auto: the run's ``--cc`` is
    ECN-capable), an automatic XOFF of the ingress from link ``a -> b``
    becomes ``Kmax_b + gap`` and an automatic XON ``Kmax_b``, where
    ``Kmax_b`` is the largest Kmax (that priority) among ``b``'s
    ECN-marking egress ports and ``gap`` the automatic XON (2 x delay x
    rate + 2 MTU). An ingress then only pauses once the egress queue it
    feeds is beyond Kmax, where every packet is marked (DCQCN paper: ECN
    must be triggered before PFC). User-set thresholds are kept.
    ``auto_pfc``: (a, b) -> what :func:`set_pfc_thresholds` returned.
    """
    for (a, b), auto in sorted(auto_pfc.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        pb = net.node_params[b]
        mode = pb["pfc_xoff_above_ecn"]
        if mode == "off" or (mode == "auto" and not ecn_capable_cc) or not pb["ecn"]:
            continue
        port = net.ports[(a, b)]
        egress = [q for q in net.nodes[b].ports.values() if q.ecn_on]
        if not egress:
            continue
        gap = round_trip_bytes(port.delay_ps, port.rate_bps, pb["mtu_bytes"])
        for prio in range(N_DATA_PRIORITIES):
            xoff_auto, xon_auto = auto[prio]
            kmax = max(q.kmax[prio] for q in egress)
            if xoff_auto and kmax + gap > port.xoff[prio]:
                port.xoff[prio] = kmax + gap
                if xon_auto:
                    port.xon[prio] = kmax


def reserve_headroom(net, auto_pfc: dict) -> None:
    """Reserve every switch's lossless headroom out of its buffer; fit XOFF/XON to the shared pool.

    Raises
    ------
    InputError
        A switch's ``buffer_bytes`` does not exceed the headroom it must
        reserve, or an explicit ``pfc_xoff_bytes`` exceeds its shared pool.
    """
    by_switch: dict = {}
    for (a, b), auto in auto_pfc.items():
        by_switch.setdefault(b, []).append((a, auto))
    for b in sorted(by_switch, key=str):
        node = net.nodes[b]
        prios = [p for p in range(N_DATA_PRIORITIES) if node.lossless[p]]
        if not prios:
            continue
        ingresses = sorted(by_switch[b], key=lambda x: str(x[0]))
        buf = node.buf
        reserved = sum(net.ports[(a, b)].headroom[p] for a, _ in ingresses for p in prios)
        if reserved >= buf.total:
            raise InputError("buffer_bytes does not cover the PFC headroom the switch must reserve",
                             where=f"switch {b}, parameter buffer_bytes", value=buf.total,
                             accepted=f"more than {reserved} bytes ({len(ingresses)} ingress links x "
                                      f"{len(prios)} lossless priority(ies) x 2 x delay x rate + 2 MTU), "
                                      "or smaller pfc_headroom_bytes, or fewer lossless_priorities")
        buf.reserved = reserved
        buf.shared = buf.total - reserved
        for a, auto in ingresses:
            port = net.ports[(a, b)]
            for p in prios:
                if port.xoff[p] <= buf.shared:
                    continue
                if not auto[p][0]:
                    raise InputError("pfc_xoff_bytes exceeds the switch's shared buffer pool",
                                     where=f"switch {b}, parameter pfc_xoff_bytes.{p}", value=port.xoff[p],
                                     accepted=f"at most {int(buf.shared)} bytes (buffer_bytes {buf.total} "
                                              f"minus {reserved} bytes of reserved PFC headroom)")
                port.xoff[p] = int(buf.shared)
                if port.xon[p] >= port.xoff[p]:
                    if not auto[p][1]:
                        raise InputError("pfc_xon_bytes is not below the XOFF the switch's shared pool allows",
                                         where=f"switch {b}, parameter pfc_xon_bytes.{p}", value=port.xon[p],
                                         accepted=f"less than {port.xoff[p]} bytes")
                    port.xon[p] = port.xoff[p] // 2


def use_dynamic_thresholds(net) -> None:
    """Switch every switch ingress whose switch has ``pfc_threshold: dynamic`` to the dynamic XOFF.

    Sets the ingress port's ``dyn_alpha`` (alpha, 0 = static) and
    ``xon_off`` (per priority: the RESUME offset below the dynamic XOFF;
    automatic: :func:`round_trip_bytes`), and its static XOFF to -1 so the
    inlined admission in ``Forwarder.admit`` always takes the slow path that
    evaluates the dynamic threshold. Call after :func:`reserve_headroom`.
    """
    for (a, b), port in sorted(net.ports.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        node = net.nodes[b]
        if not getattr(node, "is_switch", False):
            continue
        pb = net.node_params[b]
        if pb["pfc_threshold"] != "dynamic":
            continue
        n = N_DATA_PRIORITIES
        auto = round_trip_bytes(port.delay_ps, port.rate_bps, pb["mtu_bytes"])
        off = pb["pfc_dynamic_xon_offset_bytes"]
        port.dyn_alpha = float(pb["pfc_dynamic_alpha"])
        port.xon_off = [off if off > 0 else auto] * n + [0]
        # XON_TH, the floor of the hysteresis: the user's pfc_xon_bytes, else one link round trip (not
        # the ECN-raised static XON: the dynamic XOFF, not Kmax, is what the offset is measured from)
        port.xon[:n] = [x if x > 0 else auto for x in per_priority(pb, "pfc_xon_bytes")]
        port.xoff[:n] = [-1] * n


def dynamic_xon(port, buf, prio: int) -> float:
    """Hysteresis part of the RESUME threshold of ``port``'s dynamic ingress group ``prio`` now, bytes.

    The dynamic XOFF minus ``xon_off`` (may be negative); the group resumes at
    ``max(xon, dynamic_xon)`` (:meth:`~.pfcport.PfcMixin._release_ingress`).
    """
    return port.dyn_alpha * (buf.shared - (buf.used - buf.hdr_used)) - port.xon_off[prio]
