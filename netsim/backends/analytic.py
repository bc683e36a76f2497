"""Analytic backend: closed-form alpha-beta cost per flow, no fabric contention.

A flow of ``S`` bytes on its routed path takes exactly the time it would take
*alone* on that path with packetized store-and-forward — the packet helper's
:func:`netsim.network.ideal.ideal_fct_exact_ns` (tandem of deterministic
servers; packets of at most ``mtu_bytes`` incl. ``header_bytes``). For whole
packets that is ``a + 8 W / r_b``: ``W`` wire bytes, ``r_b`` the bottleneck
rate, ``a`` = propagation plus one packet's serialization on every other
hop. Plus ``sw_latency_ns`` per message (host/NCCL software overhead).

The only interaction between flows: each flow's bytes are paced through the
**first bottleneck link of its path** (the first link with the path's lowest
rate — a GPU's NVLink, a NIC's uplink), and flows charged to the same such
link share it: equally (``source_sharing=fair``, processor sharing, what the
packet backend's per-flow interleaving and the flow backend's max-min give)
or one after another (``fifo``). A flow's time is then its drain time there
plus the rest of its lone-flow time (latency, store-and-forward). Without
this a rank could send to all its peers at full rate at once and an
all-to-all would take ``1/(n-1)`` of its real time. Nothing else is shared:
no queueing on other links, no incast at receivers, no ACK traffic, no ECN,
no PFC, no congestion control (``cc`` is recorded but ignored), no loss.

Host stack and link changes (issue 5): with ``backend.host_stack`` set (a
:class:`netsim.hoststack.HostStack`), a flow whose path crosses a NIC pays
the transport's per-message overhead (added to its latency) and is capped at
the per-connection rate (kernel TCP ≈ 42 Gbit/s); capped flows share their
link max-min. ``--set host.KEY=VALUE`` or ``--set host_stack=on`` turn it on
as on the packet backend. ``set_link_rate`` / ``fail_link`` implement the
:mod:`netsim.whatif` link-change protocol.

Parameters: :data:`ANALYTIC_PARAMS` (``mtu_bytes`` and ``header_bytes``
default to the packet backend's values so the two agree on wire bytes);
every other packet-network ``--set`` name is accepted and ignored.
Two SimPy events per flow (drain, delivery).
"""
from __future__ import annotations

import math
from typing import Any

import simpy

from ..errors import InputError
from ..params import Param, ParamTable
from ..records import EMPTY_TAG, FlowTag, make_record
from ..units import PS_PER_S, ps_to_ns
from .base import Backend, TraceSinks, register_backend
from ..network.ideal import ideal_fct_exact_ns

try:  # share the packet backend's wire parameters when it is installed
    from ..network.params import SIM_PARAMS as _SIM
except ImportError:  # pragma: no cover - packet backend absent
    _SIM = None

_MTU = _SIM["mtu_bytes"] if _SIM is not None else Param(
    "mtu_bytes", 1500, "size", "largest packet on the wire, headers included", "IEEE 802.3 Ethernet MTU")
_HDR = _SIM["header_bytes"] if _SIM is not None else Param(
    "header_bytes", 62, "size", "header bytes per data packet", "RoCEv2 headers (IBTA Annex A17)")

ANALYTIC_PARAMS = ParamTable("analytic backend", [
    _MTU,
    _HDR,
    Param("sw_latency_ns", 0, "time",
          "software latency added to every message (0: the network alone; NCCL's own tuning model charges "
          "~3.4 us per ring step on NVLink and 8.4 us per call, Simple protocol)",
          "NVIDIA NCCL src/graph/tuning.cc (hwLat NVLink Ring/Simple 3.4 us, baseLat Ring/Simple 8.4 us)",
          minimum=0),
    Param("source_sharing", "fair", "choice",
          "how flows charged to the same bottleneck link share it: fair = equal shares (processor sharing), "
          "as the packet and flow backends' fair queueing / max-min do; fifo = one after another, the "
          "ideal of one ordered stream (NCCL's connection FIFO)",
          "netsim choice (issue #6: the analytic backend must agree with the packet backend without contention)",
          choices=("fair", "fifo")),
])


_FABRIC_KINDS = ("ethernet", "infiniband")  # links that leave a host (as the packet backend)


def _check_cc(cc: str, cc_params: dict | None) -> None:
    """Reject an unknown ``cc`` or ``cc_params`` entry although the analytic model ignores them.

    A typo must fail the same way on every backend rather than pass silently here.
    """
    from ..transport.cc.config import cc_class
    cc_class(cc or "none", where="--cc")
    for name, over in (cc_params or {}).items():
        cc_class(name, where="--cc-param").PARAMS.resolve(dict(over or {}), source=f"--cc-param {name}")


def _router(graph, seed: int):
    from ..topology.routing import Router
    return Router(graph, seed=seed)


def resolve_analytic_params(params: dict | None) -> dict:
    """Analytic parameters from ``--set`` overrides; packet-only names are checked, then ignored."""
    out = ANALYTIC_PARAMS.defaults()
    for key, value in (params or {}).items():
        if key in ANALYTIC_PARAMS:
            out[key] = ANALYTIC_PARAMS.parse_one(key, value)
        elif _SIM is not None and key.split(".")[0] in _SIM:
            from ..network.params import parse_override
            parse_override(key, value)  # not modelled here, but checked as on every backend
        else:
            raise ANALYTIC_PARAMS.unknown(key, where="--set")
    if out["header_bytes"] >= out["mtu_bytes"]:
        raise InputError("header_bytes must be smaller than mtu_bytes", where="--set",
                         value=out["header_bytes"], accepted=f"< {out['mtu_bytes']}")
    return out


def _default_priorities(params: dict | None) -> dict[str, int]:
    """``{"roce": p, "tcp": p}``: the packet backend's ``roce_priority`` / ``tcp_priority`` (``--set`` wins).

    The analytic model has no priorities; the value only goes into ``fct.csv``
    so that its ``priority`` column matches the packet and flow backends'.
    """
    params = params or {}
    out = {"roce": 3, "tcp": 0}
    for transport in out:
        key = f"{transport}_priority"
        if _SIM is not None:
            out[transport] = int(_SIM.parse_one(key, params[key]) if key in params else _SIM[key].default)
    return out


def lone_flow_ps(rates_bps: list[float], delays_ns: list[float], size_bytes: int, mtu_bytes: int,
                 header_bytes: int) -> float:
    """Time for a flow alone on a path to deliver its last byte, ps.

    Delegates to :func:`netsim.network.ideal.ideal_fct_exact_ns` (the packet
    backend's exact lone-flow formula), so ``ideal_fct_ns`` agrees across backends.

    >>> lone_flow_ps([8e9, 8e9], [0, 0], 2000, 1000, 0)  # 2 packets of 1 us each, 2 hops
    3000000.0
    """
    return ideal_fct_exact_ns(list(zip(rates_bps, delays_ns)), size_bytes, mtu_bytes, header_bytes) * 1000.0


class _Flow:
    __slots__ = ("bits", "cap", "rate", "tail", "lone", "meta", "event")

    def __init__(self, bits: float, cap: float, tail: float, lone: float, meta: tuple, event):
        self.bits, self.cap, self.rate, self.tail, self.lone, self.meta, self.event = \
            bits, cap, cap, tail, lone, meta, event


class _Share:
    __slots__ = ("rate_bps", "flows", "last_ps", "gen")

    def __init__(self, rate_bps: float, now: int):
        self.rate_bps, self.flows, self.last_ps, self.gen = rate_bps, [], now, 0


class AnalyticBackend(Backend):
    """Closed-form per-flow cost; see the module docstring for what is modelled."""

    name = "analytic"

    def __init__(self, graph, *, env: simpy.Environment, params: dict, seed: int = 0, cc: str = "none",
                 cc_params: dict | None = None, sinks: TraceSinks | None = None):
        self.graph = graph
        self.env = env
        from ..hoststack import HostStack, split_host_params
        params, host_params = split_host_params(params)
        self.params = resolve_analytic_params(params)
        _check_cc(cc, cc_params)
        self.cc = cc
        self.seed = seed
        self.sinks = sinks or TraceSinks()
        self.sink = self.sinks.fct
        self.router = _router(graph, seed)
        self._mtu = self.params["mtu_bytes"]
        self._hdr = self.params["header_bytes"]
        self._sw_ps = self.params["sw_latency_ns"] * 1000
        self._paths: dict[tuple, tuple] = {}  # path -> (rates, delays, bottleneck_bps, mtu)
        self._routes: dict[tuple, list] = {}  # (src, dst) -> equal-cost paths (at most 2 kept)
        self._costs: dict[tuple, tuple] = {}  # (path, size) -> see _cost
        self._busy_ps: dict[tuple, float] = {}  # fifo: first directed link -> time it is free (ps)
        self._shares: dict[tuple, _Share] = {}  # fair: first directed link -> its active flows
        self._fifo = self.params["source_sharing"] == "fifo"
        # netsim.hoststack.HostStack: from --set host.KEY / host_stack=on (as the packet backend), or the runtime's
        on = _SIM is not None and params.get("host_stack") is not None and _SIM.parse_one("host_stack",
                                                                                         params["host_stack"])
        self.host_stack = HostStack(host_params) if (host_params or on) else None
        self._host: dict[tuple, tuple] = {}     # (path, cc) -> (overhead_ps, rate cap bps)
        self._prio_by_transport = _default_priorities(params)
        self._prio: dict[str, int] = {}          # cc name -> default priority (as the packet backend)
        self._next_id = 0
        self.flows = self.completed = self.bytes_delivered = self.events = 0

    # -- path model --------------------------------------------------------------------------------
    def _path_info(self, path: tuple) -> tuple:
        info = self._paths.get(path)
        if info is None:
            g = self.graph
            edges = [g.edges[u, v] for u, v in zip(path[:-1], path[1:])]
            rates = [float(e["rate_bps"]) for e in edges]
            delays = [float(e["delay_ns"]) for e in edges]
            mtu = min([self._mtu] + [int(g.nodes[x]["mtu_bytes"]) for x in path if "mtu_bytes" in g.nodes[x]])
            info = self._paths[path] = (rates, delays, min(rates), mtu)
        return info

    def _default_priority(self, cc_name: str) -> int:
        """Priority of a flow that names none: ``roce_priority`` or ``tcp_priority`` by transport."""
        prio = self._prio.get(cc_name)
        if prio is None:
            from ..transport.cc.config import cc_class
            transport = getattr(cc_class(cc_name or "none", where="cc"), "transport", "roce")
            prio = self._prio[cc_name] = self._prio_by_transport["tcp" if transport == "tcp" else "roce"]
        return prio

    def path_alpha_beta(self, src: str, dst: str, flow_id: int = 0) -> tuple[float, float]:
        """``(a_s, B_bps)`` of the path: latency of a full-packet flow and payload bandwidth.

        ``a`` = propagation + one full packet's store-and-forward on every hop but
        the bottleneck + ``sw_latency_ns``; ``B`` = bottleneck rate x payload/mtu.
        A flow whose size is a multiple of the payload takes exactly ``a + 8 S / B``.
        """
        rates, delays, bott, mtu = self._path_info(tuple(self.router.path(src, dst, flow_id)))
        k = rates.index(bott)
        a_ps = sum(delays) * 1000.0 + sum(mtu * 8 * PS_PER_S / r for i, r in enumerate(rates) if i != k)
        return (a_ps + self._sw_ps) / PS_PER_S, bott * (mtu - self._hdr) / mtu

    # -- the seam ----------------------------------------------------------------------------------
    def _route(self, src: str, dst: str, fid: int) -> tuple:
        paths = self._routes.get((src, dst))
        if paths is None:
            paths = self._routes[(src, dst)] = [tuple(p) for p in self.router.paths(src, dst, limit=2)]
        return paths[0] if len(paths) == 1 else tuple(self.router.path(src, dst, fid))

    def _cost(self, path: tuple, size_bytes: int) -> tuple:
        """``(lone_ps, wire_bits, tail_ps, link, bottleneck_bps)`` of ``size_bytes`` on ``path`` (cached)."""
        key = (path, size_bytes)
        c = self._costs.get(key)
        if c is None:
            rates, delays, bott, mtu = self._path_info(path)
            lone = lone_flow_ps(rates, delays, size_bytes, mtu, self._hdr) + self._sw_ps
            npk = max(1, math.ceil(size_bytes / (mtu - self._hdr)))
            bits = (size_bytes + npk * self._hdr) * 8.0
            k = rates.index(bott)
            # the first bottleneck link is where this flow's bytes are paced
            c = (lone, bits, lone - bits * PS_PER_S / bott, (path[k], path[k + 1]), bott)
            if len(self._costs) > 200_000:
                self._costs.clear()
            self._costs[key] = c
        return c

    def send(self, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
             cc: str | None = None, priority: int | None = None) -> simpy.Event:
        fid = self._next_id
        self._next_id += 1
        self.flows += 1
        now = self.env.now
        ccname = cc or self.cc
        meta = (fid, src, dst, int(size_bytes), now, tag, ccname,
                self._default_priority(ccname) if priority is None else int(priority))
        ev = self.env.event()
        ev.callbacks.append(self._done)
        if src == dst:
            return self._finish_at(meta, now, 0.0, ev)
        path = self._route(src, dst, fid)
        lone, bits, tail, link, bott = self._cost(path, int(size_bytes))
        cap = bott
        if self.host_stack is not None:        # host CPU cost: per-message delay, per-connection cap
            over_ps, cap = self._host_cost(path, meta[6], bott)
            tail += over_ps
        if self._fifo:
            start_tx = max(float(now), self._busy_ps.get(link, 0.0))
            self._busy_ps[link] = start_tx + bits * PS_PER_S / cap
            return self._finish_at(meta, start_tx + bits * PS_PER_S / cap + tail, lone, ev)
        sh = self._shares.get(link)
        if sh is None:
            sh = self._shares[link] = _Share(bott, now)
        self._advance(sh, now)
        sh.flows.append(_Flow(bits, cap, tail, lone, meta, ev))
        self._reschedule(sh)
        return ev

    # -- processor sharing of a source's first link --------------------------------------------------
    def _advance(self, sh: "_Share", now: int) -> None:
        dt = (now - sh.last_ps) / PS_PER_S
        if dt > 0:
            for f in sh.flows:
                f.bits -= f.rate * dt
        sh.last_ps = now

    def _reschedule(self, sh: "_Share") -> None:
        sh.gen += 1
        if not sh.flows:
            return
        flows = sh.flows
        if len(flows) == 1:
            f = flows[0]
            f.rate = min(sh.rate_bps, f.cap)
            t_ps = max(f.bits, 0.0) / f.rate * PS_PER_S
        else:
            share = sh.rate_bps / len(flows)  # every flow here is bottlenecked by this link: equal shares
            if any(f.cap < share for f in flows):
                self._water_fill(sh)          # host-stack caps below the fair share
            else:
                for f in flows:
                    f.rate = share
            t_ps = min(f.bits / f.rate for f in flows) * PS_PER_S
        gen = sh.gen
        ev = self.env.timeout(max(0, int(round(t_ps))))
        self.events += 1
        ev.callbacks.append(lambda _e: self._drained(sh) if sh.gen == gen else None)

    @staticmethod
    def _water_fill(sh: "_Share") -> None:
        """Max-min shares of one link among flows with per-flow caps (host-stack limits)."""
        left, n = sh.rate_bps, len(sh.flows)
        for f in sorted(sh.flows, key=lambda f: f.cap):
            f.rate = min(f.cap, left / n)
            left -= f.rate
            n -= 1

    # -- host stack and link changes (netsim.hoststack, netsim.whatif protocol) -----------------------
    def _host_cost(self, path: tuple, cc: str, bott: float) -> tuple:
        """(per-message overhead ps, per-connection rate cap bps) of a flow on ``path``.

        As the packet backend: applies when the path leaves through a NIC (a ``nic`` node or an
        Ethernet/InfiniBand link); NVLink/PCIe-only paths pay nothing, ``(0, bott)``. Transport:
        the algorithm's; for ``--cc none`` the NIC's ``nic_kind`` (ethernet -> tcp). Line rate:
        the NIC's fabric link, else the path's first Ethernet/InfiniBand link.
        """
        key = (path, cc)
        v = self._host.get(key)
        if v is None:
            from ..hoststack import NIC_TRANSPORT, transport_of
            g = self.graph
            nics = [i for i, x in enumerate(path) if g.nodes[x].get("kind") == "nic"]
            fabric = [g.edges[u, w]["rate_bps"] for u, w in zip(path[:-1], path[1:])
                      if g.edges[u, w].get("kind") in _FABRIC_KINDS]
            if not nics and not fabric:
                v = (0.0, bott)
            else:
                transport = transport_of(cc)
                line = float(fabric[0]) if fabric else bott
                if nics:
                    i = nics[0]
                    nic = path[i]
                    if cc in (None, "", "none"):
                        transport = NIC_TRANSPORT.get(g.nodes[nic].get("nic_kind", "ethernet"), "tcp")
                    if 0 < i < len(path) - 1:
                        line = max(float(g.edges[nic, x]["rate_bps"]) for x in (path[i - 1], path[i + 1])
                                   if g.edges[nic, x].get("kind") != "pcie")
                hs = self.host_stack
                v = (hs.message_overhead_ns(transport) * 1000.0, min(bott, hs.rate_cap_bps(transport, line)))
            self._host[key] = v
        return v

    def set_link_rate(self, a: str, b: str, rate_bps: float) -> None:
        """Link a–b runs at ``rate_bps`` from now on.

        Flows paced on this link (their first bottleneck) continue at the new
        rate; flows already scheduled elsewhere keep their schedule; new flows
        see the new rate.
        """
        self.graph.edges[a, b]["rate_bps"] = float(rate_bps)
        self._paths.clear()
        self._costs.clear()
        self._host.clear()
        for link in ((a, b), (b, a)):
            sh = self._shares.get(link)
            if sh is not None:
                self._advance(sh, self.env.now)
                if sh.flows:
                    sh.rate_bps = float(rate_bps)   # flows paced on this link continue at the new rate
                    self._reschedule(sh)
                else:
                    del self._shares[link]

    def fail_link(self, a: str, b: str) -> None:
        """Remove link a–b: new flows route around it (flows already scheduled finish as planned)."""
        self.graph.remove_edge(a, b)
        self.router.invalidate()
        self._routes.clear()
        self._paths.clear()
        self._costs.clear()
        self._host.clear()

    def _drained(self, sh: "_Share") -> None:
        now = self.env.now
        self._advance(sh, now)
        keep = []
        for f in sh.flows:
            if f.bits * PS_PER_S <= f.rate * 1.0:  # within 1 ps of done
                self._finish_at(f.meta, now + f.tail, f.lone, f.event)
            else:
                keep.append(f)
        sh.flows = keep
        self._reschedule(sh)

    def _finish_at(self, meta: tuple, end_ps: float, lone_ps: float, ev: simpy.Event) -> simpy.Event:
        """Make ``ev`` succeed at ``end_ps`` with the flow's record (one scheduled event)."""
        fid, src, dst, size, start_ps, tag, cc, prio = meta
        now = self.env.now
        end = max(int(round(end_ps)), now)
        ideal_ns = max(1, ps_to_ns(int(round(lone_ps)))) if lone_ps > 0 else 0
        rec = make_record(fid, src, dst, size, ps_to_ns(start_ps), ps_to_ns(end), ideal_ns, tag, cc=cc,
                          priority=prio)
        # what simpy.Timeout does in its constructor, applied to the event already handed out
        ev._ok = True
        ev._value = rec
        self.env.schedule(ev, simpy.events.NORMAL, end - now)
        self.events += 1
        return ev

    def _done(self, ev) -> None:
        rec = ev.value
        self.completed += 1
        self.bytes_delivered += rec.size_bytes
        if self.sink is not None:
            self.sink.add(rec)

    def stats(self) -> dict[str, Any]:
        return {"backend": self.name, "flows": self.flows, "completed": self.completed,
                "bytes_delivered": self.bytes_delivered, "sim_time_ns": ps_to_ns(int(self.env.now)),
                "events": self.events}

    def close(self) -> None:
        if self.sink is not None and hasattr(self.sink, "flush"):
            self.sink.flush()


@register_backend("analytic")
def create_analytic(graph, *, env, params, seed=0, cc="none", cc_params=None, sinks=None) -> AnalyticBackend:
    """Factory for ``--backend analytic``."""
    return AnalyticBackend(graph, env=env, params=params, seed=seed, cc=cc, cc_params=cc_params, sinks=sinks)
