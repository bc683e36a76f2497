"""HPCC against DCQCN under WebSearch background traffic at 30 % load (docs/reproducing-papers.md).

Scenario: ``fat_tree:k=4`` (16 hosts, 20 switches, every link 100 Gb/s, 1 µs; a stand-in for
HPCC's 320-server fat tree, which netsim does not ship — its ``topology.txt`` reads as is with
``netsim flows``), ``netsim traffic websearch --load 0.3 --duration 10ms --seed 1`` (Poisson
arrivals per host, WebSearch sizes from HPCC's traffic_gen), packet backend defaults with
``--set pfc_threshold=dynamic`` for both algorithms (the same PFC configuration: HPCC's run.py
sets ``USE_DYNAMIC_PFC_THRESHOLD 1`` for every algorithm), seed 1, ``--cc hpcc`` (preset paper)
and ``--cc dcqcn`` (preset hpcc). Measured: p50 and p99 FCT slowdown (FCT / ideal FCT) of the
flows < 100 KB, their count, and PFC pauses of each run. HPCC's own 320-server fat tree:
``hpcc_fattree``.
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile

import numpy as np

from . import Figure
from ._run import netsim

SEED = 1
SLOW = True
DOC = "docs/reproducing-papers.md"
TOPO = "fat_tree:k=4"
TRAFFIC = ("traffic", "websearch", "--load", "0.3", "--duration", "10ms", "--topology", TOPO,
           "--seed", str(SEED))

#: the PFC configuration of both runs (HPCC run.py: USE_DYNAMIC_PFC_THRESHOLD 1 for every algorithm)
PFC = ("--set", "pfc_threshold=dynamic")

FIGURES = [
    Figure("short_p99", DOC, "short-flow (< 100 KB, {n_short:.0f} flows) p99 slowdown {hpcc_p99:.2f} with HPCC "
           "against {dcqcn_p99:.2f} with DCQCN ({reduction_pct:.0f} % lower)"),
    Figure("short_p50", DOC, "p50 {hpcc_p50:.2f} against {dcqcn_p50:.2f}"),
    Figure("pauses", DOC, "PFC pauses {hpcc_pauses:.0f} (HPCC) and {dcqcn_pauses:.0f} (DCQCN)"),
]


def measure() -> dict:
    """Generate the traffic, run both algorithms, return slowdown percentiles and pause counts."""
    from netsim.cli import main
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        flows = os.path.join(tmp, "websearch.csv")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = main([*TRAFFIC, "--out", flows])
        if status not in (0, None):
            raise RuntimeError(f"netsim {' '.join(TRAFFIC)} exited {status}")
        for cc in ("hpcc", "dcqcn"):
            res = netsim("flows", TOPO, flows, "--cc", cc, "--seed", str(SEED), *PFC)
            f = res.fct
            short = f[f["size_bytes"] < 100_000]
            sd = (short["fct_ns"] / short["ideal_fct_ns"]).to_numpy()
            out[f"{cc}_p50"], out[f"{cc}_p99"] = (float(v) for v in np.percentile(sd, [50, 99]))
            out[f"{cc}_pauses"] = float(res.summary["pfc_pauses"])
            out["n_short"] = float(len(short))
    out["reduction_pct"] = 100.0 * (1.0 - out["hpcc_p99"] / out["dcqcn_p99"])
    return out
