"""``netsim report DIR [DIR ...] [--out FILE]``: an HTML report of runs.

Also (re)writes ``trace.json`` (``--trace``) and Parquet copies (``--parquet``)
of a run directory, e.g. for runs made with ``--no-trace``.
"""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="write report.html for one run or a comparison of runs",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="+", metavar="DIR", help="run directories (netsim run/flows --out)")
    p.add_argument("--out", default=None, help="output HTML file (default DIR/report.html, or ./report.html for several)")
    p.add_argument("--title", default=None, help="report title")
    p.add_argument("--topology", default=None,
                   help="topology of the run(s), to map flows onto links for the utilization heat map")
    p.add_argument("--seed", type=int, default=0, help="the runs' seed (ECMP hash) when --topology is given")
    p.add_argument("--trace", action="store_true", help="also write DIR/trace.json for each DIR")
    p.add_argument("--parquet", action="store_true", help="also write DIR/*.parquet (needs pyarrow)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..analysis.io import check_run_dir, load_run, write_parquet
    from ..analysis.report import write_report
    from ..analysis.trace import write_trace

    graph = None
    if args.topology:
        from ..topology import load_topology
        graph = load_topology(args.topology)
    runs = [load_run(check_run_dir(d)) for d in args.dirs]  # validates every directory first
    for d in args.dirs:
        if args.parquet:
            write_parquet(d)
        if args.trace:
            print(write_trace(d, graph=graph, seed=args.seed))
    print(write_report(runs, out=args.out, title=args.title, graph=graph, seed=args.seed))
    return 0
