"""What a training run reports: the traffic it carried and ``summary.json``'s content.

Models the run's accounting after (or while) it happens: flows counted into
the per-iteration traffic matrix and per-group bytes (:class:`TrafficSink`,
one call per flow), collectives and their message sizes per kind, SimPy's
scheduled-event count, iteration times and their breakdown
(:mod:`.breakdown`), APNet's closed-form estimates (:mod:`.apnet`), model
FLOP/s, and what is known of a run that failed or was interrupted.  Leaves
out writing files (:mod:`netsim.runfiles`, :mod:`.api`) and an imported job's
summary (:mod:`netsim.importers.summary`).  docs/run.md lists every key.
"""
from __future__ import annotations

import time
from collections import defaultdict

from ..backends.base import ROUTER
from ..network.scheduler import events_scheduled
from ..sinks import Sink
from ..units import PS_PER_NS
from .apnet import apnet_iteration_time, apnet_stage_aware_iteration_time, effective_bandwidths
from .breakdown import KEYS, breakdowns, stage_bubbles

PS = 1e-12


class TrafficSink(Sink):
    """Aggregates flows into the per-iteration traffic matrix and per-group bytes.

    One counter per (iteration, src, dst, group kind), updated once per flow (the hot path: one
    call per flow); :attr:`matrix` and :attr:`group_bytes` are its two marginals, summed on demand.
    """

    def __init__(self):
        self.bytes: dict[tuple, int] = defaultdict(int)
        self.count = 0

    def add(self, rec) -> None:
        self.count += 1
        self.bytes[(rec.iteration, rec.src, rec.dst, rec.group_kind)] += rec.size_bytes

    def add_many(self, rows) -> None:
        """:meth:`add` of each of ``rows`` (one loop: the records of one delivery)."""
        acc = self.bytes
        n = 0
        for rec in rows:
            acc[(rec.iteration, rec.src, rec.dst, rec.group_kind)] += rec.size_bytes
            n += 1
        self.count += n

    @property
    def matrix(self) -> dict[tuple, int]:
        """Bytes per (iteration, src, dst)."""
        out: dict[tuple, int] = defaultdict(int)
        for (it, src, dst, _), b in self.bytes.items():
            out[(it, src, dst)] += b
        return out

    @property
    def group_bytes(self) -> dict[tuple, int]:
        """Bytes per (iteration, group kind)."""
        out: dict[tuple, int] = defaultdict(int)
        for (it, _, _, kind), b in self.bytes.items():
            out[(it, kind)] += b
        return out

    def flush(self) -> None:
        pass

    close = flush


def sim_ns(be) -> int | None:
    """Simulated time reached (ns), or None before the backend exists."""
    return None if be is None else int(be.env.now // PS_PER_NS)


def stopped_summary(run, wl, traffic, *, backend, cc, seed, iterations, t0, topology) -> dict:
    """What is known about a run that failed or was interrupted (the rest of ``summary.json`` needs an end)."""
    out = {"workload": wl.name, "workload_source": wl.source, "topology": topology, "backend": backend, "cc": cc,
           "seed": seed, "iterations": iterations, "flows": traffic.count,
           "ops": run["ex"]._done_ops if run["ex"] is not None else 0,
           "wall_time_s": time.perf_counter() - t0}
    if run["be"] is not None:
        try:
            out["network"] = run["be"].stats()
        except Exception:  # noqa: BLE001 - a half-built backend may not have its counters
            pass
    return out


def scheduled_events(env) -> int | None:
    """SimPy events scheduled so far (:func:`netsim.network.scheduler.events_scheduled`)."""
    return events_scheduled(env)


def message_sizes(ex) -> dict:
    """Collectives per (group kind, collective, size in bytes), over every iteration."""
    out: dict[tuple, int] = defaultdict(int)
    for ops in ex.iteration_ops.values():
        for op in ops:
            if op.is_comm:
                out[(op.kind, op.collective, op.size_bytes)] += 1
    return out


def comm_per_iteration(ex, traffic, iterations: int) -> tuple[dict, dict, dict]:
    """Collectives and their bytes per kind in iteration 0 (sorted by kind), and flow bytes per group and iteration."""
    counts: dict[str, int] = defaultdict(int)
    op_bytes: dict[str, int] = defaultdict(int)
    for op in ex.iteration_ops.get(0, []):
        if op.is_comm:
            counts[op.kind] += 1
            op_bytes[op.kind] += op.size_bytes
    flow_bytes: dict[str, list] = {}
    for (it, g), b in sorted(traffic.group_bytes.items()):
        flow_bytes.setdefault(g or "none", [0] * iterations)[it] = b
    return dict(sorted(counts.items())), dict(sorted(op_bytes.items())), flow_bytes


def training_summary(wl, placement, builder, ex, be, graph, traffic, *, backend, cc, seed, iterations, wall, topology):
    """``summary.json`` of a finished run (an imported job's through :mod:`netsim.importers.summary`)."""
    ends = [ex.iteration_end_ps[i] for i in range(iterations)]
    times = [(e - s) * PS for s, e in zip([0] + ends[:-1], ends)]
    bds, ranks = breakdowns(ex, placement)
    mean = sum(times) / len(times)
    breakdown = {k: sum(b[k] for b in bds) * PS / len(bds) for k in KEYS}
    bw = effective_bandwidths(graph, placement, router=be.router if ROUTER in be.capabilities else None)
    if getattr(wl, "format", None) is not None:        # an imported job: no model to describe
        from ..importers.summary import imported_summary
        return imported_summary(wl, ex, be, traffic, times=times, breakdown=breakdown, bds=bds, ranks=ranks, bw=bw,
                                backend=backend, cc=cc, seed=seed, wall=wall, topology=topology,
                                placement=placement)
    apnet = apnet_iteration_time(wl, builder, bw)
    bubbles = stage_bubbles(ex, placement, wl.pp)
    staged = apnet_stage_aware_iteration_time(wl, builder, bw)
    counts, op_bytes, flow_bytes = comm_per_iteration(ex, traffic, iterations)
    flops_iter = wl.model.fwd_flops_per_sample() * wl.global_batch * (4 if wl.recompute else 3)
    params_rank = [builder.rank_params(r) for r in range(placement.world_size)]
    return {
        "workload": wl.name, "workload_source": wl.source, "topology": topology, "backend": backend, "cc": cc,
        "seed": seed, "iterations": iterations,
        "model": {"name": wl.model.name, "family": wl.model.family, "params": wl.model.params(),
                  "layers": wl.model.layers},
        "parallelism": {"dp": wl.dp, "tp": wl.tp, "pp": wl.pp, "cp": getattr(wl, "cp", 1),
                        "micro_batches": wl.micro_batches,
                        "micro_batch": wl.micro_batch, "global_batch": wl.global_batch, "schedule": wl.schedule,
                        **({"virtual_stages": wl.virtual_stages} if wl.virtual_stages > 1 else {}),
                        "recompute": wl.recompute, "placement": ",".join(wl.order), "gpus": placement.world_size},
        "compute": {"gpu": wl.gpu, "peak_flops": wl.peak_flops, "utilization": wl.utilization},
        "params_per_rank": {"min": min(params_rank), "max": max(params_rank)},
        "iteration_times_s": times,
        "iteration_time_s": mean,
        "breakdown_s": breakdown,
        "breakdown_iterations_s": [{k: v * PS for k, v in b.items()} for b in bds],
        "critical_ranks": ranks,
        "pipeline_bubble_s_per_stage": [sum(col) * PS / len(bubbles) for col in zip(*bubbles)],
        "samples_per_s": wl.global_batch / mean if mean > 0 else None,
        "model_tflops_per_gpu": flops_iter / mean / placement.world_size / 1e12 if mean > 0 else None,
        "apnet_iteration_time_s": apnet["T_iter"],
        "apnet_terms_s": {k: v for k, v in apnet.items() if k != "T_iter"},
        "apnet_stage_aware_iteration_time_s": staged["T_iter"],
        "apnet_stage_aware_terms_s": {k: v for k, v in staged.items() if k != "T_iter"},
        "effective_bandwidth_bps": bw,
        "collectives_per_iteration": counts,
        "collective_bytes_per_iteration": op_bytes,
        "flow_bytes_per_iteration": flow_bytes,
        "flows": traffic.count,
        "ops": ex._done_ops,
        "network": be.stats(),
        "sim_events": scheduled_events(be.env),
        "wall_time_s": wall,
    }
