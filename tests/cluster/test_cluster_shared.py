"""Jobs on one network: no shared link → alone times; one shared bottleneck → the max-min share."""
import pytest

from netsim.cluster import run_cluster
from netsim.runtime import run_training

from cluster_helpers import RATE_BPS, dp_workload, two_leaves

BACKENDS = ("flow", "packet", "analytic")


def _params(backend):
    return {"flow_fairness": "maxmin"} if backend == "flow" else None


@pytest.mark.parametrize("backend", BACKENDS)
def test_jobs_sharing_no_link_run_as_if_alone(backend):
    """Job a on leaf 0, job b on leaf 1: no directed link carries both, so each takes its time alone
    (within 0.5 %) — and that alone time is netsim run's own time for the job on those GPUs."""
    wl = dp_workload()
    cl = {"jobs": [{"name": "a", "workload": wl, "placement": ["s0.gpu0", "s1.gpu0"], "iterations": 2},
                   {"name": "b", "workload": wl, "placement": ["s2.gpu0", "s3.gpu0"], "iterations": 2}]}
    s = run_cluster(two_leaves(), cl, backend=backend, params=_params(backend))
    assert s["shared_links"] == {}
    for name, gpus in (("a", ["s0.gpu0", "s1.gpu0"]), ("b", ["s2.gpu0", "s3.gpu0"])):
        j = s["jobs"][name]
        alone = run_training(two_leaves(), {**wl, "placement": {"gpus": gpus}}, backend=backend,
                             params=_params(backend), iterations=2)
        assert j["iteration_time_s"] == pytest.approx(alone["iteration_time_s"], rel=5e-3)
        assert j["slowdown"] == pytest.approx(1.0, rel=5e-3)
        assert j["flows"] > 0


def _dp_bytes(ex) -> int:
    return sum(op.size_bytes for op in ex.iteration_ops[0] if op.is_comm and op.kind == "dp")


def _two_rings(backend):
    """Jobs a (s0, s2) and b (s1, s3): each 2-rank ring crosses the one leaf0-leaf1 link, both ways."""
    wl = dp_workload()
    cl = {"jobs": [{"name": "a", "workload": wl, "placement": ["s0.gpu0", "s2.gpu0"]},
                   {"name": "b", "workload": wl, "placement": ["s1.gpu0", "s3.gpu0"]}]}
    return run_cluster(two_leaves(), cl, backend=backend, params=_params(backend), alone=False)


def test_two_rings_on_one_bottleneck_get_the_max_min_share():
    """Flow backend: during the all-reduce each direction of leaf0-leaf1 carries one flow of each job and
    every access link one, so max-min gives each flow C/2. A 2-rank ring all-reduce of S bytes sends
    2(n-1)/n · S = S bytes per rank; on the wire that is S · mtu / (mtu - header) (62 B RoCEv2 headers
    on 1500 B packets). Exposed DP time = S · 8 · 1500/1438 / (C/2) (compute is ~0), within 2 %."""
    s = _two_rings("flow")
    assert s["shared_links"] == {"a|b": 2}           # leaf0->leaf1 and leaf1->leaf0
    for name in ("a", "b"):
        S = _dp_bytes(s["_executors"][name])
        predicted_s = S * 8 * 1500 / 1438 / (RATE_BPS / 2)
        assert s["jobs"][name]["breakdown_s"]["dp"] == pytest.approx(predicted_s, rel=0.02)


def test_two_rings_packet_agrees_with_flow():
    flow, packet = _two_rings("flow"), _two_rings("packet")
    for name in ("a", "b"):
        assert packet["jobs"][name]["breakdown_s"]["dp"] == pytest.approx(flow["jobs"][name]["breakdown_s"]["dp"],
                                                                          rel=0.10)


def test_interference_table_counts_each_jobs_bytes_on_the_shared_link(tmp_path):
    """interference.csv: on leaf0->leaf1, each job sent exactly its DP bytes crossing that way (S per rank)."""
    import csv
    wl = dp_workload()
    cl = {"jobs": [{"name": "a", "workload": wl, "placement": ["s0.gpu0", "s2.gpu0"]},
                   {"name": "b", "workload": wl, "placement": ["s1.gpu0", "s3.gpu0"]}]}
    s = run_cluster(two_leaves(), cl, backend="flow", out_dir=str(tmp_path), alone=False)
    rows = list(csv.DictReader(open(tmp_path / "interference.csv")))
    assert [(r["link_src"], r["link_dst"]) for r in rows] == [("leaf0", "leaf1"), ("leaf1", "leaf0")]
    for r in rows:
        assert (r["job_a"], r["job_b"]) == ("a", "b")
        assert int(r["bytes_a"]) == _dp_bytes(s["_executors"]["a"])
        assert int(r["bytes_b"]) == _dp_bytes(s["_executors"]["b"])


def test_a_job_started_after_the_other_ends_is_not_slowed():
    """The two rings of the bottleneck case, b started once a has finished: neither is slowed (flow)."""
    wl = dp_workload()
    alone = _two_rings("flow")["jobs"]["a"]["end_ns"]        # a's end when the two overlap: an upper bound
    cl = {"jobs": [{"name": "a", "workload": wl, "placement": ["s0.gpu0", "s2.gpu0"]},
                   {"name": "b", "workload": wl, "placement": ["s1.gpu0", "s3.gpu0"], "start_ns": alone}]}
    s = run_cluster(two_leaves(), cl, backend="flow", params=_params("flow"))
    assert s["jobs"]["b"]["start_ns"] >= s["jobs"]["a"]["end_ns"]
    for name in ("a", "b"):
        assert s["jobs"][name]["slowdown"] == pytest.approx(1.0, rel=1e-6)
    assert s["shared_links"] == {"a|b": 2}                    # same links, different times


def test_analytic_says_it_shares_only_pacing_links(capsys):
    """Two rings on one bottleneck: flow gives each job slowdown ~2 (max-min halves the link); the
    analytic backend shares only each flow's pacing link, so its summary says `contention: pacing
    link only` and stderr carries one warning line; flow's summary has no such key."""
    s = _two_rings("analytic")
    assert s["contention"] == "pacing link only"
    err = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(err) == 1 and "analytic backend shares only each flow's pacing link" in err[0]
    assert "contention" not in _two_rings("flow")
