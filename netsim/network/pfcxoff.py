"""PAUSE thresholds of an ingress, as the packet backend sets them: one formula for every backend.

The packet backend (``netsim/backends/packet/thresholds.py``) pauses the
ingress link ``a -> b`` for a priority when the bytes that arrived on it and
still sit in ``b`` exceed its XOFF. The flow backend asks the same question
of a standing queue (``netsim/backends/flow/pausegate.py``), so both read
the threshold from here:

* a switch ingress, static thresholds: ``pfc_xoff_bytes`` of that priority,
  automatic (0): twice XON, where XON is ``pfc_xon_bytes`` or, automatic,
  :func:`round_trip_bytes` of the link;
* a switch ingress, dynamic thresholds: ``pfc_dynamic_alpha x free`` of the
  shared pool; a queue ``Q`` alone in an otherwise empty pool of
  ``buffer_bytes`` pauses once ``Q >= alpha x (buffer - Q)``, i.e. at
  ``alpha x buffer / (1 + alpha)``;
* an NVLink/PCIe/NIC hop (credit-based): ``internal_xoff_bytes``, automatic
  as ``pfc_xoff_bytes``.

Node attributes override the run's values node by node, as in the packet
backend. :func:`xoff_above_ecn` raises an automatic switch XOFF above the
switch's largest ECN Kmax for ECN-capable congestion control, as
``thresholds.order_pfc_after_ecn`` does. Left out: the XOFF cut to the
shared pool (``thresholds.reserve_headroom``; it binds only when the
headroom of every ingress nearly fills ``buffer_bytes``).
"""
from __future__ import annotations

from typing import Mapping

from ..units import PS_PER_NS
from .params import per_priority


def round_trip_bytes(delay_ps: int, rate_bps: float, mtu_bytes: int) -> int:
    """Bytes a link delivers in one round trip plus two MTU packets: ``2 x delay x rate + 2 x MTU``.

    >>> round_trip_bytes(1_000_000, 100e9, 1500)   # 1 us at 100 Gbps
    28000
    """
    return int(2 * delay_ps / PS_PER_NS * rate_bps / 8e9) + 2 * mtu_bytes


def xoff_bytes(params: Mapping, *, delay_ps: int, rate_bps: float, mtu_bytes: int, prio: int,
               switch_ingress: bool) -> float:
    """XOFF of priority ``prio`` of an ingress link (``params``: the receiving node's parameters,
    its attributes applied), in bytes.

    >>> from netsim.network.params import resolve_params
    >>> xoff_bytes(resolve_params(), delay_ps=1_000_000, rate_bps=100e9, mtu_bytes=1500, prio=3,
    ...            switch_ingress=True)           # twice the automatic XON of a 1 us, 100 Gbps link
    56000
    """
    auto_xon = round_trip_bytes(delay_ps, rate_bps, mtu_bytes)
    if not switch_ingress:
        xon, xoff = params["internal_xon_bytes"], params["internal_xoff_bytes"]
    elif params["pfc_threshold"] == "dynamic":
        alpha = float(params["pfc_dynamic_alpha"])
        return alpha * float(params["buffer_bytes"]) / (1.0 + alpha)
    else:
        xon, xoff = per_priority(params, "pfc_xon_bytes")[prio], per_priority(params, "pfc_xoff_bytes")[prio]
    xon = xon if xon > 0 else auto_xon
    return xoff if xoff > 0 else 2 * xon


def xoff_above_ecn(params: Mapping, xoff: float, *, kmax_bytes: float | None, delay_ps: int, rate_bps: float,
                   prio: int, ecn_capable_cc: bool) -> float:
    """A switch ingress' XOFF raised to ``Kmax + round trip`` when the packet backend raises it, bytes.

    ``pfc_xoff_above_ecn`` on (or auto with an ECN-capable algorithm), ECN on, the
    XOFF automatic (``pfc_xoff_bytes`` 0 for ``prio``), static thresholds, and the
    switch marking (``kmax_bytes``: the largest Kmax of its egress ports, ``None``
    when none marks): ``max(xoff, kmax + round_trip_bytes)``; otherwise ``xoff``.

    >>> from netsim.network.params import resolve_params
    >>> p = resolve_params()
    >>> xoff_above_ecn(p, 56000, kmax_bytes=975000, delay_ps=1_000_000, rate_bps=100e9, prio=3,
    ...                ecn_capable_cc=True)      # DCTCP's K at 100 Gb/s + 28 kB
    1003000
    """
    mode = params["pfc_xoff_above_ecn"]
    if mode == "off" or (mode == "auto" and not ecn_capable_cc) or not params["ecn"] or kmax_bytes is None:
        return xoff
    if params["pfc_threshold"] == "dynamic" or per_priority(params, "pfc_xoff_bytes")[prio] > 0:
        return xoff
    gap = round_trip_bytes(delay_ps, rate_bps, int(params["mtu_bytes"]))
    return max(xoff, kmax_bytes + gap)
