"""Golden-output check of the flow backend: run the shipped examples, compare two runs byte-for-byte.

What it checks: ``netsim run`` on every ``workloads/*-small.yaml`` on
``topologies/leaf_spine_64gpu.yaml`` with every congestion-control model
(none, dcqcn, cubic, dctcp), both fairness modes forced, a link change, and
``netsim flows`` on the shipped flow files, all with ``--backend flow``.
``run`` writes each case's ``fct.csv``, ``queues.csv``, ``pfc.csv``, ``cc.csv``
and ``summary.json`` (wall-clock fields removed) under ``--out``; ``compare``
reports every file that differs between two such directories.

Left out: the packet and analytic backends, trace.json (it carries no rate
information beyond fct.csv), timing.

Usage::

    python tools/flow_golden.py run --root OLD_CHECKOUT --out REF_DIR
    python tools/flow_golden.py run --root NEW_CHECKOUT --out NEW_DIR
    python tools/flow_golden.py compare REF_DIR NEW_DIR
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

#: congestion-control models the flow backend supports
CC_MODELS = ("none", "dcqcn", "cubic", "dctcp")
#: trace files compared byte-for-byte
COMPARED = ("fct.csv", "queues.csv", "pfc.csv", "cc.csv", "summary.json")
#: topology the shipped workloads run on
WORKLOAD_TOPOLOGY = "topologies/leaf_spine_64gpu.yaml"


def cases(repo: Path) -> list[tuple[str, list[str]]]:
    """``(name, netsim arguments)`` of every case, paths relative to ``repo``."""
    out = []
    for wl in sorted((repo / "workloads").glob("*-small.yaml")):
        for cc in CC_MODELS:
            out.append((f"run-{wl.stem}-{cc}",
                        ["run", WORKLOAD_TOPOLOGY, f"workloads/{wl.name}", "--cc", cc]))
    for fair in ("maxmin", "port"):
        out.append((f"run-gpt-3b-t2p2d8-small-none-{fair}",
                    ["run", WORKLOAD_TOPOLOGY, "workloads/gpt-3b-t2p2d8-small.yaml", "--cc", "none",
                     "--set", f"flow_fairness={fair}"]))
    out.append(("run-gpt-3b-t2p2d8-small-none-hol-off",
                ["run", WORKLOAD_TOPOLOGY, "workloads/gpt-3b-t2p2d8-small.yaml", "--cc", "none",
                 "--set", "flow_pfc_hol=off"]))
    out.append(("run-gpt-1.5b-t2p2d2-small-degrade",
                ["run", WORKLOAD_TOPOLOGY, "workloads/gpt-1.5b-t2p2d2-small.yaml", "--cc", "dcqcn",
                 "--degrade-link", "leaf0:spine0=0.5@100us", "--fail-link", "leaf1:spine1@300us"]))
    flow_files = [("hpcc_small", "topologies/hpcc_small/topology.txt", "topologies/hpcc_small/flow.txt"),
                  ("incast_8to1", "topologies/leaf_spine_hosts.yaml", "workloads/sweeps/incast_8to1.csv")]
    for name, topo, flows in flow_files:
        for cc in CC_MODELS:
            out.append((f"flows-{name}-{cc}", ["flows", topo, flows, "--cc", cc]))
    return out


def _strip_wall(obj):
    """``obj`` without wall-clock fields (any key naming ``wall``), recursively."""
    if isinstance(obj, dict):
        return {k: _strip_wall(v) for k, v in obj.items() if "wall" not in k}
    if isinstance(obj, list):
        return [_strip_wall(v) for v in obj]
    return obj


def run(root: Path, out: Path, only: str | None) -> int:
    """Run every case with the ``netsim`` of checkout ``root``; keep the compared files."""
    env = dict(os.environ, PYTHONPATH=str(root))
    failed = 0
    for name, args in cases(root):
        if only and only not in name:
            continue
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "netsim", *args, "--backend", "flow", "--out", str(d), "--quiet",
               "--no-trace"]
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        (d / "exit.txt").write_text(f"{p.returncode}\n{p.stderr.strip().splitlines()[-1:] }\n")
        if p.returncode != 0:
            failed += 1
            print(f"{name}: exit {p.returncode}: {p.stderr.strip()[-300:]}", file=sys.stderr)
        s = d / "summary.json"
        if s.exists():
            s.write_text(json.dumps(_strip_wall(json.loads(s.read_text())), indent=1, sort_keys=True))
        for f in d.iterdir():
            if f.name not in COMPARED and f.name != "exit.txt":
                f.unlink()
        print(f"{name}: done", flush=True)
    return 1 if failed else 0


def compare(a: Path, b: Path) -> int:
    """Print every compared file that differs (or exists on one side only); 1 if any."""
    bad = 0
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    for name in names:
        for f in (*COMPARED, "exit.txt"):
            pa, pb = a / name / f, b / name / f
            if pa.exists() != pb.exists() or (pa.exists() and pa.read_bytes() != pb.read_bytes()):
                print(f"DIFF {name}/{f}")
                bad += 1
    print(f"{len(names)} cases, {bad} files differ")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--only", default=None, help="run only cases whose name contains this")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    ns = ap.parse_args(argv)
    if ns.cmd == "run":
        return run(ns.root.resolve(), ns.out.resolve(), ns.only)
    return compare(ns.a, ns.b)


if __name__ == "__main__":
    sys.exit(main())
