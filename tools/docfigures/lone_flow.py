"""A lone flow's FCT against the analytic store-and-forward ideal (the README's first validation row).

A single flow, ``--cc none``, packet backend defaults: on ``dumbbell(1, 1)``
(1 KB … 100 MB) and on the two-server path of
``tests/backends/packet/pkt_helpers.gpu_path_graph`` that crosses NVLink, PCIe
and Ethernet (1 KB … 10 MB; 100 MB is the slow test's). The oracle is
:func:`netsim.network.ideal.ideal_fct_exact_ns` (a tandem of deterministic
servers), independent of the event engine. Figure: the largest relative error.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = False                   # about 1.5 s of CPU
#: the errors are ~1e-4 of the FCT (integer-ns rounding along the path): a rerun must stay within
#: half of them again, i.e. still far inside the 1 % the README promises
TOLERANCE = {"dumbbell_max_err": 0.5, "gpu_path_max_err": 0.5, "max_err": 0.5}
SIZES_BYTES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)

FIGURES = [
    Figure("readme", "README.md", "| analytic store-and-forward FCT | within 1 % (largest error "
           "{max_err:.3%}) |"),
]


def _lone_error(graph, src, dst, size) -> float:
    import simpy

    from netsim.backends.base import TraceSinks, create_backend
    from netsim.network.ideal import hops, ideal_fct_exact_ns
    from netsim.records import FlowTag, ListSink
    from netsim.topology import Router
    env, sink = simpy.Environment(), ListSink()
    be = create_backend("packet", graph, env=env, cc="none", seed=SEED, sinks=TraceSinks(fct=sink))
    be.send(src, dst, size, FlowTag(tag="lone"))
    env.run()
    be.close()
    exact = ideal_fct_exact_ns(hops(graph, Router(graph).path(src, dst, 0)), size,
                               be.params["mtu_bytes"], be.params["header_bytes"])
    return abs(sink.rows[0].fct_ns - exact) / exact


def measure() -> dict:
    """Largest relative error on each path, and over both."""
    from netsim.topology.builders import dumbbell
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "packet"))
    from pkt_helpers import gpu_path_graph
    d = max(_lone_error(dumbbell(1, 1), "left0", "right0", s) for s in SIZES_BYTES + (100_000_000,))
    g = max(_lone_error(gpu_path_graph(), "s0.gpu0", "s1.gpu0", s) for s in SIZES_BYTES)
    return {"dumbbell_max_err": d, "gpu_path_max_err": g, "max_err": max(d, g)}
