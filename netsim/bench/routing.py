"""Topology build and routing cost at scale (``netsim bench routing_scale``; issue 22).

For 1k, 4k, 8k and 16k GPUs on the three-tier rail-optimized fabric
(:func:`netsim.topology.clos3.gpu_clos3`, 8-GPU servers, 32-server pods),
each in a fresh child process (so each size's peak RSS is its own): build
and validate through the builder expression (as ``netsim run`` does), then
route :data:`SAMPLE_PATHS` seeded random GPU pairs with :meth:`Router.path`,
then every pair a step needs: both directions of the data-parallel rings of a
t=8 p=16 placement (rank = (d·16 + stage)·8 + TP index; one pair per GPU and
direction) and EP-16 all-to-alls among the same-rail GPUs of 16 consecutive
servers (15 pairs per GPU), CPU seconds each (``*_cpu_s``: the process's CPU
time, steadier than wall time on a shared machine).
Target (issue 22): 16k GPUs build, validate and route 10k paths in <= 30 s
and <= 4 GiB; "build and route in seconds". Wall seconds are also given as a ratio to the SimPy ceiling
of the same run (``*_x_ceiling``: wall x ceiling events/s), comparable
across machines and loads.
"""
from __future__ import annotations

from . import benchmark, simpy_ceiling
from .outputs import _child

#: GPU counts measured (8 GPUs per server)
SIZES_GPUS = (1024, 2048, 4096, 8192, 16384)
#: random GPU pairs routed per size (issue 22's figure)
SAMPLE_PATHS = 10_000
SAMPLE_SEED = 1

_CODE = """
import random, sys, time
from netsim.topology import Router, build_expression
expr, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
g = build_expression(expr)
t1 = time.perf_counter()
r = Router(g)
gpus = sorted(x for x, k in g.nodes(data="kind") if k == "gpu")
rng = random.Random(seed)
for i in range(n):
    s, d = rng.sample(gpus, 2)
    r.path(s, d, i)
t2 = time.perf_counter()
out = {"nodes": g.number_of_nodes(), "links": g.number_of_edges(), "build_validate_s": round(t1 - t0, 2),
       "route_s": round(t2 - t1, 2)}
# the step's pairs, on a fresh router (its per-leaf rows and stubs built by these walks)
c0 = time.process_time()
g = build_expression(expr)
c1 = time.process_time()
r = Router(g)
from netsim.bench.routing import step_pairs
servers = len(gpus) // 8
ring, a2a = step_pairs([f"s{k}.gpu{j}" for k in range(servers) for j in range(8)])
c2 = time.process_time()
for i, (a, b) in enumerate(ring):
    r.path(a, b, i)
c3 = time.process_time()
for i, (a, b) in enumerate(a2a):
    r.path(a, b, i)
c4 = time.process_time()
out.update({"build_validate_cpu_s": round(c1 - c0, 2), "ring_pairs": len(ring), "ring_route_cpu_s": round(c3 - c2, 2),
            "a2a_pairs": len(a2a), "a2a_route_cpu_s": round(c4 - c3, 2), "full_rows": len(r._nh)})
"""


def step_pairs(gpus: list[str]) -> tuple[list, list]:
    """The GPU pairs a t=8 p=16 step needs on ``gpus`` (rank order, 8 per server, 16-server EP groups).

    Returns ``(ring, a2a)``: both directions of every data-parallel ring (rank =
    (d·16 + stage)·8 + TP index; one pair per GPU and direction) and the EP-16
    all-to-all pairs among the same-rail GPUs of 16 consecutive servers (15 per GPU).

    >>> ring, a2a = step_pairs([f"s{k}.gpu{j}" for k in range(32) for j in range(8)])
    >>> len(ring), len(a2a), ring[0], a2a[0]
    (512, 3840, ('s0.gpu0', 's16.gpu0'), ('s0.gpu0', 's1.gpu0'))
    """
    dp = len(gpus) // 128
    ring: list = []
    for s in range(16):
        for t in range(8):
            m = [gpus[(k * 16 + s) * 8 + t] for k in range(dp)]
            ring += [(m[i], m[(i + 1) % dp]) for i in range(dp)] + [(m[(i + 1) % dp], m[i]) for i in range(dp)]
    a2a = [(x, y) for base in range(0, len(gpus), 128) for t in range(8)
           for x in gpus[base + t:base + 128:8] for y in gpus[base + t:base + 128:8] if x != y]
    return ring, a2a


def fabric_expression(gpus: int) -> str:
    """The ``gpu_clos3`` builder expression of ``gpus`` GPUs (8 per server, rail-optimized)."""
    return f"gpu_clos3:servers={gpus // 8}"


@benchmark("routing_scale")
def routing_scale() -> dict:
    """Build + validate + route 10k paths on 1k..16k-GPU rail-optimized 3-tier fabrics (issue 22)."""
    ceiling = simpy_ceiling()
    out: dict = {"simpy_ceiling_ev_s": round(ceiling), "sample_paths": SAMPLE_PATHS}
    for gpus in SIZES_GPUS:
        got = _child(_CODE, fabric_expression(gpus), str(SAMPLE_PATHS), str(SAMPLE_SEED))
        for key, value in got.items():
            out[f"{gpus}gpu_{key}"] = value
        if "wall_s" in got:
            out[f"{gpus}gpu_wall_x_ceiling"] = round(got["wall_s"] * ceiling)
    return out
