"""Every shipped example works end to end through the CLI, as a new user would run it.

* every topology in ``topologies/`` (YAML, GraphML, HPCC ``topology.txt``)
  passes ``netsim topo validate`` and ``netsim topo show``;
* every workload file in ``workloads/`` (recursively, sweeps aside) loads and
  validates; every ``*-small.yaml`` runs one iteration on the analytic backend
  on a shipped GPU topology with enough GPUs, and its outputs obey the output
  contract (breakdown sums to the iteration time, one fct.csv row per flow);
* the HPCC example (``topologies/hpcc_small``) runs through
  ``netsim flows --hpcc-fct`` and every flow completes;
* the sweep examples validate with ``netsim sweep --dry-run`` and list
  exactly the grid × zip × repetitions points their files describe.
"""
from __future__ import annotations

import csv
import glob
import json
import math
import os

import pytest
import yaml

from netsim.cli import main
from netsim.records import FCT_COLUMNS
from netsim.topology import gpus, load_topology
from netsim.workloads import load_workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPO = os.path.join(ROOT, "topologies")
WL = os.path.join(ROOT, "workloads")
SWEEPS = os.path.join(WL, "sweeps")
CLUSTERS = os.path.join(WL, "clusters")     # cluster files (several jobs): tests/cluster runs them

TOPOLOGY_FILES = sorted(glob.glob(os.path.join(TOPO, "*.yaml")) + glob.glob(os.path.join(TOPO, "*.graphml"))
                        + glob.glob(os.path.join(TOPO, "**", "topology.txt"), recursive=True))
WORKLOAD_FILES = sorted(p for p in glob.glob(os.path.join(WL, "**", "*.yaml"), recursive=True)
                        if not os.path.abspath(p).startswith((SWEEPS + os.sep, CLUSTERS + os.sep)))
SMALL_WORKLOADS = [p for p in WORKLOAD_FILES if p.endswith("-small.yaml")]
SWEEP_FILES = sorted(glob.glob(os.path.join(SWEEPS, "*.yaml")))
HPCC = os.path.join(TOPO, "hpcc_small")


def _rel(p: str) -> str:
    return os.path.relpath(p, ROOT)


def _gpu_count(path: str) -> int:
    return len(gpus(load_topology(path)))


@pytest.fixture(scope="module")
def gpu_topologies() -> list[tuple[int, str]]:
    """Shipped topologies with GPUs, as (GPU count, path), fewest GPUs first."""
    out = []
    for p in TOPOLOGY_FILES:
        n = _gpu_count(p)
        if n:
            out.append((n, p))
    assert out, "no shipped topology has GPUs"
    return sorted(out)


def test_there_are_examples():
    assert len(TOPOLOGY_FILES) >= 5 and any(p.endswith("topology.txt") for p in TOPOLOGY_FILES)
    assert len(SMALL_WORKLOADS) >= 5
    for p in SMALL_WORKLOADS:  # every reduced file has its full-size sibling
        assert os.path.exists(p.replace("-small.yaml", ".yaml")), p
    assert len(SWEEP_FILES) >= 2


@pytest.mark.parametrize("path", TOPOLOGY_FILES, ids=_rel)
def test_topology_validates_and_shows(path, capsys):
    assert main(["topo", "validate", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK "), out
    g = load_topology(path)
    # the counts printed are the graph's
    assert f"{g.number_of_nodes()} nodes" in out and f"{g.number_of_edges()} links" in out
    assert main(["topo", "show", path, "--no-bisection"]) == 0
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("path", WORKLOAD_FILES, ids=_rel)
def test_workload_validates(path):
    w = load_workload(path)
    assert w.world_size == w.dp * w.tp * w.pp * w.cp >= 1
    assert w.global_batch % (w.micro_batch * w.dp) == 0


@pytest.mark.parametrize("path", SMALL_WORKLOADS, ids=_rel)
def test_small_workload_runs_on_analytic(path, gpu_topologies, tmp_path, capsys):
    w = load_workload(path)
    fits = [(n, t) for n, t in gpu_topologies if n >= w.world_size]
    assert fits, f"no shipped topology has {w.world_size} GPUs"
    # spread the workloads over the shipped GPU topologies that fit (deterministically)
    topo = fits[SMALL_WORKLOADS.index(path) % len(fits)][1]
    out = tmp_path / "run"
    assert main(["run", topo, path, "--backend", "analytic", "--iterations", "1", "--out", str(out),
                 "--quiet"]) == 0
    with open(out / "summary.json", encoding="utf-8") as fh:
        s = json.load(fh)
    assert s["iterations"] == 1 and len(s["iteration_times_s"]) == 1
    t = s["iteration_time_s"]
    assert t > 0 and math.isclose(s["iteration_times_s"][0], t, rel_tol=1e-12)
    # critical-path attribution: the parts sum to the iteration time (issue 4 contract)
    assert set(s["breakdown_s"]) <= {"compute", "optimizer", "tp", "pp", "dp", "ep", "bubble", "other"}
    assert math.isclose(sum(s["breakdown_s"].values()), t, rel_tol=1e-6, abs_tol=1e-12)
    with open(out / "fct.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == s["flows"]
    assert all(c in rows[0] for c in FCT_COLUMNS) if rows else True
    assert all(int(r["end_ns"]) <= round(t * 1e9) + 1 for r in rows)
    with open(out / "ops.csv", newline="", encoding="utf-8") as fh:
        ranks = {int(r["rank"]) for r in csv.DictReader(fh)}
    assert ranks == set(range(w.world_size))


def test_hpcc_example_runs_with_hpcc_fct(tmp_path, capsys):
    out = tmp_path / "hpcc"
    topo, flows = os.path.join(HPCC, "topology.txt"), os.path.join(HPCC, "flow.txt")
    assert main(["flows", topo, flows, "--out", str(out), "--hpcc-fct", "--quiet"]) == 0
    with open(flows, encoding="utf-8") as fh:
        n_flows = int(fh.readline().split()[0])
    with open(out / "fct.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == n_flows
    with open(out / "summary.json", encoding="utf-8") as fh:
        s = json.load(fh)
    assert s["completed"] == n_flows and s["failed"] == 0
    # HPCC fct.txt: one line per flow, "sip dip sport dport size start_ns fct_ns ideal_ns"
    with open(out / "fct.txt", encoding="utf-8") as fh:
        lines = [ln.split() for ln in fh if ln.strip()]
    assert len(lines) == n_flows
    assert sorted(int(ln[4]) for ln in lines) == sorted(int(r["size_bytes"]) for r in rows)
    assert all(int(ln[6]) >= int(ln[7]) > 0 for ln in lines)  # FCT >= ideal FCT


def _expected_points(path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    n = 1
    for values in (doc.get("grid") or {}).values():
        n *= len(values)
    zips = doc.get("zip") or {}
    if zips:
        n *= len(next(iter(zips.values())))
    return n * int(doc.get("repetitions", 1))


@pytest.mark.parametrize("path", SWEEP_FILES, ids=_rel)
def test_sweep_example_dry_run(path, tmp_path, capsys):
    assert main(["sweep", path, "--out", str(tmp_path / "sw"), "--dry-run"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == f"{_expected_points(path)} points", out[-1]
    assert len(out) - 1 == _expected_points(path)
    ids = [ln.split()[1] for ln in out[:-1]]
    assert len(set(ids)) == len(ids)  # every point gets its own folder


def test_graphml_example_is_the_fat_tree_builder():
    """The shipped GraphML file is the graph its comment says: fat_tree:k=4, attribute for attribute."""
    a = load_topology(os.path.join(TOPO, "fat_tree_k4.graphml"))
    b = load_topology("fat_tree:k=4")
    assert dict(a.nodes(data=True)) == dict(b.nodes(data=True))
    assert {frozenset(e) for e in a.edges} == {frozenset(e) for e in b.edges}
    assert all(a.edges[u, v] == b.edges[u, v] for u, v in b.edges)
