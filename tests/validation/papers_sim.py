"""Shared runner for the papers' validation tests (tests/validation/test_papers_*.py).

Composes the public pieces — workload, placement, op-graph builder (with MoE/
ZeRO/SP), what-if, backend, executor — so every test states its full setup,
and prints a "paper vs netsim" line for each figure it checks.
"""
from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass

from netsim.backends.base import TraceSinks, create_backend
from netsim.records import ListSink
from netsim.runtime.executor import Executor
from netsim.whatif import WhatIf
from netsim.workloads import load_workload, place
from netsim.workloads.extended import ExtendedBuilder

PS = 1e-12
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def workload_path(name: str) -> str:
    """Path of a shipped workload file."""
    return os.path.join(ROOT, "workloads", name)


def topology_path(name: str) -> str:
    """Path of a shipped topology file."""
    return os.path.join(ROOT, "topologies", name)


@dataclass
class Result:
    ex: Executor
    flows: list
    workload: object
    placement: object
    builder: object
    backend: object

    @property
    def iteration_times_s(self) -> list[float]:
        ends = [self.ex.iteration_end_ps[i] for i in range(len(self.ex.iteration_end_ps))]
        return [(e - s) * PS for s, e in zip([0] + ends[:-1], ends)]

    @property
    def iteration_time_s(self) -> float:
        t = self.iteration_times_s
        return sum(t) / len(t)

    @property
    def samples_per_s(self) -> float:
        return self.workload.global_batch / self.iteration_time_s

    def comm_time_s(self, kind: str, iteration: int = 0, rank: int | None = None) -> float:
        """Busy time of ``kind`` collectives seen by ``rank`` (default: the max over ranks), union of intervals."""
        per_rank = defaultdict(list)
        for op in self.ex.iteration_ops[iteration]:
            if op.kind == kind:
                for r in op.ranks:
                    per_rank[r].append((op.start_ps + op.delay_ps, op.end_ps))
        def union(iv):
            tot, cur_s, cur_e = 0, None, None
            for s, e in sorted(iv):
                if cur_e is None or s > cur_e:
                    if cur_e is not None:
                        tot += cur_e - cur_s
                    cur_s, cur_e = s, e
                else:
                    cur_e = max(cur_e, e)
            return tot + ((cur_e - cur_s) if cur_e is not None else 0)
        if rank is not None:
            return union(per_rank.get(rank, [])) * PS
        return max((union(v) for v in per_rank.values()), default=0) * PS

    def traffic_matrix(self, iteration: int) -> dict:
        m = defaultdict(int)
        for r in self.flows:
            if r.iteration == iteration:
                m[(r.src, r.dst)] += r.size_bytes
        return dict(m)


def _builder(wl, pl, seed, **kw):
    try:
        return ExtendedBuilder(wl, pl, seed=seed, **kw)
    except TypeError:  # a base builder without a seed argument
        return ExtendedBuilder(wl, pl, **kw)


def simulate(graph, workload, *, backend="analytic", cc="none", iterations=1, seed=0, whatif=None,
             zero_stage=None, sequence_parallel=None, host_stack=None, params=None, gpus=None) -> Result:
    """Run ``iterations`` of ``workload`` (dict or file) on ``graph``; ``host_stack`` a HostStack or None."""
    wl = load_workload(workload)
    pl = place(wl, graph, gpu_names=gpus)
    b = _builder(wl, pl, seed, zero_stage=zero_stage, sequence_parallel=sequence_parallel)
    w = WhatIf.coerce(whatif)
    w.check_graph(graph, world_size=pl.world_size)
    fct = ListSink()
    be = create_backend(backend, graph, params=params, seed=seed, cc=cc, sinks=TraceSinks(fct=fct))
    if host_stack is not None:
        be.host_stack = host_stack
    w.start(be, graph)
    ex = Executor(be, w.wrap_builder(b), pl.gpu_of)
    ex.run(iterations)
    ex.check_complete()
    return Result(ex, fct.rows, wl, pl, b, be)


def report(paper: str, figure: str, paper_value, netsim_value) -> None:
    """One 'paper vs netsim' line (pytest -s shows them)."""
    print(f"[{paper}] {figure}: paper {paper_value} | netsim {netsim_value}")
