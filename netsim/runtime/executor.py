"""Executes operation graphs on a backend.

The executor is a dependency-counting scheduler on the backend's SimPy
environment: an op starts the moment its last dependency finishes — a compute
op as one ``env.timeout`` (its duration), a collective as
:func:`netsim.collectives.run_collective` on its ranks' GPU nodes (flows start
at the GPU; routing takes them through PCIe/NVLink/NIC), a pipeline transfer as
a ``sendrecv``.  Streams are already dependencies of the graph, so there is one
pending SimPy event per running op and no process per stream (cheaper, same
semantics).  Iteration k+1's ops are generated when iteration k's first op
starts (so a long run never holds more than about two iterations ahead).

Compute/communication interference on the GPU: with ``overlap`` (an
:class:`netsim.runtime.overlap.OverlapModel`, installed when the workload's
``overlap.slowdown`` or ``overlap.comm_slowdown`` > 0) compute ops are run by
that model, slowed while communication runs on their GPU, and a communication
op's end is deferred by the progress it lost beside compute; without it an
op's duration does not depend on what else the GPU runs.  Left out: kernel launch latencies.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..collectives import run_collective
from ..errors import SimulationError
from ..records import FlowTag
from ..units import ps_to_ns

if TYPE_CHECKING:
    import simpy

OPS_COLUMNS = ("rank", "iteration", "op", "kind", "group", "size_bytes", "start_ns", "end_ns", "algorithm",
               "protocol")


@contextmanager
def gc_paused():
    """Pause CPython's cyclic garbage collector inside the block (restored after it, even on error).

    Generating an iteration allocates millions of long-lived ops and almost no garbage; each
    collection triggered meanwhile walks the whole growing graph, so collections made generation
    superlinear in the ops (building the 8.4 M ops of a 175 B-model step on 8,192 GPUs took 81 s of
    CPU with the default thresholds and 28 s with :data:`netsim.gctune.THRESHOLDS`; 1.4 M ops of the
    same step with fewer micro-batches 6.2 s, 3.8 s with collection off; one machine, one session).
    Reference counting still frees what generation drops; outputs do not depend on it.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Executor:
    """Run ``iterations`` iterations produced by ``builder`` on ``backend``.

    Parameters
    ----------
    backend : Backend
    builder : OpGraphBuilder
        Its ``build(iteration)`` returns the ops of one iteration.
    gpu_of : sequence of str
        GPU node of each rank.
    node_groups : callable(tuple of ranks) -> list of lists of nodes, optional
        Server grouping for hierarchical collectives.
    ops_sink : object with ``add(row)``, optional
        Receives one :data:`OPS_COLUMNS` row per rank per op.
    tag : str
        Goes into every flow's ``tag`` field (the workload name).
    job : str
        Goes into every flow's ``job`` field (a cluster run's job name, :mod:`netsim.cluster`; ``""`` otherwise).
    progress : bool
        Show :class:`netsim.progress.Progress`'s line (only drawn on a terminal).
    overlap : netsim.runtime.overlap.OverlapModel, optional
        Runs compute ops slowed by communication beside them (None: durations as given).
    """

    def __init__(self, backend, builder, gpu_of, *, node_groups=None, ops_sink=None, tag: str = "",
                 progress: bool = False, keep_ops: bool = True, overlap=None, job: str = ""):
        self.backend, self.env = backend, backend.env
        self.builder, self.gpu_of = builder, tuple(gpu_of)
        self.node_groups = node_groups
        self.ops_sink, self.tag, self.job = ops_sink, tag, job
        self.progress, self.keep_ops = progress, keep_ops
        self.overlap = overlap
        self.iteration_ops: dict[int, list] = {}
        self.remaining: dict[int, int] = {}
        self.iteration_end_ps: dict[int, int] = {}
        self.iteration_start_ps: dict[int, int] = {}
        self._seq = 0
        self._done_ops = 0
        self._total_ops = 0
        self.events_ops = 0
        #: succeeds when the last iteration has finished; ``None`` until :meth:`start`
        self.finished: simpy.Event | None = None

    # ------------------------------------------------------------------------------------------
    def run(self, iterations: int) -> None:
        """Simulate ``iterations`` iterations; raises SimulationError on a deadlock."""
        self.start(iterations)
        from ..progress import Progress
        estimate = len(self.iteration_ops.get(0, ())) * iterations
        prog = Progress(self.env, quiet=not self.progress, label=f"netsim run ({iterations} iterations)",
                        work=lambda: self._done_ops, total_work=estimate or None)
        try:
            with prog:
                prog.run(self.finished)
        except RuntimeError as exc:  # simpy: no events left before `finished`
            self.check_complete()
            raise SimulationError(f"simulation stopped early: {exc}") from None

    def start(self, iterations: int) -> None:
        """Start iteration 0 now without running the environment (several executors share one network:
        :mod:`netsim.cluster` starts each at its job's start time); ``finished`` succeeds at the end."""
        self.iterations = iterations
        self.finished = self.env.event()
        self._generate(0)

    def _generate(self, it: int) -> None:
        if it >= self.iterations or it in self.iteration_ops:
            return
        with gc_paused():
            ops = self.builder.build(it)
            ready = self._wire(ops)
        self.iteration_ops[it] = ops
        self.remaining[it] = len(ops)
        self._total_ops += len(ops)
        if not ops:
            self._iteration_done(it)
        for op in ready:
            self._start(op)

    def _wire(self, ops: list) -> list:
        """Number ``ops``, count each one's unfinished dependencies (each distinct op once, in
        ``deps`` order) and register it with them; the ops with none left, in order."""
        ready = []
        seq = self._seq
        for op in ops:
            op.seq = seq
            seq += 1
            deps = op.deps
            if None in deps:
                deps = op.deps = [d for d in deps if d is not None]
            if len(deps) > 1:
                deps = dict.fromkeys(deps)      # distinct, first occurrence first (ops hash by identity)
            pending = 0
            for d in deps:
                if d.end_ps < 0:
                    succs = d.succs
                    if succs:
                        succs.append(op)
                    else:                       # () until the op has a successor: one list fewer per op
                        d.succs = [op]
                    pending += 1
            op.pending = pending
            if pending == 0:
                ready.append(op)
        self._seq = seq
        return ready

    def _start(self, op) -> None:
        env = self.env
        op.start_ps = env.now
        it = op.iteration
        if it not in self.iteration_start_ps:
            self.iteration_start_ps[it] = env.now
            self._generate(it + 1)
        if op.kind in ("compute", "optimizer"):
            if self.overlap is not None:
                self.overlap.start_compute(op, op.duration_ps + op.delay_ps, lambda op=op: self._finish(op))
                return
            ev = env.timeout(op.duration_ps + op.delay_ps)
            ev.callbacks.append(lambda _e, op=op: self._finish(op, None))
            return
        if op.delay_ps:
            ev = env.timeout(op.delay_ps)
            ev.callbacks.append(lambda _e, op=op: self._launch(op))
        else:
            self._launch(op)

    def _launch(self, op) -> None:
        nodes = [self.gpu_of[r] for r in op.ranks]
        spec = op.spec
        tag = FlowTag(self.tag, op.iteration, op.name, op.group, op.collective if op.collective != "send" else "sendrecv",
                      group_kind=op.kind, job=self.job)
        kind = "sendrecv" if op.collective == "send" else op.collective
        algorithm = spec.algorithm if kind == "allreduce" or spec.algorithm == "auto" else "ring"
        groups = None
        if self.overlap is not None:
            self.overlap.comm_started(op)
        if algorithm == "hierarchical" and self.node_groups is not None:
            groups = self.node_groups(nodes)
        proc = run_collective(self.backend, kind, nodes, op.size_bytes, algorithm=algorithm,
                              channels=spec.channels, chunk_bytes=spec.chunk_bytes, tag=tag,
                              sizes=op.sizes, node_groups=groups, protocol=spec.protocol,
                              sw_latency=spec.sw_latency)
        if self.overlap is not None and self.overlap.g:    # communication slowed beside compute: deferred end
            proc.callbacks.append(lambda e, op=op: self.overlap.network_done(
                op, lambda: self._finish(op, e.value if e.ok else None)))
            return
        proc.callbacks.append(lambda e, op=op: self._finish(op, e.value if e.ok else None))

    def _finish(self, op, result=None) -> None:
        now = self.env.now
        op.end_ps = now
        if self.overlap is not None and op.is_comm:
            self.overlap.comm_ended(op)
        if self.ops_sink is not None:
            s, e = ps_to_ns(op.start_ps), ps_to_ns(now)
            for r in op.ranks:
                self.ops_sink.add((r, op.iteration, op.name, op.kind, op.group, op.size_bytes, s, e,
                                   result.algorithm if result else "", result.protocol if result else ""))
        succs, op.succs = op.succs, ()
        for nxt in succs:
            nxt.pending -= 1
            if nxt.pending == 0:
                self._start(nxt)
        it = op.iteration
        self.remaining[it] -= 1
        self._done_ops += 1
        if self.remaining[it] == 0:
            self._iteration_done(it)

    def _iteration_done(self, it: int) -> None:
        self.iteration_end_ps[it] = self.env.now
        if len(self.iteration_end_ps) == self.iterations and not self.finished.triggered:
            self.finished.succeed()
        if not self.keep_ops and it - 2 in self.iteration_ops:
            del self.iteration_ops[it - 2]

    def check_complete(self) -> None:
        """Raise if some op never ran (a dependency that can never be satisfied)."""
        for it, ops in self.iteration_ops.items():
            stuck = [op for op in ops if op.end_ps < 0]
            if stuck:
                raise SimulationError(f"iteration {it}: {len(stuck)} ops never finished, e.g. {stuck[0].name} "
                                      f"on ranks {stuck[0].ranks}")
