"""A run's flows as an HPCC/ns-3 ``flow.txt`` (``netsim export hpcc-flows``).

HPCC's flow file (read by HPCC's ns-3, ASTRA-sim's ns-3 backend and SimAI,
and by :mod:`netsim.flowfile`): the flow count, then one line per flow
``src dst pg dport size_bytes start_s`` with nodes as integer indices and the
start in seconds.  Flows come from the run's ``fct.csv`` in start order;
``pg`` is the flow's priority; ``dport`` numbers the flows from 100 (any
unique port); ``start_s`` = ``start_ns`` · 10⁻⁹ + the ``offset_s`` asked for
(default 0; HPCC's examples start their flows at 2 s, ``--offset-s 2``).  Node indices: a name that is an integer (a run on an
HPCC ``topology.txt``) is its own index; otherwise names are numbered in
sorted order and ``FILE.nodes.csv`` (``index,name``) says which is which.
Left out: the dependencies between flows (flow.txt has none: a replay
starts each flow at its recorded time).
"""
from __future__ import annotations

import csv
import math
import os

from ..errors import InputError

#: seconds added to every start time (0: as recorded; HPCC's example flow files start at 2 s)
DEFAULT_OFFSET_S = 0.0
FIRST_DPORT = 100


def _read_fct(run_dir: str) -> list[dict]:
    path = os.path.join(run_dir, "fct.csv") if os.path.isdir(run_dir) else run_dir
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", source=path, where="fct.csv", value=None,
                         accepted="the fct.csv of a netsim run (or its directory)") from None
    missing = [c for c in ("src", "dst", "size_bytes", "start_ns", "priority") if rows and c not in rows[0]]
    if missing:
        raise InputError("missing column", source=path, where="header", value=missing[0],
                         accepted="netsim's fct.csv columns")
    return rows


def write_hpcc_flows(run_dir: str, out: str, *, offset_s: float = DEFAULT_OFFSET_S) -> int:
    """Write ``out`` (flow.txt) from ``run_dir``'s flows; returns the number of flows."""
    if not math.isfinite(offset_s) or offset_s < 0:
        raise InputError("must be a finite number of seconds >= 0", where="--offset-s", value=offset_s)
    rows = _read_fct(run_dir)
    names = sorted({r["src"] for r in rows} | {r["dst"] for r in rows})
    numeric = all(n.isdigit() for n in names)
    index = {n: int(n) for n in names} if numeric else {n: i for i, n in enumerate(names)}
    rows.sort(key=lambda r: (int(r["start_ns"]), int(r.get("flow_id") or 0)))
    with open(out, "w") as f:
        f.write(f"{len(rows)}\n")
        for k, r in enumerate(rows):
            start = offset_s + int(r["start_ns"]) * 1e-9
            f.write(f"{index[r['src']]} {index[r['dst']]} {int(r['priority'] or 0)} {FIRST_DPORT + k} "
                    f"{int(r['size_bytes'])} {start:.9f}\n")
    if not numeric:
        with open(out + ".nodes.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(("index", "name"))
            w.writerows((i, n) for n, i in index.items())
    return len(rows)
