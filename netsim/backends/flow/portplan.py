"""Integer-indexed view of one :class:`~.portproblem.PortProblem` for the port-fair round loop.

A :class:`PortPlan` depends only on the paths (not on capacities), so it is
built once per problem and shared by every port-fair solve and pause
computation on it (:mod:`.portfair`). It lists

* the shared links (two flows or more) in ascending id order, each with its
  flows in prefix-tree child order (the order :class:`~.porttree._Tree` gives
  a flat tree; ``tree.flows`` and the tree itself otherwise);
* the single-flow links, which only cap their flow;
* the local link indices the max-min warm start needs;
* groups of shared links with the same flows in the same child order: with
  equal capacities they offer exactly the same every round, so the round loop
  (:mod:`.portround`) computes each group once, and every flow's *slots*, the
  positions of its offers (:meth:`PortPlan.grouping`, kept per capacities).

Left out: any model (pure indexing); groups never merge links whose
capacities differ.
"""
from __future__ import annotations

from typing import NamedTuple


class Grouping(NamedTuple):
    """Groups of shared links offering alike for given capacities (:meth:`PortPlan.grouping`).

    The offers of all groups are kept in one list, group ``g``'s from ``start[g]`` on.
    """

    members: list        #: per group: positions in ``PortPlan.shared`` of its links
    gcap: list           #: per group: its links' capacity
    start: list          #: per group: position of its first offer
    slots: list          #: per flow: its offer positions, one per shared link, in ``shared`` order
    pairs: list          #: ``(group, flow, flow, start)`` of the flat groups of two flows (child order)
    triples: list        #: ``(group, flow, flow, flow, start)`` of the flat groups of three flows
    others: list         #: the other groups
    gflows: list         #: per group: its flows in child order
    owner: list          #: per offer position: its group (and ``owner[-1] = -1``)


class PortPlan:
    """Index structures of one set of paths (see the module docstring).

    Attributes
    ----------
    links : list of int
        Every link, in order of first use (``PortProblem.users`` order).
    lpaths : list of list of int
        Paths as indices into ``links``.
    multi : list of (int, list of int)
        ``(link, flows)`` for the links of two flows or more, in ``links`` order.
    msets : list of int
        Per entry of ``multi``: a number of its flows (equal for the same flows).
    single : list of (int, int)
        ``(link, flow)`` for the links of one flow.
    shared : list of int
        Links of two flows or more, ascending; ``index`` maps them to positions.
    sflows, strees : list
        Per shared link: flows in child order, and its ``_Tree`` (``None`` when flat).
    Groups of shared links offering alike for given capacities: :meth:`grouping`.
    """

    __slots__ = ("links", "lpaths", "multi", "msets", "single", "shared", "index", "sflows",
                 "strees", "_keys", "_caps", "_grouping", "_base", "_link_group", "_base_caps")

    def __init__(self, problem):
        paths = problem.paths
        pair = problem.pair_links
        index, on, at, self.lpaths = problem.incidence()
        self.links = links = list(index)
        self.multi = multi = [(l, fl) for l, fl in zip(links, on) if len(fl) > 1]
        sets: dict = {}
        self.msets = [sets.setdefault(tuple(fl), len(sets)) for _, fl in multi]
        self.single = [(l, fl[0]) for l, fl in zip(links, on) if len(fl) == 1]
        self.shared = shared = sorted([l for l, _ in multi])
        self.index = dict(zip(shared, range(len(shared))))
        self.sflows = sflows = []
        self.strees = strees = []
        self._keys = keys = []            # per shared link: an id of its flows in child order
        kid: dict = {}
        for j, l in enumerate(shared):
            m = index[l]
            u = on[m]
            if len(u) == 2:                  # always flat: walk back to where the two part
                f0, f1 = u
                i0, i1 = at[m]
                p0 = paths[f0]
                p1 = paths[f1]
                a = i0 - 1
                b = i1 - 1
                if l in pair:
                    while a >= 0 and b >= 0 and p0[a] == p1[b]:
                        a -= 1
                        b -= 1
                fl = u if a < 0 or (b >= 0 and p0[a] < p1[b]) else [f1, f0]
            else:
                fl = child_order(paths, u, at[m], l in pair)
            if fl is None:
                tree = problem.tree(l)
                fl = tree.flows
                keys.append(-1 - j)           # a tree: its own group
            else:
                tree = None
                keys.append(kid.setdefault(tuple(fl), len(kid)))
            sflows.append(fl)
            strees.append(tree)
        self._caps = None
        self._grouping = None
        self._base = None
        self._link_group = None
        self._base_caps = None

    def grouping(self, capacity) -> Grouping:
        """Groups of shared links with the same flows in the same child order and the same
        capacity, for these capacities (a :class:`Grouping`).

        ``members[g]``: positions in :attr:`shared` of group ``g``, ``gcap[g]`` its
        capacity and ``gflows[g]`` its flows in child order; the offers of all groups are
        kept in one list, group ``g``'s from ``start[g]`` on, ``owner[k]`` being the group
        of offer ``k`` (and ``owner[-1] = -1``); ``slots[f]`` lists flow ``f``'s offer
        positions, one per shared link of ``f`` in :attr:`shared` order; ``pairs`` lists
        ``(group, flow, flow, start)`` for the flat groups of two flows (in child order),
        ``triples`` lists ``(group, flow, flow, flow, start)`` for the flat groups of three
        flows, ``others`` the other groups.

        The grouping of the first capacities is kept as a base; for other capacities (the
        solve after a pause) its groups are only split where their links' capacities now
        differ. Groups of equal flows and capacity left apart offer exactly the same as one
        merged group would, so the solve is the same. The last grouping is kept.
        """
        caps = [capacity[l] for l in self.shared]
        if caps == self._caps:
            return self._grouping
        if self._base is None:
            self._base, self._link_group = self._lay_out(caps)
            self._base_caps = caps
            grouping = self._base
        else:
            grouping = self._refine(caps)
        self._caps = caps
        self._grouping = grouping
        return grouping

    def _lay_out(self, caps: list[float]) -> tuple[Grouping, list[int]]:
        """The grouping for ``caps`` (as :meth:`grouping`), and the group of each shared link."""
        sflows = self.sflows
        strees = self.strees
        group_of: dict = {}
        link_group = []
        members: list[list[int]] = []
        gcap: list[float] = []
        start: list[int] = []
        gflows = []
        slots: list[list[int]] = [[] for _ in self.lpaths]
        owner = []
        pairs = []
        triples = []
        others = []
        k = 0
        for j, key, c in zip(range(len(caps)), self._keys, caps):
            g = group_of.get((key, c))
            fl = sflows[j]
            if g is None:
                g = group_of[(key, c)] = len(members)
                members.append([j])
                gcap.append(c)
                start.append(k)
                gflows.append(fl)
                owner += [g] * len(fl)
                if strees[j] is not None:
                    others.append(g)
                elif len(fl) == 2:
                    pairs.append((g, fl[0], fl[1], k))
                elif len(fl) == 3:
                    triples.append((g, fl[0], fl[1], fl[2], k))
                else:
                    others.append(g)
                s = k
                k += len(fl)
            else:
                members[g].append(j)
                s = start[g]
            link_group.append(g)
            for f in fl:
                slots[f].append(s)
                s += 1
        owner.append(-1)
        return Grouping(members, gcap, start, slots, pairs, triples, others, gflows, owner), link_group

    def _refine(self, caps: list[float]) -> Grouping:
        """:meth:`grouping` for ``caps`` by splitting the groups of the base grouping."""
        members, _, start, slots, pairs, triples, others, gflows, owner = self._base
        link_group = self._link_group
        base = self._base_caps
        touched = sorted({link_group[j] for j, c, b in zip(range(len(caps)), caps, base) if c != b})
        copied = False
        sflows = self.sflows
        for g in touched:
            m = members[g]
            if len(m) == 1:
                continue
            parts: dict = {}
            for j in m:
                p = parts.get(caps[j])
                if p is None:
                    parts[caps[j]] = [j]
                else:
                    p.append(j)
            if len(parts) == 1:
                continue
            if not copied:
                copied = True
                flinks = [[] for _ in slots]      # shared links of each flow, in slots order
                for j, fl in enumerate(sflows):
                    for f in fl:
                        flinks[f].append(j)
                members, start, gflows = members[:], start[:], gflows[:]
                pairs, triples, others = pairs[:], triples[:], others[:]
                slots = [s[:] for s in slots]
                owner = owner[:-1]
            subs = iter(parts.values())
            members[g] = next(subs)          # the part of the first link keeps the group
            fl = gflows[g]
            for sub in subs:
                g2 = len(members)
                k = len(owner)
                members.append(sub)
                start.append(k)
                gflows.append(fl)
                owner.extend([g2] * len(fl))
                if len(fl) == 2:             # (a tree is a group of its own: never split)
                    pairs.append((g2, fl[0], fl[1], k))
                elif len(fl) == 3:
                    triples.append((g2, fl[0], fl[1], fl[2], k))
                else:
                    others.append(g2)
                for j in sub:
                    for f, s in zip(sflows[j], range(k, k + len(fl))):
                        slots[f][flinks[f].index(j)] = s
        if copied:
            owner.append(-1)
        return Grouping(members, [caps[m[0]] for m in members], start, slots, pairs, triples, others, gflows,
                        owner)


def port_plan(problem) -> PortPlan:
    """The :class:`PortPlan` of ``problem`` (a ``PortProblem``), built on first use."""
    plan = problem._plan
    if plan is None:
        plan = problem._plan = PortPlan(problem)
    return plan


def child_order(paths, flows: list[int], pos: list[int], pair: bool) -> list[int] | None:
    """Flows of a link in the child order of its flat prefix tree, or ``None`` when the tree
    is not flat.

    ``flows``: the link's flows, ``pos``: the position of the link in each one's path;
    ``pair``: two of the flows entered the link from the same previous link (else the
    tree branches at the root and is flat). Same order as ``_Tree.flat_flows``: flows
    starting before the branching first, then by the link they came through there.
    """
    depth = 1
    if pair:
        while True:                      # deepest depth where all came through one link
            first = None
            for f, p in zip(flows, pos):
                i = p - depth
                if i < 0:
                    break
                k = paths[f][i]
                if first is None:
                    first = k
                elif k != first:
                    break
            else:
                depth += 1
                continue
            break
    start = []
    rest = []
    for f, p in zip(flows, pos):
        i = p - depth
        if i < 0:
            start.append(f)
        else:
            rest.append((paths[f][i], f))
    if pair and len({k for k, _ in rest}) != len(rest):
        return None
    rest.sort()
    start.extend([f for _, f in rest])
    return start
