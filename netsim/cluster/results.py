"""Per-job results of a cluster run: iteration times, breakdowns, slowdown, the interference table.

A job's iteration ``k`` lasts from the end of iteration ``k-1`` (iteration 0:
the job's start time) to the moment its last op ends; its breakdown is the one
``netsim run`` reports (:mod:`netsim.runtime.breakdown`) over that span. Its
slowdown is its mean iteration time over the mean iteration time of the same
job run alone (same topology, workload, GPUs, backend, cc, parameters, seed
and iterations; no other job, no background). The interference table lists,
for every pair of jobs (``background`` counts as a job), every directed link
both sent bytes over, with the bytes each sent on it.
"""
from __future__ import annotations

from ..runtime.breakdown import KEYS, breakdowns
from ..units import PS_PER_NS

PS = 1e-12
INTERFERENCE_COLUMNS = ("job_a", "job_b", "link_src", "link_dst", "bytes_a", "bytes_b")


def job_summary(job, ex, ledger) -> dict:
    """The ``jobs.NAME`` entry of a cluster ``summary.json`` (before its slowdown)."""
    start_ps = job.spec.start_ns * PS_PER_NS
    n = job.spec.iterations
    ends = [ex.iteration_end_ps[i] for i in range(n)]
    times = [(e - s) * PS for s, e in zip([start_ps] + ends[:-1], ends)]
    bds, ranks = breakdowns(ex, job.placement, start_ps=start_ps)
    mean = sum(times) / n
    return {
        "workload": job.workload.name, "workload_source": job.workload.source,
        "gpus": list(job.placement.gpu_of), "placement": job.spec.placement.policy,
        "start_ns": job.spec.start_ns, "end_ns": ends[-1] // PS_PER_NS, "iterations": n,
        "traffic_class": job.spec.traffic_class,
        "iteration_times_s": times, "iteration_time_s": mean,
        "breakdown_s": {k: sum(b[k] for b in bds) * PS / n for k in KEYS},
        "breakdown_iterations_s": [{k: v * PS for k, v in b.items()} for b in bds],
        "critical_ranks": ranks,
        "flows": ledger.flows.get(job.name, 0), "bytes": ledger.bytes.get(job.name, 0),
        "ops": ex._done_ops,
        **({"memory": job.memory} if job.memory is not None else {}),
    }


def interference_rows(ledger) -> list[tuple]:
    """Rows of ``interference.csv`` (:data:`INTERFERENCE_COLUMNS`), sorted by job pair and link."""
    link_bytes = ledger.link_bytes()
    names = sorted(link_bytes)
    rows = []
    for i, a in enumerate(names):
        la = link_bytes[a]
        for b in names[i + 1:]:
            lb = link_bytes[b]
            for link in sorted(set(la) & set(lb), key=lambda l: (str(l[0]), str(l[1]))):
                rows.append((a, b, link[0], link[1], la[link], lb[link]))
    return rows


def shared_links(rows: list[tuple]) -> dict:
    """Per job pair ``"a|b"``: how many directed links they shared (for summary.json)."""
    out: dict[str, int] = {}
    for a, b, *_ in rows:
        key = f"{a}|{b}"
        out[key] = out.get(key, 0) + 1
    return out
