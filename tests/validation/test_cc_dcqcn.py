"""DCQCN on the packet backend: line rate alone, convergence of two flows, 16-to-1 incast.

Oracles: a lone DCQCN flow never sees a mark, so it must run at line rate
(payload share MSS/MTU of it) with an empty queue; two flows sharing a port
must converge to half each (DCQCN paper §5, CoNEXT'16 fixed point); under a
16-to-1 incast with PFC the network is lossless (no drop at all) and, once
DCQCN has cut the rates, PFC stops pausing; TCP Cubic on lossy Ethernet
loses packets but still completes every flow (reliability).

ECN settings come from :func:`netsim.transport.cc.ecn_overrides` (the CP side
of the preset, marking at dequeue). PFC XOFF is raised above Kmax in the
two-flow test, as RoCE deployments configure it, so that ECN (not PFC) does
the rate control being tested.
"""
import csv
import json
import os

import numpy as np
import pytest

from netsim.bench.cc import incast_graph, simulate
from netsim.cli.compare import compare_runs
from netsim.flowfile import FlowSpec
from netsim.simulate import run_flows
from netsim.topology import validate
from netsim.transport.cc import ecn_overrides

MTU, HDR = 1500, 62
MSS = MTU - HDR


def test_single_flow_runs_at_line_rate_with_empty_queue():
    rate = 100e9
    size = 20_000_000
    res = simulate(incast_graph(1, rate_bps=rate), [("s0", "r0", size, 0)], cc="dcqcn",
                   params=ecn_overrides("dcqcn", {}, rate), probe_ns=1_000, watch=("sw0", "r0"))
    rec = res.records[0]
    goodput = size * 8 / (rec.fct_ns * 1e-9)
    assert goodput >= 0.95 * rate * MSS / MTU
    assert goodput / rate >= 0.95 * MSS / MTU
    assert max(res.queue) <= 2 * MTU               # never more than the packet in service and one behind
    assert res.stats["cnps"] == 0 and res.stats["ecn_marks"] == 0
    assert res.flows[0].cc.rate_bps == rate


def two_flows(preset, until_ms, rate=40e9):
    ccp = {"preset": preset}
    params = {"buffer_bytes": 32_000_000}
    ecn = ecn_overrides("dcqcn", ccp, rate)
    params.update(ecn)
    params["pfc_xoff_bytes"] = max(500_000, 2 * ecn["ecn_kmax_bytes"])   # ECN acts before PFC
    flows = [("s0", "r0", 10**13, 0), ("s1", "r0", 10**13, 5_000_000)]
    res = simulate(incast_graph(2, rate_bps=rate), flows, cc="dcqcn", params=params,
                   cc_params={"dcqcn": ccp}, until_ns=until_ms * 1_000_000, probe_ns=100_000,
                   watch=("sw0", "r0"))
    t = np.asarray(res.t_ns) / 1e6
    fair = rate * MSS / MTU / 2
    windows = []
    for w0 in range(25, until_ms - 9, 10):       # from 20 ms after the second start
        idx = np.where((t >= w0) & (t <= w0 + 10))[0]
        i0, i1 = idx[0], idx[-1]
        dt = (t[i1] - t[i0]) / 1e3
        windows.append([(res.delivered[f][i1] - res.delivered[f][i0]) * 8 / dt / fair for f in (0, 1)])
    q = np.asarray(res.queue)[t >= 25]
    in_band = float(np.mean((q >= ecn["ecn_kmin_bytes"]) & (q <= ecn["ecn_kmax_bytes"])))
    print(f"dcqcn {preset}: windows/fair = {np.round(windows, 3).tolist()}, "
          f"queue in [Kmin,Kmax] {in_band:.2f} of the time, cnps {res.stats['cnps']}, "
          f"pfc pauses {res.stats['pfc_pauses']}")
    return windows, in_band, res


#: DCQCN's 10 ms windows of two flows sit within this of the fair share: measured with the per-port marking
#: streams (netsim.backends.packet.streams) over random_seed 0..3 of this scene, worst 1.17 / 0.83 (seed 0),
#: best 1.00 / 0.99 (seed 1) -- the residual unfairness of one draw sequence, not a systematic bias
FAIR_SHARE_SPREAD = 0.20


def test_two_flows_converge_to_fair_share_paper():
    windows, in_band, res = two_flows("paper", 45)
    for w in windows:
        assert w == pytest.approx([1.0, 1.0], abs=FAIR_SHARE_SPREAD), windows
        assert sum(w) == pytest.approx(2.0, abs=0.02), windows     # together they fill the bottleneck
    assert res.stats["drops"] == 0 and res.stats["cnps"] > 0
    assert in_band > 0.5          # the paper's CP keeps the queue in its marking band


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["paper", "hpcc", "nvidia"])
def test_two_flows_converge_to_fair_share_long(preset):
    """Over 65 ms every 10 ms window is within the draw spread of the fair share and the last within
    10 % (seed 0, `paper`: 1.17 / 0.83 at 25 ms, 1.08 / 0.92 at 55 ms — converging)."""
    windows, in_band, res = two_flows(preset, 65)
    for w in windows:
        assert w == pytest.approx([1.0, 1.0], abs=FAIR_SHARE_SPREAD), windows
    assert windows[-1] == pytest.approx([1.0, 1.0], abs=0.10), windows
    assert res.stats["drops"] == 0


def incast_run(tmp_path, cc, n=16, size=4_000_000):
    g = validate(incast_graph(n))
    params = {"buffer_bytes": 2_000_000}
    if cc == "dcqcn":                             # the paper's law and thresholds: PFC acts, then settles
        params.update(ecn_overrides("dcqcn", {"preset": "paper"}, 100e9))
    else:
        params["pfc"] = False                     # lossy Ethernet for TCP
    out = os.path.join(tmp_path, f"incast_{cc}")
    flows = [FlowSpec(f"s{i}", "r0", size, 0) for i in range(n)]
    ccp = {"dcqcn": {"preset": "paper"}} if cc == "dcqcn" else None
    summary = run_flows(g, flows, cc=cc, params=params, cc_params=ccp, out_dir=out)
    with open(os.path.join(out, "pfc.csv")) as fh:
        pauses = [int(r["time_ns"]) for r in csv.DictReader(fh) if r["event"] == "pause"]
    with open(os.path.join(out, "fct.csv")) as fh:
        fct = list(csv.DictReader(fh))
    return summary, pauses, fct, out


def test_incast_dcqcn_lossless_and_converged_vs_cubic_lossy(tmp_path):
    s_d, pauses_d, fct_d, out_d = incast_run(tmp_path, "dcqcn")
    s_c, pauses_c, fct_c, out_c = incast_run(tmp_path, "cubic")
    # DCQCN + PFC: no drop at all, every flow done, no PAUSE in the second half
    assert s_d["drops"] == 0 and len(fct_d) == 16
    half = s_d["sim_time_ns"] / 2
    assert pauses_d and all(t < half for t in pauses_d), (max(pauses_d), half)
    # Cubic on lossy Ethernet: drops and retransmissions, yet all 16 complete
    assert s_c["drops"] > 0 and s_c["retransmitted_bytes"] > 0 and s_c["pfc_pauses"] == 0
    assert len(fct_c) == 16 and all(int(r["size_bytes"]) == 4_000_000 for r in fct_c)
    # the comparison table shows the difference
    table = compare_runs([out_d, out_c])
    d, c = table.columns
    assert table.loc["drops", d] == 0 and table.loc["drops", c] > 0
    assert table.loc["retransmitted bytes", d] == 0 and table.loc["retransmitted bytes", c] > 0
    assert table.loc["PFC pauses", d] > 0 and table.loc["PFC pauses", c] == 0
    assert table.loc["CNPs", d] > 0 and table.loc["CNPs", c] == 0
    assert table.loc["FCT >=10MB n", d] == 0 and table.loc["FCT 100KB-10MB n", d] == 16
    with open(os.path.join(out_d, "summary.json")) as fh:
        assert json.load(fh)["cc"] == "dcqcn"
