"""An executor that builds each op when it becomes ready and drops it when it finishes.

:class:`netsim.runtime.executor.Executor` builds a whole iteration's ops up
front, which a job of 9,216 GPUs cannot afford (SimAI's MoE example: ~95.6 M
ops per iteration).  :class:`LazyExecutor` runs the same dependency-counting
schedule on a *lifted graph* (e.g. :class:`netsim.importers.simai_classes.LiftedGraph`:
rank-class templates instantiated per data-parallel block), which names
instances ``(template, block)`` and gives, per instance, its successors in
the order the explicit executor would start them and its dependency count.
An instance's :class:`~netsim.workloads.ops.Op` is made when its last
dependency finishes and is referenced by nothing once it has finished; the
executor keeps one counter per instance that has some but not all of its
dependencies done.  Memory grows with what is in flight, not with the job.

Compute ops, collectives, pipeline transfers, the ops sink and the iteration
bookkeeping are the base executor's (same events, same order: runs are
those of the explicit executor, checked in ``tests/runtime/test_lazy.py``).
Left out: the overlap model, what-if wrappers, variability and the
per-iteration op lists (``iteration_ops`` stays empty, so summaries that
walk every op — breakdown, message sizes — are not available).
"""
from __future__ import annotations

from ..errors import SimulationError
from .executor import Executor


class LazyExecutor(Executor):
    """Run ``iterations`` iterations of ``graph`` (a lifted graph) on ``backend``; see the module docstring."""

    def __init__(self, backend, graph, gpu_of, *, ops_sink=None, tag: str = "", progress: bool = False):
        super().__init__(backend, None, gpu_of, ops_sink=ops_sink, tag=tag, progress=progress)
        self.graph = graph
        self.waiting: dict[tuple, int] = {}     # (iteration, template, block) -> dependencies not yet done
        self.instance_of: dict[int, tuple] = {}  # id(op) -> (template, block) while it runs
        self.peak_waiting = 0
        self.peak_running = 0

    def _generate(self, it: int) -> None:
        if it != 0 or 0 in self.remaining:
            return
        for k in range(self.iterations):
            self.remaining[k] = self.graph.size
        self._total_ops = self.graph.size * self.iterations
        for v, b in self.graph.roots():
            self._begin(0, v, b)

    def _begin(self, it: int, v: int, b: int) -> None:
        op = self.graph.op(v, b, it)
        self.instance_of[id(op)] = (v, b)
        if len(self.instance_of) > self.peak_running:
            self.peak_running = len(self.instance_of)
        self._start(op)

    def _finish(self, op, result=None) -> None:
        now = self.env.now
        op.end_ps = now
        if self.ops_sink is not None:
            from ..units import ps_to_ns
            s, e = ps_to_ns(op.start_ps), ps_to_ns(now)
            for r in op.ranks:
                self.ops_sink.add((r, op.iteration, op.name, op.kind, op.group, op.size_bytes, s, e,
                                   result.algorithm if result else "", result.protocol if result else ""))
        u, b = self.instance_of.pop(id(op))
        it = op.iteration
        this, nxt = self.graph.successors(u, b)
        self._release(it, this)
        if it + 1 < self.iterations:
            self._release(it + 1, nxt)
        self.remaining[it] -= 1
        self._done_ops += 1
        if self.remaining[it] == 0:
            self._iteration_done(it)

    def _release(self, it: int, targets) -> None:
        waiting = self.waiting
        for v, b in targets:
            key = (it, v, b)
            left = waiting.pop(key, None)
            if left is None:
                left = self.graph.pending(v, it)
            left -= 1
            if left == 0:
                self._begin(it, v, b)
            else:
                waiting[key] = left
        if len(waiting) > self.peak_waiting:
            self.peak_waiting = len(waiting)

    def check_complete(self) -> None:
        """Raise if some instance never ran."""
        short = [k for k in range(self.iterations) if self.remaining.get(k, 1)]
        if short:
            raise SimulationError(f"iteration {short[0]}: {self.remaining.get(short[0])} ops never finished "
                                  f"({len(self.waiting)} still waiting)")
