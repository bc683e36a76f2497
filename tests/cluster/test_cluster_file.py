"""The cluster file: validation (one-line errors naming file, field, value), placement policies, the CLI."""
import json
import os

import pytest

from netsim.cli import main
from netsim.cluster import is_cluster_file, load_cluster, run_cluster
from netsim.cluster.jobs import build_jobs
from netsim.errors import InputError
from netsim.records import FCT_COLUMNS
from netsim.topology import load_topology

from cluster_helpers import dp_workload, two_leaves

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "workloads", "clusters", "two-jobs.yaml")
TOPO = "gpu_cluster:servers=8,gpus_per_server=2,servers_per_leaf=1,spines=1,oversubscription=2,nic_kinds=roce"   # docs/cluster.md's example


def _job(name="a", **kw):
    return {"name": name, "workload": dp_workload(), "placement": "packed", **kw}


@pytest.mark.parametrize("doc,match", [
    ({"jobs": []}, r"jobs: a cluster file needs a non-empty jobs list"),
    ({"jobs": [_job(), _job()]}, r"jobs\[1\]\.name: two jobs have the same name"),
    ({"jobs": [_job(name="background")]}, r"jobs\[0\]\.name"),
    ({"jobs": [_job(placement="clumped")]}, r"jobs\[0\]\.placement\.policy: unknown placement policy.*clumped.*packed"),
    ({"jobs": [_job(placement={"policy": "packed", "seed": 2})]}, r"only the random policy takes a seed"),
    ({"jobs": [_job(start="5 parsecs")]}, r"jobs\[0\]\.start"),
    ({"jobs": [_job(start="1us", start_ns=1000)]}, r"jobs\[0\]\.start_ns: give the start time once"),
    ({"jobs": [_job(iterations=0)]}, r"jobs\[0\]\.iterations: must be an integer"),
    ({"jobs": [_job(traffic_class=9)]}, r"jobs\[0\]\.traffic_class: traffic class must be an 802\.1p priority"),
    ({"jobs": [_job(colour="red")]}, r"jobs\[0\]\.colour: unknown field"),
    ({"jobs": [_job(workload="nowhere.yaml")]}, r"jobs\[0\]\.workload: no such workload file"),
    ({"jobs": [_job()], "background": {"cdf": "websearch", "load": 1.5, "duration": "1ms"}}, r"background\.load"),
    ({"jobs": [_job()], "background": {"cdf": "websearch", "load": 0.3}}, r"background\.duration"),
    ({"jobs": [_job()], "background": {"cdf": "websearch", "load": 0.3, "duration": "1ms", "hosts": "some"}},
     r"background\.hosts: unknown background host set"),
    ({"jobs": [_job()], "topology": "x"}, r"topology: unknown field"),
])
def test_bad_fields_are_one_line_errors(doc, match):
    with pytest.raises(InputError, match=match) as exc:
        load_cluster(doc)
    assert "\n" not in str(exc.value)


def test_two_jobs_on_one_gpu_is_an_error_naming_both_and_the_gpu():
    cl = load_cluster({"jobs": [_job("a", placement=["s0.gpu0", "s1.gpu0"]),
                                _job("b", placement=["s1.gpu0", "s2.gpu0"])]})
    with pytest.raises(InputError, match=r"jobs a and b both hold GPU s1\.gpu0"):
        build_jobs(cl, two_leaves())


def test_not_enough_gpus_is_an_error():
    cl = load_cluster({"jobs": [_job("a", workload=dp_workload(dp=4)), _job("b")]})
    with pytest.raises(InputError, match=r"job b, placement: not enough free GPUs"):
        build_jobs(cl, two_leaves())


def _gpus(graph, *jobs):
    return {j.name: list(j.placement.gpu_of) for j in build_jobs(load_cluster({"jobs": list(jobs)}), graph)}


def test_placement_policies_as_documented():
    g = load_topology("gpu_cluster:servers=4,gpus_per_server=4")
    wl2, wl4 = dp_workload(dp=2), dp_workload(dp=4)
    assert _gpus(g, _job("a", workload=wl2), _job("b", workload=wl4)) == {
        "a": ["s0.gpu0", "s0.gpu1"], "b": ["s0.gpu2", "s0.gpu3", "s1.gpu0", "s1.gpu1"]}
    assert _gpus(g, _job("a", workload=wl2), _job("b", workload=wl4, placement="spread")) == {
        "a": ["s0.gpu0", "s0.gpu1"], "b": ["s0.gpu2", "s1.gpu0", "s2.gpu0", "s3.gpu0"]}   # first free per server
    # rail_aligned: k = min(4, 4 per server) = 4 local indices on one whole free server: s0 is half taken
    assert _gpus(g, _job("a", workload=wl2), _job("b", workload=wl4, placement="rail_aligned"))["b"] == [
        "s1.gpu0", "s1.gpu1", "s1.gpu2", "s1.gpu3"]
    r1 = _gpus(g, _job("a", workload=wl4, placement={"policy": "random", "seed": 1}))["a"]
    assert r1 == _gpus(g, _job("a", workload=wl4, placement={"policy": "random", "seed": 1}))["a"]
    assert r1 != _gpus(g, _job("a", workload=wl4, placement={"policy": "random", "seed": 2}))["a"]
    from netsim.topology import gpus
    order = gpus(g)
    assert sorted(r1, key=order.index) == r1 and len(set(r1)) == 4


def test_rail_aligned_needs_a_multiple_of_its_rail_count():
    g = load_topology("gpu_cluster:servers=4,gpus_per_server=4")
    with pytest.raises(InputError, match=r"multiple of"):
        _gpus(g, _job("a", workload=dp_workload(dp=6), placement="rail_aligned"))


def test_detected_by_content():
    assert is_cluster_file(EXAMPLE)
    assert not is_cluster_file(os.path.join(ROOT, "workloads", "bert-large-small.yaml"))


def test_single_job_fct_columns_have_no_job_column():
    assert "job" not in FCT_COLUMNS


def test_cli_runs_the_example_and_outputs_are_byte_identical(tmp_path, capsys):
    """The shipped example through ``netsim run``: job columns, a jobs section, the cache on the second run,
    and the same files byte for byte."""
    outs = []
    for k in range(2):
        out = tmp_path / f"o{k}"
        assert main(["run", TOPO, EXAMPLE, "--backend", "flow", "--out", str(out), "--no-trace", "--quiet",
                     "--cache", str(tmp_path / "cache")]) == 0
        outs.append(out)
    s = json.load(open(outs[1] / "summary.json"))
    assert set(s["jobs"]) == {"a", "b"} and len(os.listdir(tmp_path / "cache")) == 2
    for j in s["jobs"].values():       # the output contract of netsim run, per job
        assert j["slowdown"] > 1.05     # the rings share saturated uplinks (the doc says so)
        assert sum(j["breakdown_s"].values()) == pytest.approx(j["iteration_time_s"], rel=1e-9)
        assert len(j["iteration_times_s"]) == j["iterations"] == 2
        assert j["end_ns"] * 1e-9 == pytest.approx(j["start_ns"] * 1e-9 + sum(j["iteration_times_s"]), abs=1e-9)
    assert s["background"]["flows"] > 0
    header = open(outs[0] / "fct.csv").readline().strip().split(",")
    assert header == [*FCT_COLUMNS, "job"]
    assert open(outs[0] / "ops.csv").readline().strip().endswith(",job")
    import csv
    rows = list(csv.DictReader(open(outs[0] / "fct.csv")))
    assert {r["job"] for r in rows} == {"a", "b", "background"}
    prio = {j: {r["priority"] for r in rows if r["job"] == j} for j in ("a", "b", "background")}
    assert prio == {"a": {"3"}, "b": {"4"}, "background": {"3"}}   # b's traffic_class; roce_priority 3 else
    for name in ("summary.json", "fct.csv", "ops.csv", "interference.csv"):
        a, b = (open(o / name, "rb").read() for o in outs)
        if name == "summary.json":
            a, b = (json.loads(x) for x in (a, b))
            for d in (a, b):
                d.pop("wall_time_s")          # the one machine measurement (README)
        assert a == b, name


@pytest.mark.parametrize("extra,match", [
    (["--iterations", "3"], "--iterations"),
    (["--workload-set", "parallelism.dp=2"], "--workload-set"),
    (["--repeat", "3"], "--repeat"),
    (["--fct", "off"], "--fct"),
    (["--overlap-slowdown", "0.2"], "--overlap-slowdown"),
    (["--backend", "packet", "--memo", "on"], "always simulated"),      # a shared fabric: nothing to replay
    (["--backend", "packet", "--set", "memo=on"], "--set memo"),
])
def test_cli_refuses_per_job_flags(tmp_path, capsys, extra, match):
    assert main(["run", TOPO, EXAMPLE, "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and "\n" not in err


def test_cli_cache_flag_needs_a_cluster_file(tmp_path, capsys):
    wl = os.path.join(ROOT, "workloads", "bert-large-small.yaml")
    assert main(["run", TOPO, wl, "--out", str(tmp_path / "o"), "--no-alone"]) == 2
    assert "--no-alone" in capsys.readouterr().err


def test_start_time_shifts_a_job_but_not_its_iteration_time():
    """A job started 1 ms late on its own fabric half: same iteration times, its end 1 ms later."""
    wl = dp_workload()
    cl = {"jobs": [{"name": "a", "workload": wl, "placement": ["s0.gpu0", "s1.gpu0"]},
                   {"name": "b", "workload": wl, "placement": ["s2.gpu0", "s3.gpu0"], "start_ns": 1_000_000}]}
    s = run_cluster(two_leaves(), cl, backend="analytic", alone=False)
    a, b = s["jobs"]["a"], s["jobs"]["b"]
    assert b["iteration_time_s"] == pytest.approx(a["iteration_time_s"], rel=1e-9)
    assert b["end_ns"] - a["end_ns"] == 1_000_000
    assert sum(b["breakdown_s"].values()) == pytest.approx(b["iteration_time_s"], rel=1e-9)


def test_alone_runs_are_cached_by_content(tmp_path):
    """The second run reads each alone time from the cache (a doctored entry shows it is really read);
    another seed or another placement is another key."""
    wl = dp_workload()
    cl = {"jobs": [{"name": "a", "workload": wl, "placement": ["s0.gpu0", "s2.gpu0"]},
                   {"name": "b", "workload": wl, "placement": ["s1.gpu0", "s3.gpu0"]}]}
    cache = str(tmp_path / "cache")
    first = run_cluster(two_leaves(), cl, backend="analytic", cache_dir=cache)
    assert first["_alone_cached"] == {"a": False, "b": False}
    entries = sorted(os.listdir(cache))
    assert len(entries) == 2
    for e in entries:
        p = os.path.join(cache, e)
        doc = json.load(open(p))
        doc["iteration_times_s"] = [2 * t for t in doc["iteration_times_s"]]
        json.dump(doc, open(p, "w"))
    second = run_cluster(two_leaves(), cl, backend="analytic", cache_dir=cache)
    assert second["_alone_cached"] == {"a": True, "b": True}
    for name in ("a", "b"):
        assert second["jobs"][name]["slowdown"] == pytest.approx(first["jobs"][name]["slowdown"] / 2, rel=1e-12)
    run_cluster(two_leaves(), cl, backend="analytic", cache_dir=cache, seed=5)
    moved = {"jobs": [cl["jobs"][0], {**cl["jobs"][1], "placement": ["s3.gpu0", "s1.gpu0"]}]}
    run_cluster(two_leaves(), moved, backend="analytic", cache_dir=cache)
    assert len(os.listdir(cache)) == 5


def test_report_has_a_jobs_section_for_cluster_runs_only(tmp_path):
    from netsim.analysis.report import write_report
    wl = dp_workload()
    cl = {"jobs": [{"name": "a", "workload": wl, "placement": ["s0.gpu0", "s2.gpu0"]},
                   {"name": "b", "workload": wl, "placement": ["s1.gpu0", "s3.gpu0"]}]}
    run_cluster(two_leaves(), cl, backend="flow", out_dir=str(tmp_path / "c"))
    html = open(write_report([tmp_path / "c"])).read()
    jobs = html[html.index('id="jobs"'):html.index('id="fct"')]
    assert "Jobs (cluster run)" in jobs and "slowdown" in jobs and "leaf0" in jobs
    from netsim.runtime import run_training
    run_training(two_leaves(), {**wl, "placement": {"gpus": ["s0.gpu0", "s2.gpu0"]}}, backend="flow",
                 out_dir=str(tmp_path / "single"))
    assert 'id="jobs"' not in open(write_report([tmp_path / "single"])).read()


def test_an_imported_job_shares_the_fabric_with_a_netsim_job(tmp_path):
    """An AICB workload (detected by content) as one job: it runs on its listed GPUs, its flows carry its job
    name, and crossing the bottleneck with job b slows its 1 MiB all-reduce (bandwidth-bound) by about 2x."""
    path = tmp_path / "aicb.txt"
    path.write_text("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 1 vpp: 1 ga: 1 "
                    "all_gpus: 2 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n1\n"
                    "grad\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1048576\t1\n")
    cl = {"jobs": [{"name": "imp", "workload": str(path), "placement": ["s0.gpu0", "s2.gpu0"]},
                   {"name": "b", "workload": dp_workload(), "placement": "packed"}]}
    s = run_cluster(two_leaves(), cl, backend="flow", params={"flow_fairness": "maxmin"})
    assert s["jobs"]["imp"]["gpus"] == ["s0.gpu0", "s2.gpu0"] and s["jobs"]["b"]["gpus"] == ["s1.gpu0", "s3.gpu0"]
    assert s["shared_links"] == {"b|imp": 2}
    assert 1.5 < s["jobs"]["imp"]["slowdown"] < 2.05


def test_nic_aware_is_the_holmes_order_of_the_packed_gpus():
    from netsim.workloads.hetero import nic_aware_gpu_order
    g = load_topology(os.path.join(ROOT, "topologies", "two_cluster_hetero.yaml"))
    wl = {**dp_workload(dp=4), "parallelism": {"dp": 2, "tp": 2}}
    got = _gpus(g, _job("a", workload=wl, placement="nic_aware"))["a"]
    from netsim.topology import gpus
    assert got == list(nic_aware_gpu_order(g, 2, 2, 1, gpus(g)[:4]))


def test_workload_variability_and_overlap_apply_as_in_netsim_run():
    """A job with variability: and overlap: sections takes, alone in a cluster, exactly netsim run's time
    (which differs from the same workload without them), and a whatif: section is refused."""
    import yaml

    from netsim.runtime import run_training
    path = os.path.join(ROOT, "workloads", "gpt-1.5b-t2p2d2-variability-small.yaml")
    topo = "gpu_cluster:servers=4,gpus_per_server=2"
    ref = run_training(topo, path, backend="analytic", seed=3)["iteration_time_s"]
    got = run_cluster(topo, {"jobs": [{"name": "v", "workload": path, "placement": "packed"}]},
                      backend="analytic", seed=3, alone=False)["jobs"]["v"]["iteration_time_s"]
    assert got == pytest.approx(ref, rel=1e-12)
    doc = yaml.safe_load(open(path))
    plain = {k: v for k, v in doc.items() if k not in ("variability", "overlap")}
    assert run_training(topo, plain, backend="analytic", seed=3)["iteration_time_s"] != pytest.approx(ref, rel=1e-6)
    with pytest.raises(InputError, match=r"job w, workload field whatif: a cluster job cannot carry a what-if"):
        run_cluster(topo, {"jobs": [{"name": "w", "workload": {**plain, "whatif": {"straggler": {0: 2}}},
                                     "placement": "packed"}]}, backend="analytic")
