"""HPCC against DCQCN on HPCC's own fat tree under WebSearch at 30 % load (docs/reproducing-papers.md).

Scenario: HPCC's ``simulation/mix/fat.txt`` as :func:`netsim.topology.hpcc.hpcc_fat_tree_text`
writes it (320 servers at 100 Gb/s, 20 ToRs, 20 aggregation and 16 core switches at 400 Gb/s,
every link 1 µs), ``netsim traffic websearch --load 0.3 --duration WINDOW_NS --seed 1`` on it,
the packet backend with ``pfc_threshold=dynamic`` for both algorithms (HPCC's run.py sets
``USE_DYNAMIC_PFC_THRESHOLD 1`` for every algorithm; its 32 MB buffer at 100 Gb/s is netsim's
default), ``--cc hpcc`` (preset paper) and ``--cc dcqcn`` (preset hpcc), seed 1, stopped at
``STOP_NS`` (long flows may still be running; every short flow must have completed). Measured:
p50/p99 FCT slowdown of the flows < 100 KB, their count, PFC pauses, and the wall time of a run.
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time

import numpy as np

from . import Figure

SEED = 1
SLOW = True
DOC = "docs/reproducing-papers.md"
#: traffic window (arrivals), ns: the longest that runs in about 10 min per algorithm here
WINDOW_NS = 1_000_000
#: simulation stop, ns (short flows arriving up to WINDOW_NS have completed by then)
STOP_NS = 2_500_000
SHORT_BYTES = 100_000
ALGOS = {"hpcc": None, "dcqcn": {"dcqcn": {"preset": "hpcc"}}}
#: wall times depend on the machine and its load: checked only to within a factor of 10
TOLERANCE = {"hpcc_wall_s": 10.0, "dcqcn_wall_s": 10.0}

FIGURES = [
    Figure("fat_short_p99", DOC, "on HPCC's fat tree ({n_flows:.0f} flows over {window_ms:.1f} ms, "
           "{n_short:.0f} of them < 100 KB) short-flow p99 slowdown {hpcc_p99:.2f} with HPCC against "
           "{dcqcn_p99:.2f} with DCQCN; p50 {hpcc_p50:.2f} against {dcqcn_p50:.2f}; PFC pauses "
           "{hpcc_pauses:.0f} and {dcqcn_pauses:.0f}"),
    Figure("fat_wall", DOC, "one run took {hpcc_wall_s:.0f} s (HPCC) and {dcqcn_wall_s:.0f} s (DCQCN) of wall time"),
]


def scenario(tmp: str):
    """Write the fat tree and the WebSearch flows under ``tmp``; return (graph, flows)."""
    from netsim.cli import main
    from netsim.flowfile import load_flows
    from netsim.topology.hpcc import hpcc_fat_tree
    topo = os.path.join(tmp, "fat.txt")
    graph = hpcc_fat_tree(path=topo)
    flows_csv = os.path.join(tmp, "websearch.csv")
    argv = ["traffic", "websearch", "--load", "0.3", "--duration", f"{WINDOW_NS}ns", "--topology", topo,
            "--seed", str(SEED), "--out", flows_csv]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = main(argv)
    if status not in (0, None):
        raise RuntimeError(f"netsim {' '.join(argv)} exited {status}")
    return graph, load_flows(flows_csv, graph)


def measure_one(cc: str) -> dict:
    """One algorithm's run: short-flow slowdown p50/p99, PFC pauses, wall time, flow counts."""
    from netsim.simulate import run_flows
    with tempfile.TemporaryDirectory() as tmp:
        graph, flows = scenario(tmp)
    n_short = sum(1 for f in flows if f.size_bytes < SHORT_BYTES)
    t0 = time.perf_counter()
    s = run_flows(graph, flows, cc=cc, params={"pfc_threshold": "dynamic"}, cc_params=ALGOS[cc], seed=SEED,
                  until_ns=STOP_NS)
    sd = np.array([r.fct_ns / r.ideal_fct_ns for r in s["records"] if r.size_bytes < SHORT_BYTES])
    if len(sd) != n_short:
        raise RuntimeError(f"{cc}: {len(sd)} of {n_short} short flows completed by {STOP_NS} ns")
    p50, p99 = (float(v) for v in np.percentile(sd, [50, 99]))
    return {f"{cc}_p50": p50, f"{cc}_p99": p99, f"{cc}_pauses": float(s["pfc_pauses"]),
            f"{cc}_wall_s": time.perf_counter() - t0, "n_flows": float(len(flows)), "n_short": float(n_short)}


def measure() -> dict:
    """Both algorithms, one after the other (see :func:`measure_one`)."""
    out = {"window_ms": WINDOW_NS / 1e6}
    for cc in ALGOS:
        out.update(measure_one(cc))
    return out
