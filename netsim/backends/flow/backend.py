"""The flow-level (fluid) backend: max-min fair sharing of directed links.

What is modelled
----------------
* Every full-duplex edge of the topology is two directed links of capacity
  ``rate_bps``. A flow follows ``Router.path`` (ECMP hash per flow) and
  occupies every directed link of its path from its start until its last byte
  has left the sender (fluid completion).
* Rates are max-min fair (:mod:`.maxmin`), recomputed only when a flow starts
  or ends. Changes at one instant are coalesced into one recomputation, and
  only the connected component (links ↔ flows) touched by the change is
  re-solved. One pending SimPy event exists for the backend: the next fluid
  completion.
* Wire overhead: a flow carries ``size · mtu/(mtu − header)`` wire bytes, so
  links carry payload at ``rate · payload/(payload + header)``.
* Latency: a flow completes ``latency`` after its fluid completion, where
  ``latency = ideal_fct − wire_bytes/bottleneck_rate`` — propagation and the
  store-and-forward of the first packet — so a flow alone on its path finishes
  in exactly :func:`netsim.backends.ideal.ideal_fct_ns`.
* Congestion control as a model (:mod:`.ccmodel`): a per-algorithm efficiency
  on shared links, a per-flow cap, a slow-start ramp added to the latency.
* Links are lossless: no drops, ECN marks or PFC pauses; queues are not
  modelled (``queues.csv``/``pfc.csv`` stay empty; ``stats()`` says so).

Deliberately left out: priorities (all classes share max-min fairly),
per-packet spraying (``routing=spray`` is treated as ECMP), PFC head-of-line
blocking, queueing delay.
"""
from __future__ import annotations

import heapq
import math
import time
from itertools import chain
from typing import Any

import numpy as np
import simpy

from ...errors import InputError
from ...params import Param, ParamTable
from ...records import EMPTY_TAG, FlowRecord, FlowTag
from ...units import PS_PER_NS, PS_PER_S, ps_to_ns
from ..base import Backend, TraceSinks, register_backend
from .ccmodel import CCModel, resolve_model
from .maxmin import maxmin_csr, maxmin_small
from .portfair import hol_capacities, is_flat, may_block, port_fair

#: components with at most this many flows are solved in pure Python
SMALL_COMPONENT = 6
#: a flow whose remaining wire bytes fall below this is complete (float drift guard)
EPS_BYTES = 1e-6
#: bound on how often a recomputation defers itself behind same-instant events
MAX_DEFER = 64


class _Flow:
    __slots__ = ("fid", "src", "dst", "size", "start_ps", "links", "rem", "t_upd", "rate", "finish",
                 "ver", "cap", "lat_ps", "ideal_ns", "event", "tag", "cc", "prio", "eta", "lossless",
                 "solo")


class _PathInfo:
    """Constants of one path: directed link ids, bottleneck (bytes/ps), MTU, RTT (ps)."""

    __slots__ = ("path", "links", "bott", "mtu", "hdr", "rtt", "first_rate", "consts")

    def __init__(self, path, links, bott, mtu, hdr, rtt, first_rate):
        self.path, self.links, self.bott, self.mtu, self.hdr = path, links, bott, mtu, hdr
        self.rtt, self.first_rate = rtt, first_rate
        self.consts: dict = {}


#: parameters of the flow backend itself (``--set`` accepts them next to the network's)
FLOW_PARAMS = ParamTable("flow-backend", [
    Param("flow_fairness", "auto", "choice",
          "how a link is shared: maxmin (per flow), port (per ingress port, as PFC/credit backpressure "
          "shares a FIFO), auto (port for lossless flows when pfc is on, else maxmin)",
          "netsim flow backend; port fairness of PFC: docs/flow-backend.md (matches the packet backend)",
          choices=("auto", "maxmin", "port")),
    Param("flow_pfc_hol", True, "bool",
          "with port fairness, also model PFC head-of-line blocking: an ingress paused for a flow held "
          "downstream slows every flow on it (one pass)",
          "PFC congestion spreading / victim flows (IEEE 802.1Qbb; netsim issue #2 HoL test)"),
    Param("flow_port_fair_max_flows", 256, "int",
          "largest connected component solved with port fairness (larger ones fall back to max-min, "
          "counted in stats as port_fair_fallbacks)",
          "netsim choice: pure-Python port fairness costs ~0.1-0.6 ms per flow per recomputation "
          "(measured, docs/flow-backend.md); beyond this the vectorized max-min solver is used", minimum=0),
])


def _sim_params(params: dict) -> dict:
    """Resolve network parameters against the packet backend's table when present."""
    params = dict(params or {})
    own = FLOW_PARAMS.resolve({k: params.pop(k) for k in list(params) if k in FLOW_PARAMS},
                              source="--set")
    try:
        from ..packet.defaults import lossless_set, resolve_params
    except ModuleNotFoundError:  # packet helper's table not there yet
        out = {"mtu_bytes": 1500, "header_bytes": 62, "ack_bytes": 64, "routing": "ecmp",
               "roce_priority": 3, "tcp_priority": 0, "pfc": True}
        out.update(params)
        out["_lossless"] = frozenset({3}) if out["pfc"] else frozenset()
    else:
        out = resolve_params(params, source="--set")
        out["_lossless"] = lossless_set(out)
    out.update(own)
    return out


def _ideal_fn():
    try:
        from ..ideal import hops, ideal_fct_exact_ns

        def ideal_fct_ns(graph, path, size_bytes, mtu_bytes, header_bytes):
            """The packet helper's ideal FCT, unrounded (fractional ns)."""
            return ideal_fct_exact_ns(hops(graph, path), size_bytes, mtu_bytes, header_bytes)
        return ideal_fct_ns
    except ImportError:  # packet helper's module not there yet: same formula, local
        def ideal_fct_ns(graph, path, size_bytes, mtu_bytes, header_bytes):
            payload = mtu_bytes - header_bytes
            npk = -(-size_bytes // payload)
            first = min(size_bytes, payload) + header_bytes
            wire = size_bytes + npk * header_bytes
            t = 0.0
            rmin = math.inf
            for u, v in zip(path, path[1:]):
                e = graph.edges[u, v]
                t += e["delay_ns"] + first * 8e9 / e["rate_bps"]
                rmin = min(rmin, e["rate_bps"])
            return t + (wire - first) * 8e9 / rmin
        return ideal_fct_ns


class FlowBackend(Backend):
    """Max-min fair fluid network over a topology graph (``--backend flow``)."""

    name = "flow"

    def __init__(self, graph, *, env: simpy.Environment, params: dict | None = None, seed: int = 0,
                 cc: str = "none", cc_params: dict | None = None, sinks: TraceSinks | None = None,
                 router=None):
        self.graph = graph
        self.env = env
        self.params = _sim_params(params or {})
        self.seed = seed
        self.cc = cc or "none"
        self.cc_params = cc_params or {}
        self.sinks = sinks or TraceSinks()
        self.sink = self.sinks.fct
        if router is None:
            from ...topology import Router
            router = Router(graph, seed=seed)
        self.router = router
        self._ideal = _ideal_fn()
        self._models: dict[str, CCModel] = {}
        self._prio_default: dict[str, int] = {}
        fair = self.params["flow_fairness"]
        self._lossless_prios = self.params["_lossless"] if fair == "auto" else (
            frozenset(range(8)) if fair == "port" else frozenset())
        self._port_max = int(self.params["flow_port_fair_max_flows"])
        self.port_fair_solves = 0
        self.port_fair_fallbacks = 0
        self.hol_paused_links = 0
        self._hol = bool(self.params["flow_pfc_hol"])
        self._model(self.cc)  # validate the default algorithm now
        # directed links
        self._lid: dict[tuple[str, str], int] = {}
        caps: list[float] = []
        for u, v in sorted((min(a, b), max(a, b)) for a, b in graph.edges()):
            rate = float(graph.edges[u, v]["rate_bps"]) / 8.0 / PS_PER_S  # bytes per ps
            for a, b in ((u, v), (v, u)):
                self._lid[(a, b)] = len(caps)
                caps.append(rate)
        self._cap = caps
        self._cap_arr = np.asarray(caps, dtype=np.float64)
        self._users: list[dict[int, _Flow]] = [dict() for _ in caps]
        # caches
        self._pair: dict[tuple[str, str], _PathInfo | None] = {}
        self._path_info: dict[tuple, _PathInfo] = {}
        # dynamic state
        self._heap: list = []
        self._seq = 0
        self._next_fid = 0
        self._active = 0
        self._dirty: set[int] = set()
        self._settle_pending = False
        self._defer = 0
        self._timers: set[int] = set()
        # counters
        self.n_flows = 0
        self.n_completed = 0
        self.bytes_delivered = 0
        self.events = 0
        self.recomputations = 0
        self.recompute_wall_s = 0.0
        self.max_component = 0
        self.max_active = 0

    # -- set-up helpers ---------------------------------------------------------
    def _model(self, name: str) -> CCModel:
        m = self._models.get(name)
        if m is None:
            m = self._models[name] = resolve_model(name, self.cc_params)
            key = "tcp_priority" if m.lossy else "roce_priority"
            self._prio_default[name] = int(self.params.get(key, 0))
        return m

    def _lookup(self, src: str, dst: str, fid: int) -> "_PathInfo":
        """Path of a flow and its cached constants (one cache entry per single-path pair)."""
        key = (src, dst)
        if key not in self._pair:
            paths = self.router.paths(src, dst, limit=2) if hasattr(self.router, "paths") else ()
            self._pair[key] = self._info(tuple(paths[0])) if len(paths) == 1 else None
        info = self._pair[key]
        if info is None:
            info = self._info(tuple(self.router.path(src, dst, fid)))
        return info

    def _info(self, path: tuple) -> "_PathInfo":
        info = self._path_info.get(path)
        if info is not None:
            return info
        if len(self._path_info) > 500_000:
            self._path_info.clear()
        lid = self._lid
        links = tuple(lid[(a, b)] for a, b in zip(path, path[1:]))
        mtu = int(self.graph.nodes[path[0]].get("mtu_bytes", self.params["mtu_bytes"]))
        hdr = int(self.params["header_bytes"])
        if mtu <= hdr:
            raise InputError("mtu_bytes must exceed header_bytes", where="parameter mtu_bytes",
                             value=mtu, accepted=f"more than header_bytes={hdr}")
        ack = int(self.params.get("ack_bytes", 64))
        rtt = 0.0
        for a, b in zip(path, path[1:]):
            e = self.graph.edges[a, b]
            rtt += 2 * float(e["delay_ns"]) * PS_PER_NS + (mtu + ack) * 8 * PS_PER_S / float(e["rate_bps"])
        info = self._path_info[path] = _PathInfo(path, links, min(self._cap[l] for l in links), mtu, hdr,
                                                 rtt, self._cap[links[0]])
        return info

    def _flow_consts(self, info: "_PathInfo", size: int, model: CCModel) -> tuple:
        """``(wire_bytes, ideal_ns, latency_ps, cap)`` of a flow of ``size`` on ``info``'s path."""
        key = (size, model.name)
        v = info.consts.get(key)
        if v is None:
            if len(info.consts) > 4096:
                info.consts.clear()
            wire = size * info.mtu / (info.mtu - info.hdr)
            ideal_ns = float(self._ideal(self.graph, list(info.path), size, info.mtu, info.hdr))
            cap = model.rate_cap(info.first_rate)
            lat = max(0.0, ideal_ns * PS_PER_NS - wire / info.bott)
            if model.init_cwnd_pkts:
                lat += model.ramp_ps(wire, min(info.bott, cap), info.rtt, info.mtu)
            v = info.consts[key] = (wire, ideal_ns, lat, cap)
        return v

    # -- the seam ---------------------------------------------------------------
    def send(self, src: str, dst: str, size_bytes: int, tag: FlowTag = EMPTY_TAG, *,
             cc: str | None = None, priority: int | None = None) -> simpy.Event:
        if size_bytes <= 0:
            raise InputError("flow size must be positive", where=f"flow {src}->{dst}", value=size_bytes,
                             accepted="a positive number of bytes")
        env = self.env
        now = env.now
        fid = self._next_fid
        self._next_fid = fid + 1
        ccname = cc or self.cc
        model = self._models.get(ccname) or self._model(ccname)
        info = self._pair.get((src, dst))
        if info is None:
            if src == dst:
                raise InputError("flow source equals destination", where="flow", value=src)
            info = self._lookup(src, dst, fid)
        wire, ideal_ns, lat, cap = self._flow_consts(info, size_bytes, model)
        f = _Flow()
        f.fid = fid
        f.src = src
        f.dst = dst
        f.size = size_bytes
        f.start_ps = f.t_upd = now
        f.links = links = info.links
        f.rem = wire
        f.rate = 0.0
        f.finish = -1
        f.ver = 0
        f.cap = cap
        f.solo = info.bott if info.bott < cap else cap
        f.ideal_ns = ideal_ns
        f.lat_ps = lat
        f.event = ev = simpy.Event(env)
        f.tag = tag
        f.cc = ccname
        f.prio = self._prio_default[ccname] if priority is None else priority
        f.eta = model.efficiency
        f.lossless = f.prio in self._lossless_prios
        users = self._users
        for l in links:
            users[l][fid] = f
        self._dirty.update(links)
        self.n_flows += 1
        self._active += 1
        if self._active > self.max_active:
            self.max_active = self._active
        if not self._settle_pending:
            self._request_settle()
        return ev

    # -- recomputation ----------------------------------------------------------
    def _request_settle(self) -> None:
        if not self._settle_pending:
            self._settle_pending = True
            self._defer = 0
            self.env.timeout(0).callbacks.append(self._settle)

    def _settle(self, _ev) -> None:
        env = self.env
        if self._defer < MAX_DEFER and env.peek() == env.now:
            # more work at this instant is queued (processes resuming, more sends):
            # go behind it so that all same-instant changes share one recomputation
            self._defer += 1
            env.timeout(0).callbacks.append(self._settle)
            return
        self._settle_pending = False
        self.events += 1
        dirty, self._dirty = self._dirty, set()
        if dirty:
            t0 = time.perf_counter()
            self._recompute(dirty)
            self.recompute_wall_s += time.perf_counter() - t0
        self._ensure_timer()

    def _components(self, dirty: set[int]) -> list[list[_Flow]]:
        """Connected components (links <-> active flows) reached from the ``dirty`` links.

        Each component is sorted by flow id; components come in order of their
        smallest dirty link, so the result is deterministic.
        """
        users = self._users
        seen: set[int] = set()
        out = []
        for seed in sorted(dirty):
            if seed in seen or not users[seed]:
                continue
            seen.add(seed)
            flows: dict[int, _Flow] = {}
            stack = [seed]
            while stack:
                for fid, f in users[stack.pop()].items():
                    if fid not in flows:
                        flows[fid] = f
                        for l2 in f.links:
                            if l2 not in seen:
                                seen.add(l2)
                                stack.append(l2)
            out.append([flows[k] for k in sorted(flows)] if len(flows) > 1 else list(flows.values()))
        return out

    def _link_caps(self, comp: list[_Flow]) -> dict[int, float]:
        """Capacity of every link of ``comp`` (bytes/ps), times the CC efficiency when shared."""
        cap = self._cap
        users = self._users
        lcap = {}
        for f in comp:
            for l in f.links:
                if l not in lcap:
                    u = users[l]
                    lcap[l] = cap[l] * (min(g.eta for g in u.values()) if len(u) > 1 else 1.0)
        return lcap

    def _maxmin(self, comp: list[_Flow]) -> list[float]:
        """Vectorized max-min fair rates of ``comp``."""
        n = len(comp)
        lens = np.fromiter((len(f.links) for f in comp), dtype=np.int64, count=n)
        glinks = np.fromiter(chain.from_iterable(f.links for f in comp), dtype=np.int64,
                             count=int(lens.sum()))
        uniq, local = np.unique(glinks, return_inverse=True)
        capacity = self._cap_arr[uniq]
        eta = np.fromiter((f.eta for f in comp), dtype=np.float64, count=n)
        if eta.min() < 1.0:
            cnt = np.bincount(local, minlength=len(uniq))
            le = np.ones(len(uniq))
            np.minimum.at(le, local, np.repeat(eta, lens))
            capacity = capacity * np.where(cnt > 1, le, 1.0)
        fcap = np.fromiter((f.cap for f in comp), dtype=np.float64, count=n)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        return maxmin_csr(ptr, local, capacity, fcap)[0].tolist()

    def _recompute(self, dirty: set[int]) -> None:
        comps = self._components(dirty)
        if not comps:
            return
        self.recomputations += 1
        for comp in comps:
            n = len(comp)
            if n == 1:
                f = comp[0]
                self._apply(comp, (f.solo,))
                continue
            if n > self.max_component:
                self.max_component = n
            if all(f.lossless for f in comp) and (
                    not is_flat(paths := [f.links for f in comp]) or (self._hol and may_block(paths))):
                rates = None
                if n <= self._port_max:
                    self.port_fair_solves += 1
                    paths = [f.links for f in comp]
                    lcap = self._link_caps(comp)
                    fcap = [f.cap for f in comp]
                    offers: dict = {} if self._hol else None
                    rates, rounds = port_fair(paths, lcap, fcap, offers=offers)
                    if rounds >= 0 and self._hol:
                        paused = hol_capacities(paths, lcap, rates, offers)
                        if paused:
                            self.hol_paused_links += len(paused)
                            lcap.update(paused)
                            rates, rounds = port_fair(paths, lcap, fcap)
                    if rounds < 0:
                        rates = None
                if rates is None:
                    self.port_fair_fallbacks += 1
                    rates = self._maxmin(comp)
            elif n <= SMALL_COMPONENT:
                rates = maxmin_small([f.links for f in comp], self._link_caps(comp), [f.cap for f in comp])
            else:
                rates = self._maxmin(comp)
            self._apply(comp, rates)

    def _apply(self, comp, rates) -> None:
        """Give ``comp`` its new ``rates``: advance remaining bytes, reschedule completions."""
        now = self.env.now
        heap = self._heap
        for f, r in zip(comp, rates):
            old = f.rate
            if old == r:
                continue
            if old > 0.0:
                f.rem -= old * (now - f.t_upd)
            f.t_upd = now
            f.rate = r
            f.ver += 1
            rem = f.rem
            f.finish = now if rem <= EPS_BYTES else now + math.ceil(rem / r)
            self._seq += 1
            heapq.heappush(heap, (f.finish, self._seq, f.ver, f))

    # -- completions ------------------------------------------------------------
    def _ensure_timer(self) -> None:
        heap = self._heap
        while heap and heap[0][2] != heap[0][3].ver:
            heapq.heappop(heap)
        if not heap:
            return
        top = heap[0][0]
        timers = self._timers
        if top in timers or (timers and min(timers) <= top):
            return
        timers.add(top)
        self.env.timeout(top - self.env.now).callbacks.append(self._on_timer)

    def _on_timer(self, _ev) -> None:
        env = self.env
        now = env.now
        self._timers.discard(now)
        self.events += 1
        heap = self._heap
        users = self._users
        dirty = self._dirty
        sink = self.sink
        done_any = False
        while heap and heap[0][0] <= now:
            _, _, ver, f = heapq.heappop(heap)
            if ver != f.ver:
                continue
            f.ver = -1
            done_any = True
            fid = f.fid
            for l in f.links:
                del users[l][fid]
            dirty.update(f.links)
            self._active -= 1
            end_ps = now + int(f.lat_ps + 0.5)
            start_ns = (f.start_ps + 500) // PS_PER_NS
            end_ns = (end_ps + 500) // PS_PER_NS
            ideal = int(f.ideal_ns + 0.5)
            fct = end_ns - start_ns
            t = f.tag
            rec = FlowRecord(fid, f.src, f.dst, f.size, start_ns, end_ns, fct, ideal,
                             round(fct / ideal, 6) if ideal > 0 else math.nan, t.tag, f.cc, f.prio,
                             0, 0, 0, 0, 0, t.iteration, t.op, t.group, t.collective, t.step)
            self.n_completed += 1
            self.bytes_delivered += f.size
            if sink is not None:
                sink.add(rec)
            ev = f.event
            ev._ok = True          # succeed later than now: the latency term
            ev._value = rec
            env.schedule(ev, delay=end_ps - now)
            f.event = None
        if done_any:
            self._request_settle()
        else:
            self._ensure_timer()

    # -- reporting --------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        return {
            "backend": "flow",
            "flows": self.n_flows,
            "completed": self.n_completed,
            "bytes_delivered": self.bytes_delivered,
            "drops": 0,
            "ecn_marks": 0,
            "pfc_pauses": 0,
            "retransmitted_bytes": 0,
            "sim_time_ns": ps_to_ns(self.env.now),
            "events": self.events,
            "recomputations": self.recomputations,
            "recompute_wall_s": round(self.recompute_wall_s, 6),
            "max_component_flows": max(self.max_component, min(self.n_flows, 1)),
            "max_active_flows": self.max_active,
            "port_fair_solves": self.port_fair_solves,
            "port_fair_fallbacks": self.port_fair_fallbacks,
            "hol_paused_links": self.hol_paused_links,
            "queues": "not modelled by flow backend (queues.csv and pfc.csv are empty)",
            "pfc": "not modelled by flow backend (lossless fluid links)",
        }

    def close(self) -> None:
        for s in (self.sinks.fct, self.sinks.queues, self.sinks.pfc, self.sinks.cc):
            if s is not None and hasattr(s, "flush"):
                s.flush()


@register_backend("flow")
def create_flow_backend(graph, *, env, params=None, seed=0, cc="none", cc_params=None, sinks=None,
                        **kw) -> FlowBackend:
    """Factory for ``create_backend("flow", ...)``."""
    return FlowBackend(graph, env=env, params=params, seed=seed, cc=cc, cc_params=cc_params,
                       sinks=sinks, **kw)
