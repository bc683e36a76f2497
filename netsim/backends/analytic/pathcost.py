"""What one analytic flow costs on its path: hop rates, lone-flow time, pacing link, host-stack cost.

The analytic backend (:mod:`.backend`) prices a flow of ``S`` bytes on a
routed path from the path alone, with no other flow in sight:

- its *lone-flow time* — packetized store-and-forward through the path's
  hops (:func:`.params.lone_flow_ps`, the packet backend's exact formula);
- its *wire bits* — ``S`` plus one header per packet of at most
  ``mtu_bytes`` (the path MTU, :class:`netsim.network.path.PathModel`);
- its *pacing link* — the first link with the path's lowest rate, where
  :mod:`.sharing` shares its bits with the other flows paced there — and the
  *tail*: the lone-flow time less the wire bits' time at that rate
  (propagation plus store-and-forward on every other hop);
- with a host stack, the transport's per-message overhead and per-connection
  rate cap (:meth:`netsim.network.path.PathModel.host_cost`, the rule every
  backend applies).

Everything is cached per path (and per flow size / congestion control);
:meth:`PathCosts.forget` drops it when a link changes rate or fails. Left
out: anything that depends on other flows (that is :mod:`.sharing` and
:mod:`.contention`), and routing (the backend's router picks the path).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from ...network.path import PathModel
from ...units import PS_PER_S
from .contention import LinkLoads
from .params import lone_flow_ps

#: cached (path, size) costs kept before the cache is dropped (bounds memory on runs with many sizes)
MAX_CACHED_COSTS = 200_000


class PathRates(NamedTuple):
    """Hop rates and delays of one path, and what bounds its packets.

    Attributes
    ----------
    rates_bps : list of float
        Rate of every hop, bit/s.
    delays_ns : list of float
        Propagation delay of every hop, ns.
    bottleneck_bps : float
        The lowest hop rate, bit/s.
    mtu_bytes : int
        Path MTU (largest packet incl. header), bytes.
    header_bytes : int
        Header bytes per packet.
    """

    rates_bps: list
    delays_ns: list
    bottleneck_bps: float
    mtu_bytes: int
    header_bytes: int


class FlowCost(NamedTuple):
    """Cost of one flow size alone on one path.

    Attributes
    ----------
    lone_ps : float
        Time to deliver the last byte alone on the path, ps.
    wire_bits : float
        Payload plus per-packet headers, bits.
    tail_ps : float
        ``lone_ps`` less ``wire_bits`` at the bottleneck rate: what is left after the pacing link, ps.
    link : tuple
        ``(a, b)``: the first bottleneck (pacing) link, directed.
    bottleneck_bps : float
        Its rate, bit/s.
    """

    lone_ps: float
    wire_bits: float
    tail_ps: float
    link: tuple
    bottleneck_bps: float


class PathCosts:
    """Cached per-path costs of one analytic run (see the module docstring).

    Parameters
    ----------
    pathmodel : netsim.network.path.PathModel
        The run's path model (hop rates, path MTU, host-stack rule).
    loads : contention.LinkLoads
        The run's per-link loads; :meth:`links` hands out their entries per path.
    """

    def __init__(self, pathmodel: PathModel, loads: LinkLoads):
        self.pathmodel = pathmodel
        self.loads = loads
        self._paths: dict[tuple, PathRates] = {}
        self._costs: dict[tuple, FlowCost] = {}       # (path, size_bytes) -> FlowCost
        self._host: dict[tuple, tuple] = {}           # (path, cc) -> (overhead_ps, rate cap bps)
        self._links: dict[tuple, tuple] = {}          # path -> contention.LinkLoad of every hop

    def rates(self, path: tuple) -> PathRates:
        """The :class:`PathRates` of the node sequence ``path`` (cached)."""
        info = self._paths.get(path)
        if info is None:
            pm = self.pathmodel.path(path)
            info = self._paths[path] = PathRates([r for r, _ in pm.hops], [d for _, d in pm.hops],
                                                 pm.bottleneck_bps, pm.mtu_bytes, pm.header_bytes)
        return info

    def alpha_beta(self, path: tuple) -> tuple[float, float]:
        """``(a_s, B_bps)`` of ``path``: latency of a full-packet flow and payload bandwidth.

        ``a`` = propagation + one full packet's store-and-forward on every hop but
        the bottleneck; ``B`` = bottleneck rate x payload/mtu.
        A flow whose size is a multiple of the payload takes exactly ``a + 8 S / B``.
        """
        rates, delays, bott, mtu, hdr = self.rates(path)
        k = rates.index(bott)
        a_ps = sum(delays) * 1000.0 + sum(mtu * 8 * PS_PER_S / r for i, r in enumerate(rates) if i != k)
        return a_ps / PS_PER_S, bott * (mtu - hdr) / mtu

    def cost(self, path: tuple, size_bytes: int) -> FlowCost:
        """The :class:`FlowCost` of ``size_bytes`` on ``path`` (cached)."""
        key = (path, size_bytes)
        c = self._costs.get(key)
        if c is None:
            rates, delays, bott, mtu, hdr = self.rates(path)
            lone = lone_flow_ps(rates, delays, size_bytes, mtu, hdr)
            npk = max(1, math.ceil(size_bytes / (mtu - hdr)))
            bits = (size_bytes + npk * hdr) * 8.0
            k = rates.index(bott)
            # the first bottleneck link is where this flow's bytes are paced
            c = FlowCost(lone, bits, lone - bits * PS_PER_S / bott, (path[k], path[k + 1]), bott)
            if len(self._costs) > MAX_CACHED_COSTS:
                self._costs.clear()
            self._costs[key] = c
        return c

    def host_cost(self, path: tuple, cc: str, bott: float, host_stack) -> tuple:
        """(per-message overhead ps, per-connection rate cap bps) of a flow on ``path``.

        :meth:`netsim.network.path.PathModel.host_cost` with ``host_stack`` (a
        :class:`netsim.hoststack.HostStack`); ``(0, bott)`` for paths that pay
        none. The cap never exceeds the bottleneck ``bott``.
        """
        key = (path, cc)
        v = self._host.get(key)
        if v is None:
            from ...hoststack import transport_of
            hc = self.pathmodel.host_cost(self.pathmodel.path(path), cc, transport_of(cc), host_stack)
            v = (0.0, bott) if hc is None else (float(hc.overhead_ps), min(bott, hc.wire_cap_bps))
            self._host[key] = v
        return v

    def links(self, path: tuple) -> tuple:
        """The :class:`.contention.LinkLoad` of every hop of ``path`` (cached)."""
        links = self._links.get(path)
        if links is None:
            links = self._links[path] = self.loads.of_path(path, self.rates(path).rates_bps)
        return links

    def forget(self) -> None:
        """Drop everything derived from link rates and routes (a link changed rate or failed)."""
        self.pathmodel.invalidate()
        self._paths.clear()
        self._costs.clear()
        self._host.clear()
        self._links.clear()
