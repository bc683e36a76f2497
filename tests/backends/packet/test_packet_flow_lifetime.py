"""What a finished flow leaves behind: no live object, and counters that add up.

* Memory: finished flows used to be cyclic garbage (their pacing tick held
  a bound method of the flow) that only a full collection frees; with the
  collector off, every flow that ever ran stayed alive.
* Counters: a flow's ``fct.csv`` row is written when its receiver holds the
  last byte, but its sender may retransmit (spuriously) until the last ACK
  arrives; the summary added those in, so its ``retransmitted_bytes`` did
  not equal the column sum. Now the summary's counters are the rows' sums
  (plus flows without a row: failed or still running) and what came after
  a row is reported apart (``transport_counters_after_fct_row``).
"""
from __future__ import annotations

import gc
import random

import pytest
from pkt_helpers import make_backend, run, star

from netsim.topology.builders import leaf_spine
from netsim.transport.flow import Flow


def _live_flows() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, Flow))


@pytest.mark.parametrize("cc", ["dcqcn", "cubic"])
def test_finished_flows_are_freed_without_a_collection(cc):
    g = star(6)
    env, be = make_backend(g, cc=cc)
    be.all_flows = None                   # keep no reference from the test side
    rng = random.Random(5)
    seen = []

    def starter(env):
        for _ in range(300):
            yield env.timeout(1_000_000)  # one flow per us
            s, d = rng.sample(range(6), 2)
            be.send(f"h{s}", f"h{d}", rng.randint(1_000, 8_000))
            seen.append(be.net.active)

    gc.collect()
    base = _live_flows()
    was = gc.isenabled()
    gc.disable()
    try:
        env.process(starter(env))
        env.run()
        assert be.completed == 300 and be.net.active == 0
        assert _live_flows() - base == 0          # not 300: nothing waits for the cycle collector
    finally:
        if was:
            gc.enable()
    assert max(seen) < 300                        # the flows did overlap only partly


def _random_flows(hosts, n, seed):
    rng = random.Random(seed)
    return [(*rng.sample(hosts, 2), rng.randint(10_000, 300_000), rng.randint(0, 200)) for _ in range(n)]


@pytest.mark.parametrize("cc,params,spray", [
    ("cubic", {"buffer_bytes": 100_000, "pfc": "off"}, False),
    ("dctcp", {"buffer_bytes": 400_000, "routing": "spray"}, True),
])
def test_retransmitted_bytes_of_rows_add_up_to_the_summary(cc, params, spray):
    if spray:
        g = leaf_spine(leaves=2, spines=2, hosts_per_leaf=4, host_rate_bps=100e9, fabric_rate_bps=100e9,
                       delay_ns=1000)
    else:
        g = star(8)
    hosts = sorted(n for n in g.nodes if g.nodes[n]["kind"] == "host")
    be, recs = run(g, _random_flows(hosts, 100, 3), cc=cc, params=params)
    st = be.stats()
    assert st["completed"] == len(recs) == 100 and st["drops"] > 0
    after = st["transport_counters_after_fct_row"]
    for key, col in (("retransmitted_bytes", "retransmitted_bytes"), ("retransmits", "retransmits"),
                     ("timeouts", "timeouts"), ("ecn_marked_packets_received", "ecn_marked_packets"),
                     ("cnps", "cnps_received")):
        rows = sum(getattr(r, col) for r in recs.values())
        assert st[key] == rows, key                                   # equal by construction
        wire = sum(getattr(f, col) for f in be.all_flows.values())    # what the senders did in all
        assert st[key] + after[key] == wire, key
    # the case the old summary got wrong: retransmissions after a flow's row was written
    assert after["retransmitted_bytes"] > 0


def test_flows_without_a_row_stay_in_the_summary():
    """A run stopped early: running flows have no row; the summary still counts what they did."""
    g = star(3)
    env, be = make_backend(g, cc="dcqcn")
    for s in (0, 1):
        be.send(f"h{s}", "h2", 10**9)
    env.run(until=300_000_000)
    st = be.stats()
    assert st["completed"] == 0 and st["cnps"] > 0
    assert st["cnps"] == sum(f.cnps_received for f in be.all_flows.values())


def test_a_done_flow_is_freed_before_its_retransmit_tick_fires():
    """The stale retransmit tick (RTO 1 ms after the last send) no longer holds the finished flow."""
    import weakref
    g = star(2)
    env, be = make_backend(g, cc="dcqcn")
    be.all_flows = None
    be.send("h0", "h1", 5_000)
    flow = weakref.ref(next(iter(be.net.flows.values())))
    env.run(until=200_000_000)            # 200 us: done long ago, its tick is due at about 1 ms
    assert be.completed == 1 and env.peek() < float("inf")     # the tick is still pending
    assert flow() is None
    env.run()
