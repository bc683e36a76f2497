"""ECMP spreads 1,000 flows over the spines of a leaf-spine (packets counted on the wire)."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "backends", "packet"))
from pkt_helpers import run  # noqa: E402

from netsim.topology.builders import leaf_spine  # noqa: E402


def test_ecmp_spreads_1000_flows_over_spines():
    g = leaf_spine(4, 4, 8)
    rng = random.Random(1)
    hosts = [f"h{i}" for i in range(32)]
    flows = []
    while len(flows) < 1000:
        a, b = rng.sample(hosts, 2)
        if int(a[1:]) // 8 != int(b[1:]) // 8:  # different leaves: the flow crosses a spine
            flows.append((a, b, 1000, len(flows) * 50))
    be, recs = run(g, flows)
    assert len(recs) == 1000
    per_spine = []
    for s in range(4):
        per_spine.append(sum(p.tx_packets for (u, v), p in be.net.ports.items() if u == f"spine{s}"))
    mean = sum(per_spine) / 4
    assert sum(per_spine) == 2 * 1000  # one data packet and one ACK per flow through some spine
    assert max(per_spine) <= 1.5 * mean


def test_spray_uses_every_spine_for_one_flow():
    g = leaf_spine(2, 4, 1)
    be, recs = run(g, [("h0", "h1", 2_000_000)], params={"routing": "spray"})
    assert recs[0].size_bytes == 2_000_000
    used = [sum(p.tx_packets for (u, v), p in be.net.ports.items() if u == f"spine{s}") for s in range(4)]
    assert all(n > 0 for n in used)
