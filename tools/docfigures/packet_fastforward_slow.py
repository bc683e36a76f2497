"""Packet fast-forward on DCQCN: limit cycles and collective steps (docs/packet.md, "Fast-forward").

Same runs with ``fast_forward`` off (the reference) and on, seed 0, packet
backend defaults (DCQCN preset hpcc):

* a ring all-reduce of 64 MiB across 16 servers on one 100 Gb/s switch
  (``netsim.collectives``, ring): events off / on, iteration-time error, the
  median and p95 of the per-flow FCT errors;
* two DCQCN flows sharing the dumbbell bottleneck (``topologies/dumbbell.yaml``,
  left0 -> right0 and left1 -> right1, both at t = 0), of 50 MB and of 200 MB
  each: events off / on, the larger FCT error, ECN marks on / off.

The 1 GiB ring on 16 servers (DCTCP) is the slow figure: :func:`measure_1gib`
(about 40 minutes with fast-forward off); docs/packet.md states it as measured
on its date, not rechecked.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = True                     # about 3 minutes of CPU
#: the DCQCN runs draw random marks: a rerun on the same code is identical, a change elsewhere in the
#: packet model moves the draws, and the errors (fractions of a per cent) by as much as themselves
TOLERANCE = {"ring_iter_err": 1.0, "ring_fct_med": 1.0, "ring_fct_p95": 1.0, "db50_err": 1.0, "db200_err": 1.0,
             "ring_ratio": 0.2, "db50_ratio": 0.2, "db200_ratio": 0.2, "db50_marks": 0.1, "db200_marks": 0.1}

FIGURES = [
    Figure("ring", "docs/packet.md", "| ring all-reduce 64 MiB, 16 servers (DCQCN) | {ring_ratio:.1f}x | iteration "
           "{ring_iter_err:.3%}, FCT median {ring_fct_med:.3%} / p95 {ring_fct_p95:.3%} |"),
    Figure("db50", "docs/packet.md", "| dumbbell, 2 DCQCN flows of 50 MB (limit cycle) | {db50_ratio:.2f}x | "
           "{db50_err:.2%}, ECN marks x{db50_marks:.2f} |"),
    Figure("db200", "docs/packet.md", "| dumbbell, 2 DCQCN flows of 200 MB (limit cycle) | {db200_ratio:.2f}x | "
           "{db200_err:.2%}, ECN marks x{db200_marks:.2f} |"),
]


def _ring(cc: str, size_bytes: int, ff: bool) -> tuple:
    """(iteration ps, per-flow FCTs ns, events) of a ring all-reduce across 16 servers on one switch."""
    import numpy as np
    import simpy
    from netsim.backends.base import TraceSinks, create_backend
    from netsim.collectives.api import run_collective
    from netsim.records import ListSink
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "packet"))
    from pkt_helpers import star
    env = simpy.Environment()
    b = create_backend("packet", star(16), env=env, cc=cc, seed=SEED, params={"fast_forward": ff},
                       sinks=TraceSinks(fct=ListSink()))
    proc = run_collective(b, "allreduce", [f"h{i}" for i in range(16)], size_bytes, algorithm="ring")
    env.run()
    return (proc.value.end_ps - proc.value.start_ps, np.array([r.fct_ns for r in b.sink.rows], float),
            b.stats()["events"])


def _ring_figures(cc: str, size_bytes: int) -> dict:
    import numpy as np
    off, on = _ring(cc, size_bytes, False), _ring(cc, size_bytes, True)
    err = np.abs(on[1] - off[1]) / off[1]
    return {"ratio": off[2] / on[2], "iter_err": abs(on[0] - off[0]) / off[0],
            "fct_med": float(np.median(err)), "fct_p95": float(np.percentile(err, 95)),
            "events_off": off[2], "events_on": on[2], "iter_off_ps": off[0], "iter_on_ps": on[0]}


def _dumbbell(size_bytes: int) -> tuple:
    """(events off / on, largest FCT error, ECN marks on / off) of two DCQCN flows on the bottleneck."""
    from netsim.topology import load_topology
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "packet"))
    from pkt_helpers import run
    db = load_topology(os.path.join(ROOT, "topologies", "dumbbell.yaml"))
    flows = [("left0", "right0", size_bytes, 0), ("left1", "right1", size_bytes, 0)]
    be_off, off = run(db, flows, cc="dcqcn", seed=SEED)
    be_on, on = run(db, flows, cc="dcqcn", seed=SEED, params={"fast_forward": True})
    s_off, s_on = be_off.stats(), be_on.stats()
    err = max(abs(on[i].fct_ns - off[i].fct_ns) / off[i].fct_ns for i in off)
    return s_off["events"] / s_on["events"], err, s_on["ecn_marks"] / s_off["ecn_marks"]


def measure() -> dict:
    r = _ring_figures("dcqcn", 64 * 2**20)
    out = {f"ring_{k}": r[k] for k in ("ratio", "iter_err", "fct_med", "fct_p95")}
    for mb in (50, 200):
        out[f"db{mb}_ratio"], out[f"db{mb}_err"], out[f"db{mb}_marks"] = _dumbbell(mb * 10**6)
    return out


def measure_1gib() -> dict:
    """The slow figure: 1 GiB ring all-reduce across 16 servers under DCTCP, off and on (~40 min)."""
    return _ring_figures("dctcp", 2**30)
