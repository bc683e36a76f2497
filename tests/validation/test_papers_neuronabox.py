"""NeuronaBox (Liu et al. 2024, arXiv 2405.02969): what-if delay injection into every DP all-reduce of BERT.

Paper: up to about 2 ms of extra latency per all-reduce hardly changes BERT's iteration time (the
backward overlap hides it); larger delays show through once the overlap is used up (flat, then
linear). netsim: inject DELAY into every DP bucket all-reduce (``--inject-delay allreduce@dp=DELAY``)
of BERT-large DP on 8 GPUs (2 PCIe servers, 100 Gbps RoCE NICs) and tabulate the iteration time.
"""
import pytest

from netsim.topology import gpu_cluster

from papers_sim import report, simulate, workload_path

DELAYS_MS = (0, 0.1, 0.5, 1, 2, 5, 10, 15, 20)


@pytest.fixture(scope="module")
def table():
    g = gpu_cluster(2, 4, gpus_per_nic=4, nvswitch=False, nic_kinds="roce", nic_rates_bps="100Gbps",
                    pcie_rate_bps="256Gbps")
    rows = []
    for d in DELAYS_MS:
        r = simulate(g, workload_path("bert-large.yaml"), whatif={"inject_delay": [f"allreduce@dp={d}ms"]} if d else None)
        calls = sum(1 for op in r.ex.iteration_ops[0] if op.kind == "dp" and 0 in op.ranks)
        rows.append((d, calls, r.iteration_time_s * 1e3))
    base = rows[0][2]
    print("\ndelay_ms,allreduce_calls,iteration_ms,increase_ms,increase_per_injected")
    for d, n, t in rows:
        print(f"{d},{n},{t:.3f},{t - base:.3f},{(t - base) / (n * d) if d else 0:.3f}")
    return rows


def test_small_delays_hidden_large_ones_exposed(table):
    base = table[0][2]
    n = table[0][1]
    assert n > 5                                         # one all-reduce per DDP bucket
    small = [(d, t) for d, _, t in table if 0 < d <= 2]
    for d, t in small:
        assert t - base < 0.5 * n * d                    # less than the sum of injected delays
    # large delays: the DP stream is all delay; each extra ms per call adds ~ n ms
    (d1, _, t1), (d2, _, t2) = table[-2], table[-1]
    slope = (t2 - t1) / (d2 - d1)
    assert slope == pytest.approx(n, rel=0.1)
    small_slope = (small[-1][1] - base) / small[-1][0]
    assert small_slope < 0.25 * slope                     # flat, then linear
    report("NeuronaBox", "iteration time vs +2 ms per all-reduce", "hardly changes",
           f"+{small[-1][1] - base:.2f} ms on {base:.1f} ms ({n} calls x 2 ms injected)")
    report("NeuronaBox", "slope at large delay (ms per ms per call)", "linear once overlap is used up",
           f"{slope / n:.2f} of every injected ms exposed")
