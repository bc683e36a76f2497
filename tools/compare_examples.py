"""Run the shipped examples with one source tree and compare two such runs file by file.

Cases: ``netsim run`` of every ``workloads/*-small.yaml`` (one iteration) on
``topologies/leaf_spine_64gpu.yaml`` with each backend (packet, flow,
analytic), and ``netsim flows`` on the shipped flow files (the HPCC example
with ``--hpcc-fct`` on packet; the 8-to-1 incast of ``workloads/sweeps`` under
DCQCN) with each backend.

Usage::

    python tools/compare_examples.py run TREE OUT_DIR [--only SUBSTR]
    python tools/compare_examples.py diff DIR_A DIR_B
    python tools/compare_examples.py fields DIR_A DIR_B

``run`` executes ``python -m netsim`` with ``TREE`` first on ``PYTHONPATH`` and
``TREE`` as the working directory, one sub-folder of ``OUT_DIR`` per case (its
exit status and stderr kept in ``exit.txt``). ``diff`` compares every file of
every case byte for byte, except wall-clock measurements in JSON files (keys
ending in ``wall_s`` or ``wall_time_s``, the fields that differ between
identical runs) and Parquet copies (compared through
their CSV originals); it prints one line per differing file and exits 1 if any
differs. ``fields`` says how they differ, case by case: columns and keys
added or removed, row counts, the largest differences of numeric columns,
changed JSON values, a text file's first differing line
(``tools/compare_fields.py``).
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

try:
    from tools.compare_fields import drop_walls, fields
except ImportError:  # run as a script without the checkout on sys.path: tools/ is sys.path[0]
    from compare_fields import drop_walls, fields

BACKENDS = ("packet", "flow", "analytic")
GPU_TOPOLOGY = "topologies/leaf_spine_64gpu.yaml"


def cases(tree: str) -> list[tuple[str, list[str]]]:
    """``(name, argv)`` of every example run, argv relative to ``tree``."""
    out = []
    for wl in sorted(glob.glob(os.path.join(tree, "workloads", "*-small.yaml"))):
        base = os.path.basename(wl)[:-len(".yaml")]
        for be in BACKENDS:
            out.append((f"run-{base}-{be}", ["run", GPU_TOPOLOGY, f"workloads/{base}.yaml", "--backend", be,
                                             "--iterations", "1", "--quiet"]))
    for be in BACKENDS:
        extra = ["--hpcc-fct"] if be == "packet" else []
        out.append((f"flows-hpcc_small-{be}", ["flows", "topologies/hpcc_small/topology.txt",
                                               "topologies/hpcc_small/flow.txt", "--backend", be,
                                               "--quiet"] + extra))
        out.append((f"flows-incast_8to1-{be}", ["flows", "topologies/leaf_spine_hosts.yaml",
                                                "workloads/sweeps/incast_8to1.csv", "--backend", be,
                                                "--cc", "dcqcn", "--seed", "1", "--quiet"]))
    return out


def run(tree: str, out_dir: str, only: str | None = None) -> int:
    tree = os.path.abspath(tree)
    out_dir = os.path.abspath(out_dir)
    env = dict(os.environ, PYTHONPATH=tree)
    for name, argv in cases(tree):
        if only and only not in name:
            continue
        dest = os.path.join(out_dir, name)
        os.makedirs(dest, exist_ok=True)
        p = subprocess.run([sys.executable, "-m", "netsim"] + argv + ["--out", dest], cwd=tree, env=env,
                           capture_output=True, text=True)
        with open(os.path.join(dest, "exit.txt"), "w", encoding="utf-8") as fh:
            fh.write(f"{p.returncode}\n{p.stderr}")
        print(name, p.returncode, flush=True)
    return 0


def _content(path: str) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".json"):
        try:
            obj = json.loads(data)
        except ValueError:
            return data
        return json.dumps(drop_walls(obj), sort_keys=True).encode()
    return data


def diff(a: str, b: str) -> int:
    bad = 0
    for case in sorted(set(os.listdir(a)) | set(os.listdir(b))):
        fa, fb = os.path.join(a, case), os.path.join(b, case)
        names = set()
        for d in (fa, fb):
            if os.path.isdir(d):
                names |= {n for n in os.listdir(d) if not n.endswith(".parquet")}
        for n in sorted(names):
            pa, pb = os.path.join(fa, n), os.path.join(fb, n)
            if not (os.path.exists(pa) and os.path.exists(pb)):
                print(f"{case}/{n}: only in {'A' if os.path.exists(pa) else 'B'}")
                bad += 1
            elif _content(pa) != _content(pb):
                print(f"{case}/{n}: differs")
                bad += 1
    print(f"{bad} differing file(s)")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "run":
        only = argv[argv.index("--only") + 1] if "--only" in argv else None
        return run(argv[1], argv[2], only)
    if len(argv) == 3 and argv[0] == "diff":
        return diff(argv[1], argv[2])
    if len(argv) == 3 and argv[0] == "fields":
        return fields(argv[1], argv[2], lambda pa, pb: _content(pa) == _content(pb))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
