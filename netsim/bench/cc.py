"""Congestion-control scenarios and benchmarks (``netsim bench incast16_<cc> cubic_dumbbell``).

The scenario builders here are shared by the benchmarks and by the
validation tests (``tests/validation/test_cc_*.py``):

* :func:`dumbbell_graph` — N senders on 10/25/100 G access links into one
  switch, one bottleneck link to a second switch, one receiver;
* :func:`incast_graph` — N senders and one receiver on a single switch;
* :func:`simulate` — runs flows on the packet backend with a probe that
  samples, every ``probe_ns``, each flow's delivered bytes and CC state and the
  watched egress queue (no trace files: numbers straight from the objects).

Benchmarks: ``incast16_<cc>`` for every registered algorithm (none, cubic,
dcqcn, dctcp, hpcc, swift, timely) (16 × 4 MB into
one 100 Gbps port; wall seconds, packet-hops per wall second and its ratio to
the raw SimPy event rate measured in the same run) and ``cubic_dumbbell``
(ns-3.37 reference: 4 Cubic flows × 100 MB, 10 Gbps / 2 µs access links, one
router, 10 Gbps / 5 µs bottleneck with a 100-packet FIFO, 1448-byte segments;
ns-3 runs it at 55 k bottleneck packets per wall second, 9.64 Gbps goodput,
17 drops).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import networkx as nx
import simpy

from . import benchmark, simpy_ceiling


def _edge(g, u, v, rate_bps, delay_ns, kind="ethernet"):
    g.add_edge(u, v, rate_bps=float(rate_bps), delay_ns=int(delay_ns), kind=kind)


def dumbbell_graph(n: int, *, host_rate_bps: float, host_delay_ns: int, bott_rate_bps: float,
                   bott_delay_ns: int, recv_rate_bps: float | None = None,
                   recv_delay_ns: int | None = None) -> nx.Graph:
    """Senders ``s0..s{n-1}`` → ``sw0`` → (bottleneck) → ``sw1`` → receiver ``r0``."""
    g = nx.Graph(name=f"cc_dumbbell_{n}")
    g.add_node("sw0", kind="switch")
    g.add_node("sw1", kind="switch")
    g.add_node("r0", kind="host")
    for i in range(n):
        g.add_node(f"s{i}", kind="host")
        _edge(g, f"s{i}", "sw0", host_rate_bps, host_delay_ns)
    _edge(g, "sw0", "sw1", bott_rate_bps, bott_delay_ns)
    _edge(g, "sw1", "r0", recv_rate_bps or host_rate_bps,
          host_delay_ns if recv_delay_ns is None else recv_delay_ns)
    return g


def incast_graph(n: int, *, rate_bps: float = 100e9, delay_ns: int = 1000) -> nx.Graph:
    """``n`` senders ``s0..`` and receiver ``r0`` on one switch ``sw0``."""
    g = nx.Graph(name=f"cc_incast_{n}")
    g.add_node("sw0", kind="switch")
    g.add_node("r0", kind="host")
    _edge(g, "r0", "sw0", rate_bps, delay_ns)
    for i in range(n):
        g.add_node(f"s{i}", kind="host")
        _edge(g, f"s{i}", "sw0", rate_bps, delay_ns)
    return g


@dataclass
class Result:
    """What :func:`simulate` returns; sample arrays are lists indexed like ``t_ns``."""

    backend: object
    flows: dict
    stats: dict
    wall_s: float
    t_ns: list = field(default_factory=list)
    delivered: dict = field(default_factory=dict)     # fid -> [rcv_nxt bytes]
    acked: dict = field(default_factory=dict)         # fid -> [snd_una bytes]
    cwnd: dict = field(default_factory=dict)          # fid -> [cwnd bytes]
    rate: dict = field(default_factory=dict)          # fid -> [rate bps]
    queue: list = field(default_factory=list)         # watched egress queue, bytes

    @property
    def records(self):
        return self.backend.sink.rows

    @property
    def pfc_events(self):
        """``(time_ns, node, port, priority, event)`` rows."""
        return self.backend.sinks.pfc.rows


def simulate(graph, flows, *, cc: str, params: dict | None = None, cc_params: dict | None = None,
             seed: int = 0, until_ns: int | None = None, probe_ns: int = 0,
             watch: tuple[str, str] | None = ("sw0", "sw1")) -> Result:
    """Run ``flows`` = [(src, dst, size_bytes, start_ns[, cc])] on the packet backend.

    ``params``/``cc_params`` as for ``run_flows``. Without ``until_ns`` the run
    ends when every flow is acknowledged. With ``probe_ns > 0`` a probe samples
    flows and the egress queue ``watch`` = (node, next node) every ``probe_ns``.
    """
    from ..backends.base import TraceSinks
    from ..backends.packet.backend import PacketBackend
    from ..records import FlowTag, ListSink
    from ..topology import validate
    graph = validate(graph)
    p = {"queue_sample_ns": 0, "cc_sample_ns": 0}
    p.update(params or {})
    env = simpy.Environment()
    be = PacketBackend(graph, env=env, params=p, seed=seed, cc=cc, cc_params=cc_params,
                       sinks=TraceSinks(fct=ListSink(), pfc=ListSink(("time_ns", "node", "port", "priority",
                                                                       "event"))), keep_flows=True)
    res = Result(be, be.all_flows, {}, 0.0)
    events = []

    def starter(env):
        for f in sorted(flows, key=lambda f: f[3]):
            at = int(f[3]) * 1000
            if at > env.now:
                yield env.timeout(at - env.now)
            events.append(be.send(f[0], f[1], int(f[2]), FlowTag(), cc=(f[4] if len(f) > 4 else None)))

    env.process(starter(env))
    port = be.net.ports.get(watch) if watch else None
    if probe_ns > 0:
        def probe(env):
            step = int(probe_ns) * 1000
            while True:
                now = env.now
                res.t_ns.append(now // 1000)
                for fid, fl in res.flows.items():
                    if fid not in res.delivered:
                        n = len(res.t_ns) - 1
                        for d in (res.delivered, res.acked, res.cwnd, res.rate):
                            d[fid] = [0] * n
                    fl.cc.advance(now // 1000)
                    res.delivered[fid].append(fl.rcv_nxt)
                    res.acked[fid].append(fl.snd_una)
                    res.cwnd[fid].append(fl.cc.cwnd_bytes)
                    res.rate[fid].append(fl.cc.rate_bps)
                res.queue.append(port.qtotal if port is not None else 0)
                if until_ns is None and len(events) == len(flows) and all(e.triggered for e in events):
                    return
                yield env.timeout(step)
        env.process(probe(env))
    t0 = time.perf_counter()
    env.run(until=None if until_ns is None else int(until_ns) * 1000)
    res.wall_s = time.perf_counter() - t0
    be.close()
    res.stats = be.stats()
    return res


def jain(xs) -> float:
    """Jain's fairness index ``(Σx)² / (n·Σx²)``.

    >>> jain([1, 1, 1, 1]), round(jain([1, 0]), 3)
    (1.0, 0.5)
    """
    xs = list(xs)
    s2 = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * s2) if s2 > 0 else 0.0


# -- benchmarks -------------------------------------------------------------------------------------
INCAST_N = 16
INCAST_SIZE = 4_000_000


def incast_params(cc: str) -> tuple[dict, dict]:
    """Network/CC parameters of the 16-to-1 incast under ``cc`` (DCQCN/none: PFC on; TCP: lossy)."""
    from ..transport.cc import REGISTRY
    params = {"buffer_bytes": 2_000_000}
    if REGISTRY[cc].transport == "tcp":
        params["pfc"] = False
    if cc == "dctcp":
        from ..transport.cc.config import ecn_overrides
        params.update(ecn_overrides("dctcp", {}, 100e9))
    return params, {}


def run_incast(cc: str, n: int = INCAST_N, size: int = INCAST_SIZE, probe_ns: int = 0) -> Result:
    params, ccp = incast_params(cc)
    flows = [(f"s{i}", "r0", size, 0) for i in range(n)]
    return simulate(incast_graph(n), flows, cc=cc, params=params, cc_params=ccp, probe_ns=probe_ns,
                    watch=("sw0", "r0"))


def _incast_bench(cc: str):
    def fn() -> dict:
        ceiling = simpy_ceiling()
        r = run_incast(cc)
        s = r.stats
        hops = s["packet_hops"]
        done = [rec for rec in r.records]
        return {"wall_s": round(r.wall_s, 3), "packet_hops": hops,
                "hops_per_s": round(hops / r.wall_s), "ratio_to_simpy": round(hops / r.wall_s / ceiling, 3),
                "simpy_events_per_s": round(ceiling), "sim_time_us": round(s["sim_time_ns"] / 1e3, 1),
                "completed": f"{len(done)}/{INCAST_N}", "drops": s["drops"],
                "retransmitted_bytes": s["retransmitted_bytes"], "pfc_pauses": s["pfc_pauses"],
                "cnps": s["cnps"], "ecn_marks": s["ecn_marks"],
                "fct_max_us": round(max(rec.fct_ns for rec in done) / 1e3, 1) if done else None}
    fn.__name__ = f"incast16_{cc}"
    lossy = cc in ("cubic", "dctcp", "swift")  # the tcp-transport algorithms (incast_params)
    fn.__doc__ = (f"16-to-1 incast of 16 x 4 MB at 100 Gbps under --cc {cc} "
                  f"({'lossy, PFC off' if lossy else 'PFC on'}), 2 MB switch buffer.")
    return fn


for _cc in ("none", "cubic", "dcqcn", "dctcp", "hpcc", "swift", "timely"):
    benchmark(f"incast16_{_cc}")(_incast_bench(_cc))


def run_cubic_dumbbell(n: int = 4, size: int = 100_000_000) -> Result:
    """The ns-3.37 Cubic dumbbell (see module docstring)."""
    mss, hdr = 1448, 52  # 1448-byte segments, TCP/IPv4 headers with timestamps as in ns-3
    g = dumbbell_graph(n, host_rate_bps=10e9, host_delay_ns=2000, bott_rate_bps=10e9, bott_delay_ns=5000)
    params = {"pfc": False, "ecn": False, "mtu_bytes": mss + hdr, "header_bytes": hdr,
              "buffer_mode": "static", "buffer_bytes": (n + 1) * 100 * (mss + hdr)}  # 100 packets per port
    flows = [(f"s{i}", "r0", size, 0) for i in range(n)]
    return simulate(g, flows, cc="cubic", params=params)


@benchmark("cubic_dumbbell")
def cubic_dumbbell() -> dict:
    """4 Cubic x 100 MB, 10G/2us access, 10G/5us bottleneck, 100-packet FIFO (ns-3.37: 55 k pkts/wall s)."""
    ceiling = simpy_ceiling()
    r = run_cubic_dumbbell()
    s = r.stats
    bott = r.backend.net.ports[("sw0", "sw1")]
    sim_s = s["sim_time_ns"] / 1e9
    return {"wall_s": round(r.wall_s, 3), "sim_time_s": round(sim_s, 4),
            "bottleneck_packets": bott.tx_packets,
            "bottleneck_pkts_per_wall_s": round(bott.tx_packets / r.wall_s),
            "ns3_pkts_per_wall_s": 55_000,
            "ratio_to_ns3": round(bott.tx_packets / r.wall_s / 55_000, 2),
            "goodput_gbps": round(s["bytes_delivered"] * 8 / sim_s / 1e9, 3), "drops": s["drops"],
            "retransmitted_bytes": s["retransmitted_bytes"], "timeouts": s["timeouts"],
            "packet_hops": s["packet_hops"], "hops_per_s": round(s["packet_hops"] / r.wall_s),
            "ratio_to_simpy": round(s["packet_hops"] / r.wall_s / ceiling, 3)}


#: algorithms compared by ``cc_cost``
COST_ALGOS = ("none", "dcqcn", "hpcc", "swift", "timely")


def _cpu_ns_per_hop(cc: str, n: int, size: int) -> float:
    """Process CPU ns per packet-hop of one ``n``-to-1 incast of ``size`` bytes under ``--cc cc``."""
    params, ccp = incast_params(cc)
    flows = [(f"s{i}", "r0", size, 0) for i in range(n)]
    t0 = time.process_time()
    r = simulate(incast_graph(n), flows, cc=cc, params=params, cc_params=ccp, watch=("sw0", "r0"))
    return (time.process_time() - t0) / r.stats["packet_hops"] * 1e9


@benchmark("cc_cost")
def cc_cost(repeats: int = 7, n: int = 16, size: int = 1_000_000) -> dict:
    """CPU time per packet-hop of each algorithm on a 16-to-1 incast of 1 MB, relative to ``--cc none``.

    Made to hold on a busy machine: process CPU time (not wall time), one warm-up run of every
    algorithm, then ``repeats`` rounds in which every algorithm runs right after a ``none`` run of
    its own (the pair shares the machine's load of that moment); an algorithm's ratio is the median
    of its ``repeats`` paired ratios, its ns per hop the median of its runs.
    """
    for cc in COST_ALGOS:
        _cpu_ns_per_hop(cc, n, size)         # imports, lazily built code, caches
    runs = {cc: [] for cc in COST_ALGOS}
    ratios = {cc: [] for cc in COST_ALGOS if cc != "none"}
    for _ in range(repeats):
        for cc in ratios:
            base = _cpu_ns_per_hop("none", n, size)
            x = _cpu_ns_per_hop(cc, n, size)
            runs["none"].append(base)
            runs[cc].append(x)
            ratios[cc].append(x / base)
    out = {f"{cc}_ns_per_hop": round(statistics.median(v), 1) for cc, v in runs.items()}
    out.update({f"{cc}_vs_none": round(statistics.median(v), 3) for cc, v in ratios.items()})
    return out
