"""``netsim bench [NAME ...] [--list] [--json FILE]``: run benchmarks, print figures.

Benchmarks are registered by the modules ``netsim.bench.<area>``
(:func:`netsim.bench.load_all`). Without NAME every benchmark runs. Each
prints one block of ``key  value`` lines; ``--json`` also writes all figures
to FILE. Benchmarks are not tests: they measure, they do not assert.
"""
from __future__ import annotations

import json
import time


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _run(args) -> int:
    from ..bench import load
    from ..errors import InputError
    benches = load(args.names)     # only the areas of the names asked for
    if args.list or not args.names or any(n not in benches for n in args.names):
        # registers cluster_gpt3b_4x32 (layer above bench); only when asked for: it imports the whole
        # workload/runtime stack (~0.3 s), a third of a packet benchmark's process time
        from ..cluster import bench as _cluster_bench  # noqa: F401
    if args.list:
        for name in sorted(benches):
            doc = (benches[name].__doc__ or "").strip().splitlines()
            print(f"{name:<28} {doc[0] if doc else ''}")
        return 0
    names = args.names or sorted(benches)
    for n in names:
        if n not in benches:
            raise InputError("unknown benchmark", where="NAME", value=n,
                             accepted="one of " + ", ".join(sorted(benches)))
    results = {}
    for n in names:
        t0 = time.perf_counter()
        out = benches[n]()
        if not isinstance(out, dict):
            out = {"result": out}
        out.setdefault("bench_wall_s", round(time.perf_counter() - t0, 3))
        results[n] = out
        print(f"== {n}")
        w = max((len(k) for k in out), default=4)
        for k, v in out.items():
            if isinstance(v, (dict, list)):
                v = json.dumps(v, sort_keys=True)
            print(f"  {k:<{w}}  {_fmt(v)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("bench", help="run benchmarks and print their figures",
                              description="Run registered benchmarks (all by default) and print figures.")
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    p.set_defaults(func=_run)
