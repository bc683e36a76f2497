"""Identical runs into differently named folders give byte-identical outputs (trace and Parquet included).

Only summary.json's wall-clock fields (keys containing ``wall``) may differ;
nothing a run writes may depend on where it is written.
"""
import json
import os

from netsim.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WL = os.path.join(ROOT, "workloads", "bert-large-small.yaml")
FABRIC = "gpu_cluster:servers=4,gpus_per_server=1,servers_per_leaf=1,spines=2"


def _strip_wall(obj):
    if isinstance(obj, dict):
        return {k: _strip_wall(v) for k, v in obj.items() if "wall" not in k}
    if isinstance(obj, list):
        return [_strip_wall(v) for v in obj]
    return obj


def _compare(a, b):
    names = sorted(os.listdir(a))
    assert names == sorted(os.listdir(b)) and "trace.json" in names and "summary.json" in names
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if n == "summary.json":
            sa, sb = (_strip_wall(json.load(open(p, encoding="utf-8"))) for p in (pa, pb))
            assert sa == sb and sa["status"] == "complete"
        else:
            assert open(pa, "rb").read() == open(pb, "rb").read(), n
        assert os.path.basename(a) not in open(pa, "rb").read().decode("utf-8", "replace"), n


def test_flows_outputs_do_not_depend_on_the_folder(tmp_path):
    f = tmp_path / "f.csv"
    f.write_text("src,dst,size_bytes,start_ns\n" + "".join(f"h{i},h{(i + 5) % 16},50KB,{i * 300}\n"
                                                         for i in range(16)))
    topo = os.path.join(ROOT, "topologies", "leaf_spine_hosts.yaml")
    a, b = str(tmp_path / "first_folder"), str(tmp_path / "zz" / "elsewhere")
    for out in (a, b):
        assert main(["flows", topo, str(f), "--out", out, "--quiet", "--cc", "dcqcn"]) == 0
    _compare(a, b)


def test_run_outputs_do_not_depend_on_the_folder(tmp_path):
    a, b = str(tmp_path / "run_a"), str(tmp_path / "another_place")
    for out in (a, b):
        assert main(["run", FABRIC, WL, "--backend", "flow", "--iterations", "2", "--out", out, "--quiet"]) == 0
    _compare(a, b)


def test_flow_backend_summary_has_no_machine_time_but_wall_time_s(tmp_path):
    # the flow backend's solver wall time (recompute_wall_s) used to be written into summary.json
    import json
    import os
    from netsim.cli import main
    hpcc = os.path.join(os.path.dirname(__file__), "..", "..", "topologies", "hpcc_small")
    docs = []
    for name in ("a", "b"):
        assert main(["flows", os.path.join(hpcc, "topology.txt"), os.path.join(hpcc, "flow.txt"), "--backend", "flow",
                     "--out", str(tmp_path / name), "--quiet", "--no-trace"]) == 0
        doc = json.loads((tmp_path / name / "summary.json").read_text())
        doc.pop("wall_time_s")
        docs.append(doc)
    assert docs[0] == docs[1] and "recompute_wall_s" not in json.dumps(docs[0])
