"""``summary.json`` of an imported job: the run's figures, ``None`` for what a trace does not say.

Same keys as a netsim workload's summary (docs/run.md) so reports and
comparisons work; the model, batch and APNet fields are ``None`` (a trace
has no model description), ``workload_format`` names the importer and
``import_notes`` lists what it could not map.
"""
from __future__ import annotations

PS = 1e-12


def imported_summary(job, ex, be, traffic, *, times, breakdown, bds, ranks, bw, backend, cc, seed, wall,
                     topology, placement) -> dict:
    """The summary dict of a run of :class:`netsim.importers.job.ImportedJob` ``job``.

    ``pipeline_bubble_s_per_stage``: as a netsim workload's (:func:`netsim.runtime.breakdown.stage_bubbles`),
    for the lowest rank of each stage of ``placement`` (stages inferred from the op graph when the format
    does not state them, :mod:`netsim.importers.stages`).
    """
    from ..runtime.summary import comm_per_iteration, scheduled_events
    from ..runtime.breakdown import rank_bubbles
    iterations = len(times)
    stage_ranks: dict[int, int] = {}
    for r in range(placement.world_size):
        stage_ranks.setdefault(placement.stage(r), r)
    bubbles = rank_bubbles(ex, [stage_ranks[s] for s in sorted(stage_ranks)], placement.stage)
    mean = sum(times) / iterations
    counts, op_bytes, flow_bytes = comm_per_iteration(ex, traffic, iterations)
    par = job.parallelism
    return {
        "workload": job.name, "workload_source": job.source, "workload_format": job.format,
        "topology": topology, "backend": backend, "cc": cc, "seed": seed, "iterations": iterations,
        "model": {"name": None, "family": None, "params": None, "layers": None},
        "parallelism": {"dp": par.get("dp"), "tp": par.get("tp"), "pp": par.get("pp"), "cp": par.get("cp"),
                        "micro_batches": None,
                        "micro_batch": None, "global_batch": None, "schedule": None, "recompute": None,
                        "placement": None, "gpus": job.world_size},
        "compute": {"gpu": None, "peak_flops": None, "utilization": None},
        "params_per_rank": {"min": None, "max": None},
        "iteration_times_s": times,
        "iteration_time_s": mean,
        "breakdown_s": breakdown,
        "breakdown_iterations_s": [{k: v * PS for k, v in b.items()} for b in bds],
        "critical_ranks": ranks,
        "pipeline_bubble_s_per_stage": [sum(col) * PS / len(bubbles) for col in zip(*bubbles)],
        "samples_per_s": None,
        "model_tflops_per_gpu": None,
        "apnet_iteration_time_s": None, "apnet_terms_s": None,
        "apnet_stage_aware_iteration_time_s": None, "apnet_stage_aware_terms_s": None,
        "effective_bandwidth_bps": bw,
        "collectives_per_iteration": counts,
        "collective_bytes_per_iteration": op_bytes,
        "flow_bytes_per_iteration": flow_bytes,
        "flows": traffic.count,
        "ops": ex._done_ops,
        "network": be.stats(),
        "sim_events": scheduled_events(be.env),
        "wall_time_s": wall,
        "import_notes": list(job.notes),
    }
