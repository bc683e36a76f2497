"""The flow backend agrees with the packet backend on the work both can do (issue 6).

Criteria (issue 6):
* lossless (``none``, and DCQCN with PFC): per-flow FCT of flows >= 1 MB,
  median |flow - packet| / packet <= 10 %, 95th percentile <= 25 %;
* lossy Cubic (PFC off, small buffer, drops happen): mean FCT and last
  completion within 15 %;
* a collective / training iteration: completion time within 5 %;
* the ordering of congestion-control algorithms by p99 FCT on a 16-to-1
  incast is the same on both backends (pairs whose packet-level p99 differ by
  less than 5 % count as ties and are not ordered).

The flow backend's CC model was calibrated on a dumbbell (calibrate.py), not
on these scenarios. Default-run versions are small; bigger ones are slow.
DCQCN runs use the default preset (hpcc) unless their id says ``dcqcn:paper``:
the tests written against the SIGCOMM'15 law name it (``PAPER``).
"""
import os

import pytest
import simpy

from netsim.backends.base import BACKENDS, TraceSinks, create_backend
from flow_scenarios import (compare_fct, dumbbell_long, incast, load_graph, p99_fct_ns,
                                            permutation, run_flows_on)
from netsim.records import ListSink

try:
    create_backend("packet", load_graph("dumbbell"))
    HAVE_PACKET = "packet" in BACKENDS
except Exception:  # noqa: BLE001 - the packet backend is another helper's work in progress
    HAVE_PACKET = False

pytestmark = pytest.mark.skipif(not HAVE_PACKET, reason="packet backend not available")

#: --cc-param preset=paper: the SIGCOMM'15 law, named by every test written against it
PAPER = {"dcqcn": {"preset": "paper"}}


def _cc(label):
    """``"dcqcn:paper"`` -> (``"dcqcn"``, :data:`PAPER`); a plain name -> (name, None)."""
    name, _, preset = label.partition(":")
    return name, ({name: {"preset": preset}} if preset else None)


def _perm(seeds):
    return lambda: [permutation(4, 2, 4, 2_000_000, seed=k) for k in seeds]


#: measured 2026-11-29 with the paper preset (then the default) (dcqcnfluid.py with fluid FIFO queues
#: and per-ingress PFC, fifo.py; 2 us tick), median / p95 of per-flow |flow - packet| / packet: dumbbell4 2.1 % / 5.7 %, incast16 0.9 % / 7.8 %,
#: permutation16x4 1.4 % / 38.5 %. The permutation's misses are flows that take one more halving at the
#: end of a cut phase, where the queue sits between Kmin and Kmax and a mark is a coin flip: the packet
#: backend itself, with only its random draws reseeded (random_seed), moves per-flow FCTs by p95 43 %
#: there (test_packet_dcqcn_reseed_spread). Against the per-flow median of 5 reseeded packet runs the
#: permutation is at 0.8 % / 21.6 % (test_dcqcn_permutation_vs_typical_packet_run).
DCQCN_RANDOM_XFAIL = pytest.mark.xfail(
    reason="DCQCN permutation vs one packet realization: p95 38.5 % (median 1.4 %); the reference's own "
           "reseed spread is 43 % p95 (docs/flow-backend.md)", strict=True)

LOSSLESS = [
    pytest.param("none", lambda: [dumbbell_long(4, 2_000_000)], id="none-dumbbell4"),
    pytest.param("none", lambda: [incast(16, 1_000_000)], id="none-incast16"),
    # a permutation's ECMP collisions depend on its seed: pool the flows of 4 fixed seeds
    pytest.param("none", _perm(range(1, 5)), id="none-permutation16x4"),
    pytest.param("dcqcn", lambda: [incast(16, 1_000_000)], id="dcqcn-incast16"),
    pytest.param("dcqcn", _perm(range(1, 5)), id="dcqcn-permutation16x4"),
    pytest.param("dcqcn:paper", _perm(range(1, 5)), id="dcqcn:paper-permutation16x4", marks=DCQCN_RANDOM_XFAIL),
]


def both(sc, cc, params=None):
    g = load_graph(sc.topology)
    cc, ccp = _cc(cc)
    f, fs, _ = run_flows_on("flow", g, sc.flows, cc=cc, params=params, cc_params=ccp)
    p, ps, _ = run_flows_on("packet", g, sc.flows, cc=cc, params=params, cc_params=ccp)
    assert all(r is not None for r in p), "packet backend left flows unfinished"
    return f, p, fs, ps


def _pooled(scenarios, cc, params=None):
    F, P, drops = [], [], 0
    for sc in scenarios:
        f, p, fs, ps = both(sc, cc, params)
        F += f
        P += p
        drops += ps.get("drops", 0)
    return F, P, drops


@pytest.mark.parametrize("cc, make", LOSSLESS)
def test_lossless_per_flow_fct(cc, make):
    scenarios = make()
    f, p, drops = _pooled(scenarios, cc)
    assert drops == 0
    cmp = compare_fct(f, p)
    assert cmp["flows"] == sum(len(sc.flows) for sc in scenarios)
    assert cmp["median_rel_err"] <= 0.10, cmp
    assert cmp["p95_rel_err"] <= 0.25, cmp


def test_lossy_cubic_mean_and_last():
    """Cubic, PFC off, 1 MB switch buffer: the incast drops; mean FCT and last completion agree."""
    sc = incast(16, 1_000_000)
    params = {"pfc": "off", "buffer_bytes": "1MB"}
    f, p, fs, ps = both(sc, "cubic", params)
    assert ps["drops"] > 0          # the scenario is really lossy
    cmp = compare_fct(f, p)
    assert cmp["mean_fct_rel_err"] <= 0.15, cmp
    assert cmp["last_completion_rel_err"] <= 0.15, cmp


def test_cc_ordering_on_incast():
    sc = incast(16, 1_000_000)
    g = load_graph(sc.topology)
    p99 = {}
    for cc in ("none", "dcqcn", "cubic"):
        f, _, _ = run_flows_on("flow", g, sc.flows, cc=cc)
        p, _, _ = run_flows_on("packet", g, sc.flows, cc=cc)
        p99[cc] = (p99_fct_ns(f), p99_fct_ns(p))
    names = list(p99)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pa, pb = p99[a][1], p99[b][1]
            if abs(pa - pb) / min(pa, pb) < 0.05:
                continue  # a tie at packet level: no ordering to reproduce
            assert (p99[a][0] < p99[b][0]) == (pa < pb), p99


def _collective_on(backend, graph, nodes, size, cc="none"):
    from netsim.collectives.api import run_collective
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend(backend, graph, env=env, cc=cc, sinks=TraceSinks(fct=sink))
    proc = run_collective(b, "allreduce", nodes, size, algorithm="ring")
    env.run()
    res = proc.value
    return (res.end_ps - res.start_ps) / 1000, sorted(sink.rows, key=lambda r: (r.step, r.src))


def test_ring_allreduce_across_servers():
    from netsim.topology import gpus
    g = load_graph("gpu_cluster:servers=4,gpus_per_server=2")
    gs = gpus(g)
    nodes = gs[::2]  # one GPU per server: every step crosses the fabric
    size = 8_000_000
    tf, rf = _collective_on("flow", g, nodes, size)
    tp, rp = _collective_on("packet", g, nodes, size)
    assert abs(tf - tp) / tp <= 0.05, (tf, tp)
    assert len(rf) == len(rp)
    cmp = compare_fct(rf, rp)
    assert cmp["median_rel_err"] <= 0.10, cmp
    assert cmp["p95_rel_err"] <= 0.25, cmp


@pytest.mark.slow  # long validation run (> 7 s); run with -m slow
def test_dcqcn_incast_long_flows():
    """16-to-1 incast of 8 MB flows under DCQCN (paper preset) with PFC: the cut phase, the drain of
    the PFC-held backlog and the AI/HAI recovery decide every flow's FCT; per-flow criteria hold."""
    f, p, drops = _pooled([incast(16, 8_000_000)], "dcqcn")
    assert drops == 0
    cmp = compare_fct(f, p)
    assert cmp["flows"] == 16
    assert cmp["median_rel_err"] <= 0.10, cmp
    assert cmp["p95_rel_err"] <= 0.25, cmp
    assert cmp["mean_fct_rel_err"] <= 0.05, cmp


def _reseed_spread(scenarios, cc, seeds=(1, 2, 3, 4)):
    """Per-flow |a - b| / b over every pair of packet runs that differ only in ``random_seed``."""
    errs = []
    for sc in scenarios:
        g = load_graph(sc.topology)
        runs = [run_flows_on("packet", g, sc.flows, cc=_cc(cc)[0], params={"random_seed": k},
                             cc_params=_cc(cc)[1])[0] for k in seeds]
        for i in range(len(sc.flows)):
            x = [r[i].fct_ns for r in runs]
            errs += [abs(x[a] - x[b]) / x[b] for a in range(len(x)) for b in range(len(x)) if a != b]
    errs.sort()
    return errs[int(round(0.95 * (len(errs) - 1)))]


def test_packet_dcqcn_reseed_spread():
    """Why the DCQCN permutation xfail is not a fluid-model bug: with paths fixed and only the packet
    backend's random draws (RED marks) reseeded, its own per-flow FCTs move by more than the 25 % p95
    the criterion allows, while without ECN they do not move at all. No deterministic model can be
    within 25 % of every such run."""
    db = [dumbbell_long(4, 2_000_000)]
    perm = [permutation(4, 2, 4, 2_000_000, seed=k) for k in (1, 2)]
    assert _reseed_spread(db, "none", seeds=(1, 2)) == 0.0
    assert _reseed_spread(perm, "dcqcn:paper") > 0.25


def _vs_typical_packet(scenarios, cc, reseeds=5):
    """Per-flow error of the flow backend against the per-flow median FCT of ``reseeds`` packet runs."""
    import statistics
    errs = []
    for sc in scenarios:
        g = load_graph(sc.topology)
        f, _, _ = run_flows_on("flow", g, sc.flows, cc=cc)
        runs = [run_flows_on("packet", g, sc.flows, cc=cc, params={"random_seed": k})[0]
                for k in range(1, reseeds + 1)]
        for i, rec in enumerate(f):
            typical = statistics.median(r[i].fct_ns for r in runs)
            errs.append(abs(rec.fct_ns - typical) / typical)
    errs.sort()
    return statistics.median(errs), errs[int(round(0.95 * (len(errs) - 1)))]


def test_dcqcn_dumbbell_vs_typical_packet_run():
    """DCQCN's 4-flow dumbbell is a coin flip too: with one marking stream per port (streams.py) one
    packet realization has a flow 31 % fast (random_seed 0; seeds 0..4: p95 31, 6, 21, 4, 27 %). Against
    the per-flow median of 5 reseeded packet runs the fluid model is at 1.5 % / 10.2 %."""
    med, p95 = _vs_typical_packet([dumbbell_long(4, 2_000_000)], "dcqcn")
    assert med <= 0.10 and p95 <= 0.25, (med, p95)


@pytest.mark.slow  # long validation run (> 7 s); run with -m slow
def test_dcqcn_permutation_vs_typical_packet_run():
    """The fluid NP fires at the median first-mark time (ln 2 expected marks), so it models the
    typical packet run: against the per-flow median of 5 reseeded packet runs the criteria hold."""
    med, p95 = _vs_typical_packet([permutation(4, 2, 4, 2_000_000, seed=k) for k in range(1, 5)], "dcqcn")
    assert med <= 0.10, (med, p95)
    assert p95 <= 0.25, (med, p95)


@pytest.mark.slow
@pytest.mark.parametrize("cc", ["none", "dcqcn"])
def test_lossless_bigger(cc):
    """8 x 8 MB dumbbell, 32-to-1 incast, permutations of 8 seeds. DCQCN's permutation is compared
    with the typical packet run (per-flow median of 5 reseeds), as in the default-run test."""
    perms = [permutation(4, 2, 4, 2_000_000, seed=k) for k in range(1, 9)]
    for scs in ([dumbbell_long(8, 8_000_000)], [incast(32, 2_000_000)], perms):
        if cc == "dcqcn" and scs is perms:
            med, p95 = _vs_typical_packet(scs, cc)
            assert med <= 0.10 and p95 <= 0.25, (med, p95)
            continue
        f, p, _ = _pooled(scs, cc)
        cmp = compare_fct(f, p)
        assert cmp["median_rel_err"] <= 0.10, (scs[0].name, cmp)
        assert cmp["p95_rel_err"] <= 0.25, (scs[0].name, cmp)


WORKLOADS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workloads")


def _iteration(backend, topo, workload):
    from netsim.runtime import run_training
    return run_training(topo, os.path.join(WORKLOADS, workload), backend=backend,
                        progress=False)["iteration_time_s"]


def test_small_gpt_step_dp_tp_pp():
    """gpt-1.5b reduced, t=2 p=2 d=2 on two 4-GPU servers: iteration time within 5 %."""
    topo, wl = "gpu_cluster:servers=2,gpus_per_server=4", "gpt-1.5b-t2p2d2-small.yaml"
    tf = _iteration("flow", topo, wl)
    tp = _iteration("packet", topo, wl)
    assert abs(tf - tp) / tp <= 0.05, (tf, tp)


@pytest.mark.slow
def test_gpt3b_small_32gpu_step():
    topo, wl = "gpu_cluster:servers=4,gpus_per_server=8", "gpt-3b-t2p2d8-small.yaml"
    tf = _iteration("flow", topo, wl)
    tp = _iteration("packet", topo, wl)
    assert abs(tf - tp) / tp <= 0.05, (tf, tp)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_dcqcn_cut_phase_matches_packet(n):
    """The fluid DCQCN law (no fitted parameter) gives each flow as many CNPs as the packet
    backend's marks do when N flows start together on a dumbbell (length of the cut phase).
    Paper preset: its NP sends at most one CNP per 50 us, which the fluid NP models; the default's
    NP (one CNP per marked packet) is not counted alike."""
    flows = [(f"left{i}", f"right{i}", 4_000_000, 0) for i in range(n)]
    g = load_graph(f"dumbbell:n_left={n},n_right={n}")
    f, fs, _ = run_flows_on("flow", g, flows, cc="dcqcn", cc_params=PAPER)
    p, ps, _ = run_flows_on("packet", g, flows, cc="dcqcn", cc_params=PAPER)
    per_flow_packet = sum(r.cnps_received for r in p) / n
    assert abs(fs["dcqcn_cnps"] / n - per_flow_packet) <= 0.15 * per_flow_packet, (fs["dcqcn_cnps"], per_flow_packet)


@pytest.mark.parametrize("topo", ["gpu_cluster:servers=4,gpus_per_server=2", "gpu_cluster:servers=4,gpus_per_server=8"])
def test_dcqcn_gpu_incast_through_nvlink_pcie_nic(topo):
    """GPUs of other servers send 2 MB each to one GPU: the fabric path starts behind PCIe and the
    NIC, so the RP's line rate is the NIC's (400 Gb/s), not the GPU's first hop, in both backends.
    Paper preset: its 5 KB Kmin lets the NIC port congest into PFC, which the check needs."""
    from netsim.topology import gpus
    g = load_graph(topo)
    gs = gpus(g)
    flows = [(s, gs[0], 2_000_000, 0) for s in gs[1:13]]
    f, _, _ = run_flows_on("flow", g, flows, cc="dcqcn", cc_params=PAPER)
    p, ps, _ = run_flows_on("packet", g, flows, cc="dcqcn", cc_params=PAPER)
    assert ps["pfc_pauses"] > 0          # the NIC port towards the receiver really congests
    cmp = compare_fct(f, p)
    assert cmp["median_rel_err"] <= 0.10, cmp
    assert cmp["p95_rel_err"] <= 0.25, cmp
