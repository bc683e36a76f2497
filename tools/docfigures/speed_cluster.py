"""docs/cluster.md's speed of a four-job cluster run, in CPU seconds and flows (slow, ~40 s of CPU).

``netsim bench cluster_gpt3b_4x32``: four GPT-3B jobs
(``workloads/gpt-3b-t2p2d8.yaml``, 32 GPUs each, ``packed``) on the 128-GPU
leaf-spine of :data:`netsim.cluster.bench.TOPOLOGY`, flow backend, one
iteration each, no alone-runs — its flows and process CPU seconds; then the
first job alone on the same fabric (a one-job cluster, same placement), and
the ratio of the four-job CPU time to four times the one-job CPU time (1.0 =
sharing the network costs nothing beyond running the jobs one by one). CPU
time moves with the load of a shared machine: CPU seconds are rechecked within
400 %, the ratio within 100 % (:data:`TOLERANCE`); the flow count at 1 %.
"""
from __future__ import annotations

import os
import time

from . import ROOT, Figure

SEED = 0                       # run_cluster's default seed
SLOW = True                    # five GPT-3B steps at full size
DOC = "docs/cluster.md"
TOLERANCE = {"cluster_cpu_s": 4.0, "alone_cpu_s": 4.0, "cpu_vs_alone": 1.0}

FIGURES = [
    Figure("speed", DOC, "{flows:,.0f} flows in {cluster_cpu_s:.0f} s of CPU time (by "
           "`tools/docfigures/speed_cluster.py`, rechecked loosely). That is {cpu_vs_alone:.1f}× four times "
           "the first job run alone on the same fabric ({alone_cpu_s:.1f} s of CPU):"),
]


def measure() -> dict:
    """Flows and CPU seconds of the four-job run, CPU seconds of one job alone, and their ratio."""
    from netsim.cluster.api import run_cluster
    from netsim.cluster.bench import TOPOLOGY
    wl = os.path.join(ROOT, "workloads", "gpt-3b-t2p2d8.yaml")
    jobs = [{"name": f"j{i}", "workload": wl, "placement": "packed"} for i in range(4)]
    c0 = time.process_time()
    s = run_cluster(TOPOLOGY, {"jobs": jobs}, backend="flow", alone=False, progress=False)
    cluster_cpu = time.process_time() - c0
    c0 = time.process_time()
    run_cluster(TOPOLOGY, {"jobs": jobs[:1]}, backend="flow", alone=False, progress=False)
    alone_cpu = time.process_time() - c0
    return {"flows": s["flows"], "cluster_cpu_s": cluster_cpu, "alone_cpu_s": alone_cpu,
            "cpu_vs_alone": cluster_cpu / (4 * alone_cpu)}
