"""docs/packet.md's SimPy events per packet-hop of the packet benchmarks (slow, about 15 s).

Event and packet-hop counts are deterministic for a seed (unlike the wall-clock
and CPU-time ratios beside them, which the doc states with their date):

* ``netsim bench permutation64`` (64 × 1 MB server-shift permutation on
  ``leaf_spine_64gpu``, ``--cc none``): events ÷ packet-hops;
* ``netsim bench incast16_none`` and ``incast16_dcqcn`` (16 × 4 MB into one
  100 Gb/s port, 2 MB switch buffer, PFC on): the same ratio for each.
"""
from __future__ import annotations

from . import Figure

SEED = 0                      # the benchmarks' fixed seed
SLOW = True                   # about 5 s unloaded, 15 s under load
DOC = "docs/packet.md"

FIGURES = [
    Figure("permutation", DOC, "About {permutation64_events_per_hop:.2f} SimPy events per packet-hop remain"),
    Figure("incast_cc", DOC, "({incast16_dcqcn_events_per_hop:.2f} events per packet-hop against "
           "{incast16_none_events_per_hop:.2f} for none,"),
]


def measure() -> dict:
    """Events per packet-hop of each benchmark."""
    from netsim.bench import cc as bench_cc
    from netsim.bench import packet as bench_packet
    perm = bench_packet.permutation64()
    out = {"permutation64_events_per_hop": perm["events"] / perm["packet_hops"]}
    for cc in ("none", "dcqcn"):
        s = bench_cc.run_incast(cc).stats
        out[f"incast16_{cc}_events_per_hop"] = s["events"] / s["packet_hops"]
    return out
