"""Contention the analytic backend does not model: how far concurrent flows overran the links it does not share.

The analytic backend (:mod:`.backend`) shares only each flow's *pacing link*
(the first link with its path's lowest rate) among the flows paced there;
every other link of a path is taken to carry its flows without contention.
That is a silent wrong answer wherever flows paced at different links meet
on a third one: ECMP collisions in a spine (a 32-GPU ring all-reduce on 4
rail-connected servers, the four cross-server hops hashed onto 4 spines),
incast at a receiver, a relaying GPU's egress. This module measures it.

For every directed link it keeps the sum of the current rates of the
draining flows that cross it (each flow's rate at its pacing link) and
integrates the part above the link's rate over time: ``excess_bytes`` is
what the model sent across a link beyond its capacity. A run with any
excess reports :class:`ContentionReport` in the backend's ``stats()``
(``summary.json``, key ``unmodelled_contention``) and prints one
``netsim: warning:`` line when the backend is closed; a run
without reports nothing, so its outputs are unchanged.

Left out: correcting the times (that needs a max-min over every link, the
flow backend's solver); flows in their latency tail (past the pacing link,
their bytes are no longer counted on any link); overlaps of zero duration
(flows ending and starting at the same ps).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ...units import PS_PER_S

#: relative load above a link's rate that counts as an overrun (float sums of shares drift by ~1e-15)
OVERRUN_REL_TOL = 1e-9


@dataclass(frozen=True)
class ContentionReport:
    """What ran beyond capacity on links the analytic model does not share.

    Attributes
    ----------
    links : int
        Directed links that carried more than their rate for a positive time.
    excess_bytes : float
        Bytes sent across those links beyond their rate, summed over the links.
    worst_link : str
        ``"a->b"``: the link with the highest load ratio.
    worst_load_ratio : float
        Its highest load / rate (e.g. 4.0: four flows each at the link's full rate).
    """

    links: int
    excess_bytes: float
    worst_link: str
    worst_load_ratio: float

    def as_dict(self) -> dict:
        """The report as ``summary.json`` holds it (floats rounded to 6 significant digits)."""
        d = asdict(self)
        d["excess_bytes"] = float(f"{self.excess_bytes:.6g}")
        d["worst_load_ratio"] = float(f"{self.worst_load_ratio:.6g}")
        return d

    def message(self) -> str:
        """The one-line warning."""
        return (f"analytic backend: concurrent flows overran {self.links} link(s) it does not share "
                f"(worst {self.worst_link} at {self.worst_load_ratio:.2f}x its rate, "
                f"{self.excess_bytes:.3g} bytes beyond capacity): its model shares only each flow's "
                f"first bottleneck link, so these times are optimistic; --backend flow models every link")


class LinkLoad:
    """Load of one directed link: ``load_bps`` of the draining flows crossing it, and what overran."""

    __slots__ = ("name", "rate_bps", "load_bps", "last_ps", "excess_bits", "peak_ratio")

    def __init__(self, name: str, rate_bps: float):
        self.name = name
        self.rate_bps = rate_bps
        self.load_bps = 0.0
        self.last_ps = 0
        self.excess_bits = 0.0
        self.peak_ratio = 0.0


class LinkLoads:
    """Per-link loads of one analytic run (see the module docstring)."""

    def __init__(self):
        self._links: dict[tuple, LinkLoad] = {}

    def of_path(self, path: tuple, rates_bps: list[float]) -> tuple:
        """The :class:`LinkLoad` of every hop of ``path`` (node names), hop rates ``rates_bps``."""
        out = []
        for a, b, r in zip(path, path[1:], rates_bps):
            ll = self._links.get((a, b))
            if ll is None:
                ll = self._links[(a, b)] = LinkLoad(f"{a}->{b}", r)
            ll.rate_bps = r              # the rate now (a link change may have moved it)
            out.append(ll)
        return tuple(out)

    @staticmethod
    def change(links: tuple, delta_bps: float, now_ps: int) -> None:
        """Add ``delta_bps`` to the load of each of ``links`` at ``now_ps``, integrating any overrun first."""
        for ll in links:
            load = ll.load_bps
            if load > ll.rate_bps * (1.0 + OVERRUN_REL_TOL):
                dt = now_ps - ll.last_ps
                if dt > 0:
                    ll.excess_bits += (load - ll.rate_bps) * dt / PS_PER_S
                    ratio = load / ll.rate_bps
                    if ratio > ll.peak_ratio:
                        ll.peak_ratio = ratio
            ll.last_ps = now_ps
            ll.load_bps = load + delta_bps

    @staticmethod
    def count(flows, now_ps: int) -> None:
        """Bring the loads of ``flows``' links to their current ``rate`` (each flow's ``load``: what is counted).

        :meth:`change` for every flow whose rate moved, inlined (this runs at every reschedule).
        """
        tol = 1.0 + OVERRUN_REL_TOL
        for f in flows:
            d = f.rate - f.load
            if not d:
                continue
            f.load = f.rate
            for ll in f.links:
                load = ll.load_bps
                if load > ll.rate_bps * tol and now_ps > ll.last_ps:
                    ll.excess_bits += (load - ll.rate_bps) * (now_ps - ll.last_ps) / PS_PER_S
                    ratio = load / ll.rate_bps
                    if ratio > ll.peak_ratio:
                        ll.peak_ratio = ratio
                ll.last_ps = now_ps
                ll.load_bps = load + d

    def report(self) -> ContentionReport | None:
        """What overran so far (flows still draining count up to their last change), or ``None``."""
        over = [ll for ll in self._links.values() if ll.excess_bits > 0.0]
        if not over:
            return None
        worst = max(over, key=lambda ll: (ll.peak_ratio, ll.name))
        return ContentionReport(links=len(over), excess_bytes=sum(ll.excess_bits for ll in over) / 8.0,
                                worst_link=worst.name, worst_load_ratio=worst.peak_ratio)
