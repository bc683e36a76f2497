"""Packet-backend benchmarks: ``netsim bench incast16 permutation64``.

* ``incast16`` — 16-to-1 incast, 16 x 1 MB at 100 Gbps, ``--cc none``, PFC on,
  on ``dumbbell(16, 1)`` (16 senders on one switch, 100 Gbps links, the
  switch-to-switch link is the 100 Gbps bottleneck);
* ``short_flows_memory`` — peak RSS of 10 k and of 100 k short DCQCN flows
  (1-8 KB) at the same arrival rate, each run in a fresh process: memory
  must follow the flows that are active, not those that have run;
* ``permutation64`` — 64 flows of 1 MB, GPU ``i`` of server ``s`` to GPU ``i``
  of server ``(s + 1) mod 8`` (every flow leaves its server and crosses the
  fabric), on the shipped ``topologies/leaf_spine_64gpu.yaml``, ``--cc none``.

Each reports wall seconds, simulated data packets, packet-hops (every
transmission of any packet — data, ACK, CNP — on any link), packet-hops per
wall second and its ratio to the bare SimPy event rate measured in the same
run (:func:`netsim.bench.simpy_ceiling`, measured before and after the run and
averaged). ``ratio_cpu_time`` is the same ratio with both rates in CPU time
(``time.process_time``), which other processes on a shared machine disturb
less.
"""
from __future__ import annotations

import os
import time

import simpy

from . import benchmark, simpy_ceiling

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(graph, pairs, size_bytes: int, cc: str = "none", params: dict | None = None) -> dict:
    from ..backends.base import TraceSinks
    from ..backends.packet.backend import PacketBackend
    from ..records import ListSink
    env = simpy.Environment()
    be = PacketBackend(graph, env=env, params=params or {}, seed=0, cc=cc, cc_params={},
                       sinks=TraceSinks(fct=ListSink()))
    for s, d in pairs:
        be.send(s, d, size_bytes)
    before = simpy_ceiling()
    before_cpu = _ceiling_cpu()
    t0 = time.perf_counter()
    c0 = time.process_time()
    env.run()
    cpu = time.process_time() - c0
    wall = time.perf_counter() - t0
    st = be.stats()
    ceiling = (before + simpy_ceiling()) / 2  # the machine is shared: bracket the run
    ceiling_cpu = (before_cpu + _ceiling_cpu()) / 2
    mss = be.params["mtu_bytes"] - be.params["header_bytes"]
    data_packets = len(pairs) * -(-size_bytes // mss) + st["retransmits"]
    rate = st["packet_hops"] / wall
    return {"wall_s": round(wall, 3), "flows": st["flows"], "completed": st["completed"],
            "packets": data_packets, "packet_hops": st["packet_hops"], "events": st["events"],
            "packet_hops_per_s": round(rate), "simpy_ceiling_events_per_s": round(ceiling),
            "ratio": round(rate / ceiling, 3),
            "ratio_cpu_time": round(st["packet_hops"] / cpu / ceiling_cpu, 3), "sim_time_ns": st["sim_time_ns"], "drops": st["drops"],
            "pfc_pauses": st["pfc_pauses"]}


def _ceiling_cpu(events: int = 400_000) -> float:
    """Bare ``yield env.timeout(1)`` events per CPU second (robust to other processes on the machine)."""
    env = simpy.Environment()

    def loop(env):
        for _ in range(events):
            yield env.timeout(1)

    env.process(loop(env))
    c0 = time.process_time()
    env.run()
    return events / (time.process_time() - c0)


@benchmark("incast16")
def incast16(cc: str = "none") -> dict:
    """16-to-1 incast of 16 x 1 MB at 100 Gbps (dumbbell(16, 1))."""
    from ..topology.builders import dumbbell
    g = dumbbell(16, 1, host_rate_bps=100e9)
    return _run(g, [(f"left{i}", "right0") for i in range(16)], 1_000_000, cc=cc)


@benchmark("permutation64")
def permutation64(cc: str = "none") -> dict:
    """64 x 1 MB server-shift permutation on topologies/leaf_spine_64gpu.yaml."""
    from ..topology import load_topology
    g = load_topology(os.path.join(_ROOT, "topologies", "leaf_spine_64gpu.yaml"))
    pairs = [(f"s{s}.gpu{i}", f"s{(s + 1) % 8}.gpu{i}") for s in range(8) for i in range(8)]
    return _run(g, pairs, 1_000_000, cc=cc)


#: arrival rate of :func:`short_flows_memory` (flows per simulated microsecond): 100 k flows in 20 ms,
#: the load of netsim issue 15 (section 3) that exposed memory growing with finished flows
SHORT_FLOWS_PER_US = 5
#: flow sizes of :func:`short_flows_memory`, bytes (uniform, inclusive): issue 15's 1-8 KB
SHORT_FLOW_BYTES = (1_000, 8_000)


def short_flows_child(n_flows: int) -> dict:
    """Run ``n_flows`` short DCQCN flows in this process; its peak RSS and the flows left alive.

    Random host pairs of topologies/leaf_spine_hosts.yaml (seeded), one flow
    every 1 / :data:`SHORT_FLOWS_PER_US` us, sizes uniform in
    :data:`SHORT_FLOW_BYTES`, under the run's tuned garbage collector
    (:mod:`netsim.gctune`), as ``netsim flows`` runs it.
    """
    import gc
    import random

    from ..backends.base import TraceSinks
    from ..backends.packet.backend import PacketBackend
    from ..gctune import tuned_gc
    from ..topology import load_topology
    from ..transport.flow import Flow
    g = load_topology(os.path.join(_ROOT, "topologies", "leaf_spine_hosts.yaml"))
    hosts = sorted((n for n in g.nodes if g.nodes[n].get("kind") == "host"), key=str)
    env = simpy.Environment()
    be = PacketBackend(g, env=env, params={}, seed=0, cc="dcqcn", cc_params={}, sinks=TraceSinks())
    rng = random.Random(1)
    gap_ps = 1_000_000 // SHORT_FLOWS_PER_US

    def starter(env):
        for _ in range(n_flows):
            yield env.timeout(gap_ps)
            s, d = rng.sample(hosts, 2)
            be.send(s, d, rng.randint(*SHORT_FLOW_BYTES))

    env.process(starter(env))
    t0 = time.perf_counter()
    with tuned_gc():
        env.run()
        alive = sum(1 for o in gc.get_objects() if isinstance(o, Flow))
    return {"flows": n_flows, "completed": be.completed, "wall_s": round(time.perf_counter() - t0, 3),
            "peak_rss_mib": round(_peak_rss_kib() / 1024, 1),
            "flow_objects_alive_at_end": alive}


def _peak_rss_kib() -> int:
    """This process's peak resident set (KiB): VmHWM, which starts afresh at exec.

    (``getrusage``'s ``ru_maxrss`` would carry the parent's peak over a
    fork + exec, so a child started by a large process reports the parent's.)
    """
    import resource
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _child(n_flows: int) -> dict:
    import json
    import subprocess
    import sys
    code = f"import json; from netsim.bench.packet import short_flows_child; print(json.dumps(short_flows_child({n_flows})))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@benchmark("short_flows_memory")
def short_flows_memory(small: int = 10_000, large: int = 100_000) -> dict:
    """Peak RSS of 10 k vs 100 k short DCQCN flows at the same arrival rate (each in a fresh process)."""
    a, b = _child(small), _child(large)
    return {"small_flows": a["flows"], "small_peak_rss_mib": a["peak_rss_mib"], "small_wall_s": a["wall_s"],
            "large_flows": b["flows"], "large_peak_rss_mib": b["peak_rss_mib"], "large_wall_s": b["wall_s"],
            "large_completed": b["completed"], "large_flow_objects_alive_at_end": b["flow_objects_alive_at_end"],
            "peak_ratio": round(b["peak_rss_mib"] / a["peak_rss_mib"], 3)}
