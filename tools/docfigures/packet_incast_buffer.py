"""docs/packet.md's PFC-headroom example: the largest egress queue of a 16-to-1 DCQCN incast in a 1 MB buffer.

The 16-to-1 incast of 1 MB flows of ``tests/validation/flow_scenarios.py``
(leaf-spine, 2:1 fabric) on the packet backend with DCQCN's default preset,
PFC on, ``buffer_bytes`` 1 MB, seed 0: the peak of every switch egress queue
sampled in ``queues.csv``, the largest of them, and the switch buffer it must
stay under (a group never holds more than XOFF + headroom, a switch never
more than its buffer).
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = False                   # one 16 MB incast at packet level: a few seconds unloaded
DOC = "docs/packet.md"
BUFFER_BYTES = 1_000_000

FIGURES = [
    Figure("peak", DOC, "(16 -> 1 DCQCN incast of 1 MB flows, default preset, 1 MB buffer, seed 0: the largest "
           "egress queue peaks at {peak_mb:.2f} MB, under the buffer as the model guarantees.)"),
]


def measure() -> dict:
    """The largest egress-queue peak, MB (``queues.csv`` samples of the packet backend)."""
    import simpy

    from netsim.backends.base import TraceSinks, create_backend
    from netsim.records import FlowTag, ListSink
    from netsim.topology import load_topology
    path = os.path.join(ROOT, "tests", "validation")
    if path not in sys.path:
        sys.path.insert(0, path)
    from flow_scenarios import incast
    sc = incast(16, 1_000_000)
    env, q = simpy.Environment(), ListSink()
    be = create_backend("packet", load_topology(sc.topology), env=env, cc="dcqcn", seed=SEED,
                        params={"buffer_bytes": BUFFER_BYTES}, sinks=TraceSinks(fct=ListSink(), queues=q))
    for i, (s, d, size, _) in enumerate(sc.flows):
        be.send(s, d, size, FlowTag(tag=f"f{i}"))
    env.run()
    be.close()
    peak = max(row[4] for row in q.rows)
    if peak > BUFFER_BYTES:
        raise RuntimeError(f"packet_incast_buffer: an egress queue peaked at {peak} B, above the {BUFFER_BYTES} B buffer")
    return {"peak_mb": peak / 1e6}
