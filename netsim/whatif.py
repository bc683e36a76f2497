"""What-if analysis (NeuronaBox-style): inject delays, slow a GPU, degrade or fail a link.

Four perturbations, given on the command line, in the Python API or under a
workload file's ``whatif:`` key (same syntax everywhere):

* ``--inject-delay COLLECTIVE[@GROUP]=DURATION`` — every matching collective
  starts ``DURATION`` later than it could (NeuronaBox's "extra latency per
  all-reduce").  COLLECTIVE is ``allreduce``, ``allgather``,
  ``reducescatter``, ``alltoall``, ``send`` (pipeline point-to-point) or
  ``any``; GROUP a group kind (``tp``, ``dp``, ``pp``, ``ep``) or one group
  instance (``dp3``).  E.g. ``allreduce@dp=2ms``.  A delay that matches no
  operation of the workload is an error.
* ``--straggler RANK=FACTOR`` — rank RANK's compute (and optimizer) ops take
  FACTOR times as long (FACTOR > 0; 1.5 = 50 % slower).
* ``--degrade-link A:B=FACTOR@TIME`` — at simulated TIME the link between
  nodes A and B runs at FACTOR × its rate (both directions).
* ``--fail-link A:B@TIME`` — at TIME the link disappears; traffic reroutes,
  or the run stops with a one-line error saying which pair became unreachable.

Backend protocol for link changes (documented contract; a backend that lacks
it cannot run link events and says so up front):

``backend.set_link_rate(a, b, rate_bps)``
    Set the rate of link a–b (both directions) from now on; the backend
    updates ``graph.edges[a, b]["rate_bps"]`` and its caches.  Flows already
    in flight see the new rate from now on where the backend can model that.
``backend.fail_link(a, b)``
    Remove the link: ``graph.remove_edge(a, b)``, ``Router.invalidate()``;
    new flows are routed around it; flows in flight on it are rerouted (or
    lost and retransmitted, packet level).  Raises
    :class:`~netsim.errors.RoutingError` when a needed pair is disconnected.

The perturbation records and their string syntax are :mod:`netsim.perturbations`
(re-exported here); this module checks them against a topology, applies them
to ops and schedules the link events.

Left out: NeuronaBox's real-GPU emulation (compute here is a model), link
*recovery* (a failed link stays down), delays on compute ops.

>>> w = WhatIf.from_cli(inject_delay=["allreduce@dp=2ms"], straggler=["3=1.5"])
>>> w.delays[0], w.stragglers[0]
(DelaySpec(collective='allreduce', group='dp', delay_ns=2000000), Straggler(rank=3, factor=1.5))
>>> parse_link_event("s0.nic0:leaf0=0.5@10us")
LinkEvent(a='s0.nic0', b='leaf0', time_ns=10000, factor=0.5)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .perturbations import (COLLECTIVES, GROUP_KINDS, MAX_LINK_FACTOR, MAX_STRAGGLER_FACTOR,  # noqa: F401
                            WHATIF_KEYS, DelaySpec, LinkEvent, Straggler, fail_input, parse_delay, parse_link_event,
                            parse_straggler)

def _items(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


@dataclass(frozen=True)
class WhatIf:
    """A set of perturbations of one run (empty by default)."""

    delays: tuple = field(default=())
    stragglers: tuple = field(default=())
    links: tuple = field(default=())

    def __post_init__(self):
        """Factors of one rank given more than once multiply: their product obeys the one-factor bound."""
        slow = {}
        for s in self.stragglers:
            slow[s.rank] = slow.get(s.rank, 1.0) * s.factor
            if slow[s.rank] > MAX_STRAGGLER_FACTOR:
                fail_input(f"rank {s.rank}: its straggler factors multiply to {slow[s.rank]:g}", s.origin[0],
                      f"{s.rank}={s.factor:g}", f"factors of one rank whose product is <= {MAX_STRAGGLER_FACTOR:g}",
                      s.origin[1])

    @property
    def empty(self) -> bool:
        return not (self.delays or self.stragglers or self.links)

    @classmethod
    def from_cli(cls, inject_delay=None, straggler=None, degrade_link=None, fail_link=None) -> "WhatIf":
        """From lists of CLI strings (any may be None)."""
        return cls(tuple(parse_delay(x) for x in _items(inject_delay)),
                   tuple(parse_straggler(x) for x in _items(straggler)),
                   tuple([parse_link_event(x) for x in _items(degrade_link)]
                         + [parse_link_event(x, fail=True) for x in _items(fail_link)]))

    @classmethod
    def from_doc(cls, doc, *, source: str | None = None, where=None) -> "WhatIf":
        """From a workload file's ``whatif:`` mapping.

        ``inject_delay``: list of ``COLL[@GROUP]=DUR`` strings or a mapping
        ``{COLL[@GROUP]: DUR}``; ``straggler``: list of ``RANK=FACTOR`` or
        ``{RANK: FACTOR}``; ``degrade_link`` / ``fail_link``: lists of strings.
        """
        loc = where or (lambda p: f"field {p}")
        if doc is None:
            return cls()
        if not isinstance(doc, dict):
            fail_input("must be a mapping", loc("whatif"), doc, "keys " + ", ".join(WHATIF_KEYS), source)
        for k in doc:
            if k not in WHATIF_KEYS:
                fail_input("unknown key", loc(f"whatif.{k}"), k, "one of " + ", ".join(WHATIF_KEYS), source)

        def strings(key):
            v = doc.get(key)
            if isinstance(v, dict):
                return [f"{a}={b}" for a, b in v.items()]
            return [str(x) for x in _items(v)]

        return cls(tuple(parse_delay(x, where=loc("whatif.inject_delay"), source=source)
                         for x in strings("inject_delay")),
                   tuple(parse_straggler(x, where=loc("whatif.straggler"), source=source)
                         for x in strings("straggler")),
                   tuple([parse_link_event(x, where=loc("whatif.degrade_link"), source=source)
                          for x in strings("degrade_link")]
                         + [parse_link_event(x, fail=True, where=loc("whatif.fail_link"), source=source)
                            for x in strings("fail_link")]))

    @classmethod
    def coerce(cls, value) -> "WhatIf":
        """Python API convenience: a WhatIf, a ``whatif:``-style dict, or None."""
        if value is None:
            return cls()
        if isinstance(value, WhatIf):
            return value
        return cls.from_doc(value, source="whatif")

    def merged(self, other: "WhatIf") -> "WhatIf":
        """This plus ``other`` (CLI flags add to the workload file's)."""
        return WhatIf(self.delays + other.delays, self.stragglers + other.stragglers, self.links + other.links)

    # -- checks ----------------------------------------------------------------------------------
    def check_graph(self, graph, *, world_size: int | None = None) -> None:
        """Every link event names an existing link; every straggler rank exists."""
        for ev in self.links:
            what, src = ev.origin
            what = what or ("--fail-link" if ev.factor is None else "--degrade-link")
            for n in (ev.a, ev.b):
                if n not in graph:
                    fail_input("no such node in the topology", what, n, "a node name of the topology", src)
            if not graph.has_edge(ev.a, ev.b):
                fail_input("no such link in the topology", what, f"{ev.a}:{ev.b}",
                      "two nodes joined by a link, e.g. " + ", ".join(
                          f"{ev.a}:{m}" for m in sorted(graph[ev.a], key=str)[:3]), src)
            if ev.factor is not None:
                _check_degraded_rate(float(graph.edges[ev.a, ev.b]["rate_bps"]), ev, what, src)
        if world_size is not None:
            for s in self.stragglers:
                if s.rank >= world_size:
                    fail_input("no such rank", s.origin[0], s.rank, f"a rank in 0..{world_size - 1}", s.origin[1])

    def check_backend(self, backend) -> None:
        """A backend that does not declare the link-change capability cannot run link events.

        The capability (:data:`netsim.backends.base.LINK_CHANGES`: ``set_link_rate``
        and ``fail_link``) is declared in the backend class's ``capabilities``.
        """
        if not self.links:
            return
        from .backends.base import BACKEND_CAPABILITIES, LINK_CHANGES, _load_backends
        if LINK_CHANGES not in backend.capabilities:
            _load_backends()
            able = sorted(n for n, c in BACKEND_CAPABILITIES.items() if LINK_CHANGES in c)
            fail_input(f"the {backend.name} backend cannot change links during a run",
                  "--degrade-link/--fail-link", backend.name,
                  ("--backend " + " or ".join(able)) if able else "a backend declaring link_changes")

    # -- application -----------------------------------------------------------------------------
    def apply_to_ops(self, ops) -> list[int]:
        """Set ``op.delay_ps`` and stretch straggler compute in place; returns match counts per delay."""
        counts = [0] * len(self.delays)
        slow = {}
        for s in self.stragglers:
            slow[s.rank] = slow.get(s.rank, 1.0) * s.factor
        for op in ops:
            if op.kind in ("compute", "optimizer"):
                if slow and op.ranks[0] in slow:
                    op.duration_ps = int(round(op.duration_ps * slow[op.ranks[0]]))
                continue
            for i, d in enumerate(self.delays):
                if d.matches(op):
                    op.delay_ps += d.delay_ns * 1000
                    counts[i] += 1
        return counts

    def wrap_builder(self, builder) -> "WhatIfBuilder":
        """A builder whose ``build(it)`` applies this what-if to each iteration's ops."""
        return WhatIfBuilder(builder, self)

    def start(self, backend, graph) -> None:
        """Schedule the link events on ``backend.env`` (call before running)."""
        if not self.links:
            return
        self.check_backend(backend)
        env = backend.env
        for ev in sorted(self.links, key=lambda e: (e.time_ns, e.a, e.b)):
            env.process(_link_process(env, backend, graph, ev))


def _check_degraded_rate(rate_bps: float, ev: LinkEvent, what: str, src) -> None:
    """The rate a degrade sets obeys the bounds of every link rate (a factor of 1e-300 overflowed time)."""
    from .values import MAX_RATE_BPS, MIN_LINK_RATE_BPS
    new_bps = rate_bps * ev.factor
    if not MIN_LINK_RATE_BPS <= new_bps <= MAX_RATE_BPS:
        fail_input(f"link {ev.a}:{ev.b} of {rate_bps:g} bit/s would run at {new_bps:g} bit/s", what,
                   f"{ev.a}:{ev.b}={ev.factor:g}",
                   f"a factor giving a rate from {MIN_LINK_RATE_BPS:g} to {MAX_RATE_BPS:g} bit/s "
                   f"({MIN_LINK_RATE_BPS / rate_bps:g} to {MAX_RATE_BPS / rate_bps:g} on this link)", src)


def _link_process(env, backend, graph, ev: LinkEvent):
    delay = ev.time_ns * 1000 - env.now
    if delay > 0:
        yield env.timeout(delay)
    apply_link_event(backend, graph, ev)


def apply_link_event(backend, graph, ev: LinkEvent) -> None:
    """Apply one link event now through the backend protocol."""
    if not graph.has_edge(ev.a, ev.b):
        from .errors import RoutingError
        raise RoutingError(f"link {ev.a}:{ev.b} no longer exists at {ev.time_ns} ns (failed earlier?)")
    if ev.factor is None:
        what, src = ev.origin
        # the router names these when a destination becomes unreachable (netsim.topology.routing)
        graph.graph.setdefault("failed_links", []).append(
            f"{(src + ': ') if src else ''}{what or '--fail-link'} {ev.a}:{ev.b}@{ev.time_ns}ns")
        backend.fail_link(ev.a, ev.b)
    else:
        backend.set_link_rate(ev.a, ev.b, float(graph.edges[ev.a, ev.b]["rate_bps"]) * ev.factor)


class WhatIfBuilder:
    """Wraps an op-graph builder: applies delays/stragglers; checks every delay matches something.

    The check runs on iteration 0 (every iteration has the same op kinds), so
    a delay on a collective the workload never runs is an
    :class:`~netsim.errors.InputError` before any simulated time passes.
    """

    def __init__(self, builder, whatif: WhatIf):
        self._b, self.whatif = builder, whatif

    def __getattr__(self, name):
        return getattr(self._b, name)

    def build(self, it: int):
        ops = self._b.build(it)
        counts = self.whatif.apply_to_ops(ops)
        if it == 0:
            for d, n in zip(self.whatif.delays, counts):
                if n == 0:
                    kinds = sorted({f"{op.collective}@{op.kind}" for op in ops if op.is_comm})
                    fail_input("the delay matches no operation of this workload", d.origin[0],
                          f"{d.collective}@{d.group}" if d.group else d.collective,
                          "one of " + (", ".join(kinds) if kinds else "(the workload has no collectives)"),
                          d.origin[1])
        return ops
