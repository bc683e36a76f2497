"""``netsim report DIR [DIR ...] [--out FILE]``: an HTML report of runs.

Also (re)writes ``trace.json`` (``--trace``) and Parquet copies (``--parquet``)
of a run directory, e.g. for runs made with ``--no-trace``. A run that did not
complete (failed, interrupted, killed) is reported with what it has, one
warning line on stderr per such run and a banner in the HTML.
"""
from __future__ import annotations

import argparse

from .args import seed_arg


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="write report.html for one run or a comparison of runs",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="+", metavar="DIR", help="run directories (netsim run/flows --out)")
    p.add_argument("--out", default=None, help="output HTML file (default DIR/report.html, or ./report.html for several)")
    p.add_argument("--title", default=None, help="report title")
    p.add_argument("--topology", default=None,
                   help="topology of the run(s), to map flows onto links for the utilization heat map")
    p.add_argument("--seed", type=seed_arg, default=None,
                   help="the runs' seed (ECMP hash) when --topology is given (default: each run's summary.json seed)")
    p.add_argument("--trace", action="store_true", help="also write DIR/trace.json for each DIR")
    p.add_argument("--parquet", action="store_true", help="also write DIR/*.parquet (needs pyarrow)")
    p.set_defaults(func=run)


def _check_nodes(fct, graph, run_dir: str, topology: str) -> None:
    """Every flow endpoint of a run is a node of ``--topology`` (else the run was made on another one)."""
    from ..errors import InputError
    for col in ("src", "dst"):
        for name in fct[col].unique() if len(fct) else ():
            if name not in graph:
                raise InputError("the run's flows name a node that --topology lacks", source=run_dir,
                                 where=f"fct.csv, field {col}", value=name,
                                 accepted=f"the topology the run was made on (not {topology})")


def _recorded_topology(runs):
    """The topology every run recorded in its summary.json, when it still loads and holds every flow endpoint.

    A training run records ``topology`` (the path or builder expression it was
    given); the report then maps flows onto named links instead of showing
    egress throughput per node. Anything else (runs on different topologies, a
    path that no longer resolves from here, a graph that lacks a flow's node)
    gives ``None``, and the page says that flows were not mapped.
    """
    from ..errors import NetsimError
    from ..topology import load_topology
    names = {r.summary.get("topology") for r in runs}
    if len(names) != 1 or not isinstance(next(iter(names)), str):
        return None
    try:
        graph = load_topology(next(iter(names)))
    except (NetsimError, OSError):
        return None
    for r in runs:
        if len(r.fct) and not (set(r.fct["src"]) | set(r.fct["dst"])) <= set(graph.nodes):
            return None
    return graph


def run(args) -> int:
    from ..analysis.io import check_run_dir, load_run, write_parquet
    from ..analysis.report import run_seed, write_report
    from ..analysis.trace import write_trace

    if args.out is not None:
        from .args import check_out_file
        check_out_file(args.out)
    graph = None
    if args.topology:
        from ..topology import load_topology
        graph = load_topology(args.topology)
    import sys
    runs = [load_run(check_run_dir(d), warn=False) for d in args.dirs]  # validates every directory first
    for d, r in zip(args.dirs, runs):
        if not r.complete:
            print(f"netsim report: warning: {d}: {r.status}; showing what it has", file=sys.stderr)
    if graph is None:
        graph = _recorded_topology(runs)
    elif graph is not None:
        for d, r in zip(args.dirs, runs):
            _check_nodes(r.fct, graph, d, args.topology)
    for d, r in zip(args.dirs, runs):
        if args.parquet:
            write_parquet(d)
        if args.trace:
            print(write_trace(d, graph=graph, seed=run_seed(r, args.seed)))
    print(write_report(runs, out=args.out, title=args.title, graph=graph, seed=args.seed))
    return 0
