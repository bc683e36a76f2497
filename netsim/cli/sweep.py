"""``netsim sweep SWEEP.yaml --out DIR``: run a parameter sweep on Dask (see docs/sweep.md)."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep", help="run a parameter sweep of netsim flows/run on Dask",
        description="Run every point of SWEEP.yaml (grid / zip / repetitions over a base "
                    "`netsim flows` or `netsim run`) on Dask; one row per point in DIR/results.csv.")
    p.add_argument("sweep", metavar="SWEEP.yaml", help="sweep file (see docs/sweep.md)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="address of a running Dask scheduler (default: a LocalCluster)")
    p.add_argument("--workers", type=int, metavar="N", default=None,
                   help="LocalCluster worker processes, 1 thread each (default: CPU count)")
    p.add_argument("--resume", action="store_true", help="skip points already done in DIR")
    p.add_argument("--quiet", action="store_true", help="no progress line, no summary line")
    p.add_argument("--dry-run", action="store_true", help="validate and list the points; run nothing")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..sweep import expand, load_sweep
    from ..sweep.runner import default_progress, run_sweep

    if args.workers is not None and args.workers < 1:
        raise InputError("at least one worker", where="--workers", value=args.workers, accepted="an integer >= 1")
    if args.dry_run:
        points = expand(load_sweep(args.sweep))
        for p in points:
            values = " ".join(f"{k}={v}" for k, v in p.axes.items())
            print(f"{p.index:5d} {p.point_id} {values}")
        print(f"{len(points)} points")
        return 0
    res = run_sweep(args.sweep, args.out, scheduler=args.scheduler, workers=args.workers,
                    resume=args.resume, progress=default_progress(args.quiet))
    if args.quiet:
        return 0
    print(f"sweep: {res.points} points: {res.ok} ok, {res.failed} failed, {res.skipped} resumed; "
          f"ran {res.ran} in {res.wall_s:.1f} s ({res.points_per_s:.2f} points/s) -> "
          f"{args.out}/results.csv" + (" + results.parquet" if res.parquet else ""))
    return 0
