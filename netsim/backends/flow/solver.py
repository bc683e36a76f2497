"""Rates of the connected components of active flows (the flow backend's solver stage).

A *component* is a maximal set of flows linked by shared directed links; only
components touched by a change are re-solved. Each is solved by the cheapest
exact method: a lone flow runs at its path's bottleneck (or its cap); several
flows by port fairness (:mod:`.portfair`, lossless flows whose sharing differs
from per-flow fairness, plus PFC head-of-line blocking), or max-min fairness
(:mod:`.maxmin`, vectorized; flat components changed at one instant in one call).
Solutions are memoized by component signature — rates depend only on the
paths, caps and congestion-control models, and a training iteration repeats
the same components many times.

Left out: weighted sharing, multipath flows, and splitting a component at
links that cannot saturate (measured: none split on a 1,024-GPU step).
"""
from __future__ import annotations

from itertools import chain

import numpy as np

from .components import ComponentFinder, FluidFlow, HeldRates, Rates
from .maxmin import LinkIndex, maxmin_csr
from .porttree import OfferCache
from .portfair import PortProblem, hol_capacities, hol_capacities_flat, may_block, port_fair_auto
from .relayhol import without_relay_pauses

#: components with at most this many flows are solved one by one, never batched (their memo
#: hits are frequent; a batch saves numpy's per-call overhead on larger ones)
SMALL_COMPONENT = 32
#: solutions memoized per component signature (cleared when full)
MEMO_ENTRIES = 50_000


def _rates(cls: type, rates, *, port_fair: bool) -> Rates:
    """``rates`` as a :class:`Rates` (or :class:`HeldRates`) solved by port fairness or not."""
    out = cls(rates)
    out.port_fair = port_fair
    return out


class ComponentSolver(ComponentFinder):
    """Finds and solves the components reached from changed links.

    ``cap`` are directed-link capacities (bytes/ps), ``users[l]`` the active
    flows on link ``l`` (``{flow id: FluidFlow}``).
    """

    def __init__(self, cap: list[float], users: list[dict], *, port_max: int, hol: bool):
        self._cap = cap
        self._cap_arr = np.asarray(cap, dtype=np.float64)
        self._users = users
        self._port_max = port_max
        self._hol = hol
        #: links into relaying endpoints, never paused by head-of-line blocking (:mod:`.relayhol`)
        self.relay_links: frozenset = frozenset()
        #: the XOFF test of window-limited components (:mod:`.pausegate`; ``None``: pauses everywhere)
        self.gate = None
        self._memo: dict = {}
        self._index = LinkIndex()      # the last link numbering, shared by the stages of one solve
        self._offers = OfferCache()    # port-fair tree offers, by tree shape, budget and demands
        self.max_component = 0
        self.solves = 0
        self.port_fair_solves = 0
        self.port_fair_fallbacks = 0
        self.hol_paused_links = 0

    def reset_capacities(self) -> None:
        """Re-read the capacities after a link change; forget every memoized solution."""
        self._cap_arr = np.asarray(self._cap, dtype=np.float64)
        self._memo.clear()

    def solve_all(self, comps: list[list[FluidFlow]]) -> list:
        """Rates of several components at once (same order); ``None`` for a lone flow, which
        runs at its ``solo`` rate.

        Memo hits and small or port-fair components are solved one by one;
        the remaining flat components are solved together by one vectorized
        max-min call over their union (max-min is separable across
        components), which saves the per-call overhead when many medium
        components change at the same instant.
        """
        out: list = [None] * len(comps)
        batch: list[int] = []
        for i, comp in enumerate(comps):
            n = len(comp)
            if n == 1:
                continue
            if n > self.max_component:
                self.max_component = n
            key = self._key(comp)
            rates = self._memo.get(key)
            if rates is None:
                prob = None
                if n > SMALL_COMPONENT and all(f.lossless for f in comp):
                    prob = PortProblem([f.links for f in comp], self._index, self._offers)
                if n <= SMALL_COMPONENT or (prob is not None and not prob.flat):
                    rates = self._remember(key, self._solve(comp, prob))
                else:
                    batch.append(i)
                    out[i] = (key, prob)
                    continue
            out[i] = rates
        if len(batch) == 1:
            i = batch[0]
            key, prob = out[i]
            out[i] = self._remember(key, self._solve(comps[i], prob))
        elif batch:
            union = [f for i in batch for f in comps[i]]
            rates = self._maxmin(union)
            pos = 0
            for i in batch:
                comp = comps[i]
                r = rates[pos:pos + len(comp)]
                pos += len(comp)
                out[i] = self._remember(out[i][0], self._with_hol(comp, [f.links for f in comp], r))
        return out

    def _key(self, comp: list[FluidFlow]) -> tuple:
        """Memo signature of ``comp``, invariant under renaming links.

        Links are renumbered in order of first appearance (flows in id
        order), and the signature carries the renumbered paths, per-flow
        caps, models and the capacities of the links. Components with the
        same structure on different servers or racks (a training step
        repeats its rings on every server) therefore share one solution.

        It is one flat tuple: the number of flows, then per flow its path
        length, renumbered links, cap, efficiency and losslessness, then the
        link capacities (unambiguous, as every part is counted). One tuple of
        numbers per memo entry, not one per flow: fewer objects for the
        garbage collector, whose collections the growing memo would trigger.
        """
        lab: dict[int, int] = {}
        key = [len(comp)]
        add = key.append
        for f in comp:
            links = f.links
            add(len(links))
            for l in links:
                j = lab.get(l)
                if j is None:
                    j = lab[l] = len(lab)
                add(j)
            add(f.cap)
            add(f.eta)
            add(f.lossless)
        key.extend(map(self._cap.__getitem__, lab))
        if self.relay_links:
            key.extend([l in self.relay_links for l in lab])
        if self._gated(comp):
            key.extend([f.win for f in comp])
            key.extend(self.gate.signature(lab, [f.prio for f in comp]))
        return tuple(key)

    def _gated(self, comp: list[FluidFlow]) -> bool:
        """Whether ``comp`` pauses only where :mod:`.pausegate` finds XOFF reached (every flow
        lossless with a bounded standing window)."""
        if self.gate is None or not self._hol:
            return False
        for f in comp:
            if f.win is None:
                return False
        return True

    def _remember(self, key, rates) -> Rates:
        """Memoize a new solution (a plain list is max-min rates without pauses)."""
        self.solves += 1
        if not isinstance(rates, Rates):
            rates = _rates(Rates, rates, port_fair=False)
        if len(self._memo) >= MEMO_ENTRIES:
            self._memo.clear()
        self._memo[key] = rates
        return rates

    def _link_caps(self, comp: list[FluidFlow]) -> dict[int, float]:
        """Capacity of every link of ``comp`` (bytes/ps), times the CC efficiency when shared."""
        cap = self._cap
        for f in comp:
            if f.eta != 1.0:
                break
        else:   # all at efficiency 1 (users[l] are flows of comp): cap * 1.0 == cap, in first-use order
            links = self._index([f.links for f in comp])[0]
            return dict(zip(links, map(cap.__getitem__, links)))
        users = self._users
        lcap = {}
        for f in comp:
            for l in f.links:
                if l not in lcap:
                    u = users[l]
                    lcap[l] = cap[l] * (min(g.eta for g in u.values()) if len(u) > 1 else 1.0)
        return lcap

    def _maxmin(self, comp: list[FluidFlow], lcap: dict | None = None) -> list[float]:
        """Vectorized max-min fair rates of ``comp`` (``lcap``: final link capacities, if given)."""
        n = len(comp)
        lens = np.fromiter((len(f.links) for f in comp), dtype=np.int64, count=n)
        if n <= SMALL_COMPONENT:   # local link numbers in first-use order: cheaper than np.unique here
            index: dict[int, int] = {}
            get = index.setdefault
            local = np.fromiter([get(l, len(index)) for f in comp for l in f.links], dtype=np.int64,
                                count=int(lens.sum()))
            uniq = list(index)
        else:                      # (the rates do not depend on how links are numbered)
            glinks = np.fromiter(chain.from_iterable(f.links for f in comp), dtype=np.int64,
                                 count=int(lens.sum()))
            uniq, local = np.unique(glinks, return_inverse=True)
        capacity = self._cap_arr[uniq]
        eta = np.fromiter((f.eta for f in comp), dtype=np.float64, count=n)
        if lcap is not None:
            capacity = np.fromiter((lcap[int(l)] for l in uniq), dtype=np.float64, count=len(uniq))
        elif eta.min() < 1.0:
            cnt = np.bincount(local, minlength=len(uniq))
            le = np.ones(len(uniq))
            np.minimum.at(le, local, np.repeat(eta, lens))
            capacity = capacity * np.where(cnt > 1, le, 1.0)
        fcap = np.fromiter((f.cap for f in comp), dtype=np.float64, count=n)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        return maxmin_csr(ptr, local, capacity, fcap)[0].tolist()

    def _solve(self, comp: list[FluidFlow], prob: PortProblem | None = None) -> list[float]:
        """Rates of one connected component (several flows); ``prob``: its :class:`PortProblem`, if built."""
        paths = [f.links for f in comp]
        if self._gated(comp):       # window-limited: max-min unless some ingress reaches XOFF
            rates = self._maxmin(comp)
            if not self.gate.pausing(comp, rates, self._link_caps(comp)):
                return rates
        if all(f.lossless for f in comp):
            prob = prob or PortProblem(paths, self._index, self._offers)
            if not prob.flat:
                return self._port_fair(comp, paths, prob)
        return self._with_hol(comp, paths, self._maxmin(comp))

    def _port_fair(self, comp: list[FluidFlow], paths, prob: PortProblem) -> list[float] | Rates:
        """Port-fair rates of a lossless non-flat component, with head-of-line blocking;
        max-min when it is too large or the iteration does not settle."""
        if len(comp) <= self._port_max:
            self.port_fair_solves += 1
            lcap = self._link_caps(comp)
            fcap = [f.cap for f in comp]
            state: list | None = [] if self._hol else None
            rates, rounds = port_fair_auto(paths, lcap, fcap, state=state, problem=prob)
            if rounds >= 0 and self._hol:
                paused = self._gate_pauses(comp, rates, lcap, without_relay_pauses(
                    hol_capacities(paths, lcap, rates, state, prob), self.relay_links))
                if paused:
                    self.hol_paused_links += len(paused)
                    lcap.update(paused)
                    rates, rounds = port_fair_auto(paths, lcap, fcap, problem=prob)
                    if rounds >= 0:
                        return _rates(HeldRates, rates, port_fair=True)
            if rounds >= 0:
                return _rates(Rates, rates, port_fair=True)
        self.port_fair_fallbacks += 1
        return self._maxmin(comp)

    def _with_hol(self, comp: list[FluidFlow], paths, rates: list[float]) -> list[float]:
        """Max-min ``rates`` of a flat component, corrected for PFC head-of-line blocking."""
        if self._hol and all(f.lossless for f in comp) and may_block(paths):
            # flat: max-min is port-fair; head-of-line blocking from the max-min bottlenecks
            lcap = self._link_caps(comp)
            paused = self._gate_pauses(comp, rates, lcap, without_relay_pauses(
                hol_capacities_flat(paths, lcap, rates, self._index), self.relay_links))
            if paused:
                self.hol_paused_links += len(paused)
                lcap.update(paused)
                rates = _rates(HeldRates, self._maxmin(comp, lcap), port_fair=False)
        return rates

    def _gate_pauses(self, comp: list[FluidFlow], rates, lcap: dict, paused: dict) -> dict:
        """``paused`` less the ingresses whose standing queue stays below XOFF (:mod:`.pausegate`)."""
        if not paused or not self._gated(comp):
            return paused
        real = self.gate.pausing(comp, rates, lcap)
        return {k: c for k, c in paused.items() if k in real}
