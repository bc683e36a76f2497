"""Connected components of active flows, and the flows that need none.

A *component* is a maximal set of active flows linked by shared directed
links; after a change only the components holding a changed (*dirty*) link,
or a flow started since the last solve, are re-solved. Two kinds of change
need no solve at all, exactly:

* a flow that starts alone on all its links (started at once by the
  backend's ``send``, with no settle event), or that fits beside the flows
  already on them (:meth:`ComponentFinder.fits_beside`), runs at its solo
  rate — the least of its path's bottleneck and its cap;
* a flow that ends leaves nobody faster when no other flow on its links is
  held back by one of them: each runs at its solo rate or is limited
  elsewhere (``completions.may_gain``, from the rates of the last solve).

Left out: splitting components at links that cannot saturate
(measured: none split on a 1,024-GPU training step).
"""
from __future__ import annotations

from operator import itemgetter

#: a flow within this factor of its solo rate counts as running at it (float rounding guard)
SOLO_TOL = 1.0 - 1e-9

_first = itemgetter(0)


class Rates(list):
    """Rates of a component's flows (bytes/ps, in component order); ``port_fair``: solved by
    port fairness (a flow may be held back by any saturated link it shares) rather than
    max-min (only by a saturated link where it has the largest rate)."""

    __slots__ = ("port_fair",)


class HeldRates(Rates):
    """Rates of a component in which PFC head-of-line blocking pauses some link: the rates
    depend on more than the links' capacities, so no flow joins or leaves it unsolved."""

    __slots__ = ()


class SlowStart:
    """The slow start of a window-based flow, charged at the rate it gets at its start instant.

    ``model``: its :class:`~.ccmodel.CCModel`; ``rtt_ps``: its path's base RTT; ``charged``:
    the rate (bytes/ps) its latency term's ramp was charged at; ``top``: the rate of its path
    and model, above which the ramp is never charged.
    """

    __slots__ = ("model", "rtt_ps", "charged", "top")

    def __init__(self, model, rtt_ps: float, charged: float, top: float):
        self.model = model
        self.rtt_ps = rtt_ps
        self.charged = charged
        self.top = top

    def recharge(self, rem_bytes: float, rate: float, mtu: float) -> float:
        """Charge the slow start at ``rate``, the rate the flow gets at its start instant,
        instead of the rate charged so far (first its path bottleneck and model cap; a later
        solve at the same instant replaces an earlier one); the change of its latency term (ps).

        A window that doubles per RTT covers a smaller bandwidth-delay product in fewer
        rounds (two flows sharing a NIC each need half the window; a host-stack cap ends the
        ramp sooner too). Never charged above :attr:`top`.
        """
        charged = self.charged
        if rate > self.top:
            rate = self.top
        if rate == charged:
            return 0.0
        model, rtt = self.model, self.rtt_ps
        self.charged = rate
        return model.ramp_ps(rem_bytes, rate, rtt, mtu) - model.ramp_ps(rem_bytes, charged, rtt, mtu)


class FluidFlow:
    """One active flow: remaining wire bytes (float) at ``t_upd`` (ps), rate in bytes/ps;
    ``held``: its component had a head-of-line pause at its last solve; ``pf``: it was solved
    by port fairness (see :class:`Rates`); ``ramp``: the :class:`SlowStart` of a window-based
    algorithm, whose slow-start cost depends on the rate the flow gets at its start instant,
    else ``None``."""

    __slots__ = ("held", "pf", "fid", "src", "dst", "size", "start_ps", "links", "rem", "t_upd", "rate", "finish",
                 "ver", "cap", "lat_ps", "ideal_ns", "event", "tag", "cc", "prio", "eta", "lossless",
                 "solo", "bott", "mtu", "rp", "marks", "last_cnp", "ceil", "ramp", "ctl", "win",
                 "key",      # key: the ECMP key it was routed with (netsim.network.flowkey)
                 "bkey",     # bkey: its send_batch key (event: the batch's callback), or newflow.SOLO
                 "conn")     # conn: its connection while it is the one on the links (inorder.py), else None


class ComponentFinder:
    """Finds the components reached from changed links; ``_cap`` (bytes/ps) and ``_users``
    (``users[l]``: ``{flow id: FluidFlow}``) are set by :class:`~.solver.ComponentSolver`."""

    _cap: list
    _users: list

    def components(self, dirty: set[int], fresh: list[FluidFlow] = ()) -> list[list[FluidFlow]]:
        """Connected components (links <-> active flows) reached from the ``dirty`` links.

        ``fresh`` are flows started since the last call. One alone on all its
        links, or one that fits beside the flows already there (see
        :meth:`fits_beside`) and is not reached from ``dirty``, is a
        component by itself that runs at its solo rate, found without a
        search; the others' links join ``dirty``. Each component is sorted by
        flow id; components come in order of their smallest changed link
        (dirty, or a link of a fresh flow), so the result is deterministic.
        """
        users = self._users
        solo = []
        beside = []
        for f in fresh:
            alone = True
            for l in f.links:
                if l in dirty:
                    alone = None
                    break
                if len(users[l]) != 1:
                    alone = False
            if alone:
                solo.append((min(f.links), [f]))
            elif alone is False and self.fits_beside(f):
                beside.append(f)
            else:
                dirty.update(f.links)
        found, seen = self._search(dirty)
        for f in beside:
            if f.links[0] not in seen:   # not reached: its neighbours' rates stay as they are
                solo.append((min(f.links), [f]))
        if not solo:
            return [comp for _, comp in found]
        found += solo
        found.sort(key=_first)
        return [comp for _, comp in found]

    def fits_beside(self, f: FluidFlow) -> bool:
        """True when fresh flow ``f`` at its solo rate fits on every shared link beside the
        current rates of the flows there (none of them fresh or DCQCN).

        Then, if none of those flows is re-solved at this instant, the old rates
        plus ``f`` at its solo rate are the new solution: every old flow keeps
        its bottleneck (``f`` joins no saturated link, or the test fails) and
        ``f`` runs at the most its path and cap allow. Exact for max-min; for
        port fairness too, as no link where anyone is held gains a flow; never
        beside a component with a head-of-line pause (:class:`HeldRates`), where
        a link can limit flows below its capacity.
        """
        if f.rp is not None:
            return False
        cap = self._cap
        users = self._users
        solo = f.solo
        for l in f.links:
            u = users[l]
            if len(u) == 1:
                continue
            load = solo
            eta = f.eta
            for g in u.values():
                if g is f:
                    continue
                if g.ver == 0 or g.rp is not None or g.held or g.rate < g.solo * SOLO_TOL:
                    return False
                load += g.rate
                if g.eta < eta:
                    eta = g.eta
            if load >= cap[l] * eta * SOLO_TOL:
                return False
        return True

    def _search(self, dirty: set[int]) -> tuple[list[tuple[int, list[FluidFlow]]], set[int]]:
        """``(seed link, component)`` for every component holding a ``dirty`` link, by seed;
        and the set of links the components cover."""
        users = self._users
        seen: set[int] = set()
        out = []
        for seed in sorted(dirty):
            if seed in seen or not users[seed]:
                continue
            seen.add(seed)
            flows: dict[int, FluidFlow] = {}
            stack = [seed]
            while stack:
                for fid, f in users[stack.pop()].items():
                    if fid not in flows:
                        flows[fid] = f
                        for l2 in f.links:
                            if l2 not in seen:
                                seen.add(l2)
                                stack.append(l2)
            out.append((seed, [flows[k] for k in sorted(flows)] if len(flows) > 1 else list(flows.values())))
        return out, seen
