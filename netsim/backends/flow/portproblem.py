"""The link structure of one set of paths, shared by the port-fair steps (:mod:`.portfair`).

A :class:`PortProblem` depends only on the paths, not on capacities: which
links carry which flows at which path position, which links are entered by
two flows from the same previous link (only those can have a non-flat prefix
tree, :mod:`.porttree`), whether port fairness reduces to max-min fairness
(:attr:`PortProblem.flat`), the prefix trees it needed, and the index plan of
the port-fair round loop (:mod:`.portplan`), each built once.

Left out: any model (it is the structure of the paths); capacities, caps and
rates are the solvers' inputs.
"""
from __future__ import annotations

from collections import Counter
from itertools import chain

from .maxmin import LinkIndex
from .porttree import OfferCache, _Tree


class PortProblem:
    """The link structure of one set of paths, shared by the port-fair steps.

    ``users[l]`` lists ``(flow, position of l in its path)``; ``pair_links``
    are the links entered by two flows from the same previous link (only
    their trees can be non-flat); prefix trees are built on first use and
    kept, so the port-fair solves (before and after head-of-line blocking)
    and the pause computation build each tree once.

    Internally the links are numbered in order of first use (flows in order,
    each along its path, as :func:`.maxmin.link_index`): :meth:`incidence`
    gives, per local link, its flows and their positions as two parallel
    lists, and every path in local indices, built on first use.
    """

    __slots__ = ("paths", "pair_links", "link_index", "offers", "_steps", "_inc", "_users", "_trees", "_plan")

    def __init__(self, paths, link_index: LinkIndex | None = None, offers: OfferCache | None = None):
        self.paths = paths
        #: the solver's :class:`~.maxmin.LinkIndex` and :class:`~.porttree.OfferCache` (new ones if not given)
        self.link_index = link_index if link_index is not None else LinkIndex()
        self.offers = offers if offers is not None else OfferCache()
        # how many flows enter each link from each previous link
        steps = Counter(chain.from_iterable([zip(p, p[1:]) for p in paths]))
        self._steps = [(key, n) for key, n in steps.items() if n > 1]   # the steps of two flows or more
        self.pair_links = {key[1] for key, _ in self._steps}
        self._inc: tuple | None = None
        self._users: dict[int, list[tuple[int, int]]] | None = None
        self._trees: dict[int, _Tree] = {}
        self._plan = None                    # its .portplan.PortPlan, built on first use

    def incidence(self) -> tuple[dict, list, list, list]:
        """``(index, on, at, lpaths)``, built once.

        ``index`` maps every link to its local index (order of first use);
        ``on[j]`` lists the flows of local link ``j`` in flow order and
        ``at[j]`` the position of the link in each of their paths;
        ``lpaths[f]`` is flow ``f``'s path in local indices.
        """
        inc = self._inc
        if inc is None:
            _, index, lpaths, on = self.link_index(self.paths)      # shared with the solver's other stages
            at: list[list[int]] = [[] for _ in on]
            for q in lpaths:
                i = 0
                for j in q:
                    at[j].append(i)
                    i += 1
            inc = self._inc = index, on, at, lpaths
        return inc

    @property
    def users(self) -> dict[int, list[tuple[int, int]]]:
        """``{link: [(flow, position of the link in its path), ...]}`` (built on first use)."""
        if self._users is None:
            index, on, at, _ = self.incidence()
            self._users = {l: list(zip(on[j], at[j])) for l, j in index.items()}
        return self._users

    def tree(self, l: int) -> _Tree:
        """Prefix tree of link ``l`` (built once)."""
        t = self._trees.get(l)
        if t is None:
            index, on, at, _ = self.incidence()
            j = index[l]
            t = self._trees[l] = _Tree(list(zip(on[j], at[j])), self.paths, self.offers)
        return t

    @property
    def flat(self) -> bool:
        """True when every link's tree is flat: port fairness is then max-min fairness.

        A link ``l`` entered by two flows from the same previous link ``k`` is
        flat only if all its flows come from ``k``; if moreover ``k`` carries
        no other flow, ``l``'s tree is ``k``'s one level deeper (flat when
        ``k``'s is, and ``k`` is checked on its own). Only the other links
        need a walk down their prefixes (:func:`branches_to_flows`).
        """
        if not self.pair_links:
            return True
        _, index, _, on = self.link_index(self.paths)      # flows per link (kept for the solver's other stages)
        walk = []
        for (k, l), n in self._steps:
            if n != len(on[index[l]]):
                return False                 # l's root has a node child beside other children
            if len(on[index[k]]) != n:
                walk.append(l)
        paths = self.paths
        for l in walk:
            flows = on[index[l]]
            if not branches_to_flows(paths, flows, [paths[f].index(l) for f in flows]):
                return False
        return True


def branches_to_flows(paths, flows: list[int], pos: list[int]) -> bool:
    """True when the first branching of a link's prefix tree has only flows as children,
    i.e. the link's tree is flat (without building it).

    ``flows``: the flows of the link, ``pos``: the position of the link in each one's path.
    """
    depth = 1
    while True:
        first = -1
        for f, p in zip(flows, pos):
            i = p - depth
            if i < 0:
                break                    # a flow starts here: the tree branches
            k = paths[f][i]
            if first < 0:
                first = k
            elif k != first:
                break
        else:
            depth += 1                   # all came through one previous link: go one deeper
            continue
        keys = [paths[f][p - depth] for f, p in zip(flows, pos) if p >= depth]
        return len(set(keys)) == len(keys)
