"""The FIFO wait of fluid DCQCN flows and HPCC's lone-flow rate (docs/flow-backend.md, queueing.py, hpccflow.py).

Two cases of ``tests/backends/flow/test_flow_queueing.py`` and
``tests/backends/flow/test_flow_hpcc.py``, each on both backends and on the
flow backend without the model term (patched out),
so the doc states what the term changed:

* a 4 kB DCQCN flow (preset ``hpcc``) joining, 40 µs in, the standing queue of
  two 2 MB flows into one receiver on ``dumbbell:n_left=3,n_right=1``: its FCT;
* one 10 MB HPCC flow alone on ``dumbbell:n_left=1,n_right=1``: its FCT;
* a 16 MB ring all-reduce over the 8 GPUs of the ASTRA-sim ``[Ring, Switch]`` file of
  ``tests/importers/data`` on the flow backend, with and without head-of-line pauses into
  relaying GPUs (``relayhol.py``), and on the analytic backend.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 1
SLOW = False                   # seven small runs: a few seconds of CPU
DOC = "docs/flow-backend.md"

FIGURES = [
    Figure("fifo_wait", DOC, "a 4 kB flow that joins the standing queue of two 2 MB flows into one "
           "receiver took {short_flow_nowait_us:.1f} µs on the flow backend without it, "
           "{short_flow_us:.1f} µs with it, against {short_flow_packet_us:.1f} µs on the packet backend"),
    Figure("hpcc_lone", DOC, "one 10 MB HPCC flow alone at 100 Gb/s: packet {hpcc_packet_us:.1f} µs, flow "
           "{hpcc_flow_us:.1f} µs (it was {hpcc_nocap_us:.1f} µs, the ideal, before the cap)"),
    Figure("relay", DOC, "a 16 MB ring all-reduce took {relay_paused_ms:.3f} ms with the pause, "
           "{relay_ms:.3f} ms without (analytic {relay_analytic_ms:.3f} ms)"),
]


def _relay_ms(backend: str, pause: bool = False) -> float:
    from netsim.backends.base import create_backend
    from netsim.collectives import run_collective
    from netsim.topology import gpus, load_topology
    g = load_topology(os.path.join(ROOT, "tests", "importers", "data", "astra_Ring_Switch_8npus.yml"))
    be = create_backend(backend, g)
    if pause:
        be.solver.relay_links = frozenset()
    be.env.run(run_collective(be, "allreduce", gpus(g), 16_000_000))
    return be.env.now / 1e9


def measure() -> dict:
    """FCTs (µs) of the two cases, on both backends and without the model terms."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "flow"))
    import netsim.backends.flow.dcqcnhooks as hooks
    from test_flow_hpcc import _lone_fct_ns
    from test_flow_queueing import _short_behind_long
    out = {"short_flow_us": _short_behind_long("flow")[0] / 1e3,
           "short_flow_packet_us": _short_behind_long("packet")[0] / 1e3}
    wait = hooks.fifo_wait_ps
    hooks.fifo_wait_ps = lambda net, fid: 0.0
    try:
        out["short_flow_nowait_us"] = _short_behind_long("flow")[0] / 1e3
    finally:
        hooks.fifo_wait_ps = wait
    out["hpcc_packet_us"] = _lone_fct_ns("packet")[0] / 1e3
    out["hpcc_flow_us"] = _lone_fct_ns("flow")[0] / 1e3
    import netsim.backends.flow.hpccflow as hf
    frac = hf.hpcc_lone_rate_frac
    hf.hpcc_lone_rate_frac = lambda params, mss: 1.0
    try:
        out["hpcc_nocap_us"] = _lone_fct_ns("flow")[0] / 1e3
    finally:
        hf.hpcc_lone_rate_frac = frac
    out.update(relay_ms=_relay_ms("flow"), relay_paused_ms=_relay_ms("flow", pause=True),
               relay_analytic_ms=_relay_ms("analytic"))
    return out
