"""Shared scenarios on which the flow backend is compared with the packet backend.

Used by the agreement tests (tests/validation/test_flow_vs_packet.py,
test_flow_dcqcn_traces.py), by the calibration script (tools/flow_calibrate.py)
and by the docs' comparison table; kept beside the tests, outside the
installed package. A
scenario is a topology expression plus a list of flows ``(src, dst,
size_bytes, start_ns)``; :func:`run_flows_on` plays it on any registered
backend through the :class:`~netsim.backends.base.Backend` seam and returns
the :class:`~netsim.records.FlowRecord` of every flow, in flow order. Flows
are sent in list order, so a backend that numbers flows from 0 hashes the
same ECMP paths for both backends.
"""
from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field

import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.records import FlowRecord, FlowTag, ListSink
from netsim.units import PS_PER_NS

Flow = tuple[str, str, int, int]


@dataclass
class Scenario:
    """A named flow list on a topology expression."""

    name: str
    topology: str
    flows: list[Flow] = field(default_factory=list)


def dumbbell_long(n: int = 4, size_bytes: int = 4_000_000, stagger_ns: int = 20_000) -> Scenario:
    """``n`` long flows across a dumbbell's bottleneck, starting ``stagger_ns`` apart."""
    flows = [(f"left{i}", f"right{i}", size_bytes, i * stagger_ns) for i in range(n)]
    return Scenario(f"dumbbell_{n}x{size_bytes // 1000}KB",
                    f"dumbbell:n_left={n},n_right={n}", flows)


def incast(n: int = 16, size_bytes: int = 1_000_000) -> Scenario:
    """``n``-to-1 incast on a leaf-spine (senders spread over the other leaves)."""
    per_leaf = 4
    leaves = 1 + -(-n // per_leaf)
    topo = f"leaf_spine:leaves={leaves},spines=2,hosts_per_leaf={per_leaf},fabric_rate_bps=100Gbps"   # 2:1, as measured
    dst = "h0"
    flows = [(f"h{per_leaf + i}", dst, size_bytes, 0) for i in range(n)]
    return Scenario(f"incast_{n}to1_{size_bytes // 1000}KB", topo, flows)


def permutation(leaves: int = 4, spines: int = 2, hosts_per_leaf: int = 4, size_bytes: int = 2_000_000,
                seed: int = 1) -> Scenario:
    """A random permutation (no fixed points) of all hosts of a leaf-spine."""
    n = leaves * hosts_per_leaf
    rng = random.Random(seed)
    while True:
        perm = list(range(n))
        rng.shuffle(perm)
        if all(i != p for i, p in enumerate(perm)):
            break
    flows = [(f"h{i}", f"h{p}", size_bytes, 0) for i, p in enumerate(perm)]
    return Scenario(f"permutation_{n}_{size_bytes // 1000}KB",
                    f"leaf_spine:leaves={leaves},spines={spines},hosts_per_leaf={hosts_per_leaf},"
                    "fabric_rate_bps=100Gbps", flows)      # links at the host rate, as when the figures were measured


def load_graph(topology: str):
    from netsim.topology import load_topology
    return load_topology(topology)


def run_flows_on(backend: str, graph, flows: list[Flow], *, cc: str = "none", params: dict | None = None,
                 cc_params: dict | None = None, seed: int = 0) -> tuple[list[FlowRecord], dict, float]:
    """Play ``flows`` on ``backend``; return (records in flow order, stats, wall seconds)."""
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend(backend, graph, env=env, params=params or {}, seed=seed, cc=cc,
                       cc_params=cc_params or {}, sinks=TraceSinks(fct=sink))
    events: list = [None] * len(flows)

    def start(i, src, dst, size, t_ns):
        events[i] = b.send(src, dst, size, FlowTag(tag=f"f{i}", row=i))   # keyed by row, as netsim flows

    order = sorted(range(len(flows)), key=lambda i: (flows[i][3], i))

    def starter(env):
        for i in order:
            src, dst, size, t_ns = flows[i]
            wait = t_ns * PS_PER_NS - env.now
            if wait > 0:
                yield env.timeout(wait)
            start(i, src, dst, size, t_ns)

    env.process(starter(env))
    t0 = time.perf_counter()
    env.run()
    wall = time.perf_counter() - t0
    b.close()
    recs = [ev.value if ev is not None and ev.triggered else None for ev in events]
    return recs, b.stats(), wall


def compare_fct(flow_recs: list[FlowRecord], packet_recs: list[FlowRecord], min_bytes: int = 1_000_000) -> dict:
    """Per-flow relative FCT error |flow − packet| / packet over flows ≥ ``min_bytes``."""
    errs = sorted(abs(f.fct_ns - p.fct_ns) / p.fct_ns for f, p in zip(flow_recs, packet_recs)
                  if p is not None and f is not None and p.size_bytes >= min_bytes)
    if not errs:
        return {"flows": 0}
    p95 = errs[min(len(errs) - 1, int(round(0.95 * (len(errs) - 1))))]
    fm = statistics.fmean(f.fct_ns for f in flow_recs)
    pm = statistics.fmean(p.fct_ns for p in packet_recs)
    fl = max(f.end_ns for f in flow_recs)
    pl = max(p.end_ns for p in packet_recs)
    return {"flows": len(errs), "median_rel_err": statistics.median(errs), "p95_rel_err": p95,
            "max_rel_err": errs[-1], "mean_fct_rel_err": abs(fm - pm) / pm,
            "last_completion_rel_err": abs(fl - pl) / pl}


def p99_fct_ns(recs: list[FlowRecord]) -> float:
    """99th percentile FCT (nearest rank)."""
    v = sorted(r.fct_ns for r in recs)
    return float(v[min(len(v) - 1, int(round(0.99 * (len(v) - 1))))])
