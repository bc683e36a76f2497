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
backend. Left out: the automatic XOFF raised above ECN Kmax for ECN-capable
congestion control and cut to the shared pool (both in
``thresholds.py``): this module gives the un-raised, un-cut value.
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
