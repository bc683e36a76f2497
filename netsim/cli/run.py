"""``netsim run TOPOLOGY WORKLOAD --out DIR``: simulate training iterations.

Prints the iteration time and its breakdown; writes summary.json, ops.csv,
fct.csv, traffic_matrix.csv, message_sizes.csv (docs/run.md), trace.json (unless
``--no-trace``) and Parquet copies of the CSVs (with pyarrow).  Bad input: one
line on stderr, exit status 2. A run that fails (exit 2) or is interrupted
(SIGINT/SIGTERM, exit 130) keeps every flow and op it finished in the CSVs and
says so in summary.json (``status``, ``sim_time_ns``; :mod:`netsim.runfiles`).
"""
from __future__ import annotations

from .args import seed_arg

from ..errors import InputError
from ..params import parse_assignments


def format_result(summary: dict) -> str:
    """The lines ``netsim run`` prints."""
    t = summary["iteration_time_s"]
    lines = [f"{summary['workload']} on {summary['topology']} ({summary['backend']}, cc={summary['cc']}): "
             f"iteration time {t * 1e3:.3f} ms (mean of {summary['iterations']})"
             + (f", {summary['samples_per_s']:.2f} samples/s" if summary["samples_per_s"] is not None else "")]
    from ..runtime.breakdown import LABELS
    parts = []
    for k, v in summary["breakdown_s"].items():
        if v > 0:
            k = LABELS.get(k, k)
            parts.append(f"{k} {v * 1e3:.3f} ms ({100 * v / t:.1f}%)" if t else f"{k} {v * 1e3:.3f} ms")
    lines.append("breakdown: " + ", ".join(parts))
    if summary["apnet_iteration_time_s"] is None:      # an imported job: no model for the formula
        return "\n".join(lines)
    lines.append(f"APNet'24 formula (as published, FLOPs split evenly over GPUs): "
                 f"{summary['apnet_iteration_time_s'] * 1e3:.3f} ms; stage-aware variant (slowest stage x m, "
                 f"logits on the last stage): {summary['apnet_stage_aware_iteration_time_s'] * 1e3:.3f} ms")
    return "\n".join(lines)


def _check_cc_param_applies(cc: str, items) -> None:
    """Every flow of a training run uses ``--cc``: a ``--cc-param CC.KEY=V`` of another algorithm is an error.

    (``netsim flows`` differs: a flow file's ``cc`` column may pick any algorithm per row. A
    ``--cc-params-file`` may hold several algorithms' settings and is left as it is.)
    """
    from .simargs import parse_cc_assignments
    for name in parse_cc_assignments(items, cc):
        if name != cc:
            item = next(x for x in items if str(x).split("=", 1)[0].partition(".")[0] == name)
            raise InputError(f"a parameter of {name}, which no flow of this run uses (every flow runs --cc {cc})",
                             where="--cc-param", value=item,
                             accepted=(f"{cc}.KEY=VALUE or KEY=VALUE" if cc != "none" else "no --cc-param")
                             + f", or --cc {name}")


def _run(args) -> int:
    from ..runtime import run_training
    from ..runfiles import finalize_outputs
    from .simargs import cc_params_from_cli
    from .args import check_backend_options, check_input_file, check_out_dir

    check_input_file(args.topology, "TOPOLOGY", "a topology file (.yaml/.graphml/topology.txt) or a builder "
                     "expression", builder_ok=True)
    from ..cluster import is_cluster_file
    if is_cluster_file(args.workload):          # several jobs on one fabric (docs/cluster.md)
        check_out_dir(args.out)
        check_backend_options(args, command="run")
        from .cluster import run_cluster_cli
        return run_cluster_cli(args)
    if args.cache or args.no_alone:
        raise InputError("only a cluster file runs its jobs alone", where="--cache" if args.cache else "--no-alone",
                         value=args.workload, accepted="a cluster file (a YAML file with jobs:, docs/cluster.md)")
    from ..importers import detect_format
    if (args.workload_format or detect_format(args.workload)) != "chakra":  # Chakra: a folder or a file prefix
        check_input_file(args.workload, "WORKLOAD", "a workload YAML file (see workloads/), a SimAI/AICB workload "
                         "file, or a Chakra ET folder or prefix (docs/formats.md)", noun="workload file")
    check_out_dir(args.out)
    check_backend_options(args, command="run")

    params = dict(parse_assignments(args.set, what="--set"))
    cc_params = cc_params_from_cli(args.cc, args.cc_param, args.cc_params_file)  # the command line wins
    _check_cc_param_applies(args.cc, args.cc_param)
    overrides = parse_assignments(args.workload_set, what="--workload-set")
    whatif = None
    if args.inject_delay or args.straggler or args.degrade_link or args.fail_link:
        from ..whatif import WhatIf
        whatif = WhatIf.from_cli(inject_delay=args.inject_delay, straggler=args.straggler,
                                 degrade_link=args.degrade_link, fail_link=args.fail_link)
    effects = {"variability": parse_assignments(args.variability, what="--variability") or None,
               "overlap_slowdown": args.overlap_slowdown}
    if args.repeat != 1:
        return _run_repeats(args, params, cc_params, overrides, whatif, effects)
    from ..interrupts import interrupt_signals
    with interrupt_signals():  # SIGINT/SIGTERM: outputs flushed, summary.json "interrupted", exit 130
        summary = run_training(args.topology, args.workload, backend=args.backend, cc=args.cc, params=params,
                               cc_params=cc_params, seed=args.seed, iterations=args.iterations, out_dir=args.out,
                               workload_overrides=overrides, progress=None if not args.quiet else False,
                               whatif=whatif, allow_oom=args.allow_oom, workload_format=args.workload_format,
                               fct=args.fct, **effects)
        finalize_outputs(args.out, args.topology, args.seed, trace=not args.no_trace)  # trace.json, Parquet
    if not args.quiet:
        import os
        written = sorted(f for f in os.listdir(args.out) if f.endswith((".csv", ".json", ".parquet", ".txt")))
        print(format_result(summary))
        print(f"wrote {args.out}/{{{','.join(written)}}}")
    return 0


def _run_repeats(args, params, cc_params, overrides, whatif, effects) -> int:
    """``--repeat N``: N runs with seeds SEED..SEED+N-1 and their distribution (:mod:`netsim.runtime.repeat`)."""
    from ..interrupts import interrupt_signals
    from ..runtime.repeat import run_repeats
    from ..runfiles import finalize_outputs

    def after(sub, seed):
        finalize_outputs(sub, args.topology, seed, trace=not args.no_trace)
    with interrupt_signals():
        out = run_repeats(args.topology, args.workload, repeats=args.repeat, seed=args.seed, out_dir=args.out,
                          after_run=after, backend=args.backend, cc=args.cc, params=params, cc_params=cc_params,
                          iterations=args.iterations, workload_overrides=overrides,
                          progress=None if not args.quiet else False, whatif=whatif, allow_oom=args.allow_oom,
                          workload_format=args.workload_format, fct=args.fct, **effects)
    if not args.quiet:
        d = out["distribution_s"]
        print(f"{out['workload']} on {out['topology']} ({out['backend']}, cc={out['cc']}), {out['repeats']} repeats "
              f"(seeds {out['seeds'][0]}..{out['seeds'][-1]}), {d['n']} iteration times: "
              f"mean {d['mean'] * 1e3:.3f} ms, "
              f"std {d['std'] * 1e3:.3f} ms, p50 {d['p50'] * 1e3:.3f} ms, p95 {d['p95'] * 1e3:.3f} ms, "
              f"p99 {d['p99'] * 1e3:.3f} ms")
        print(f"wrote {args.out}/{{summary.json,repeats.csv,repeats.png,repeat_000..{out['repeats'] - 1:03d}/}}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="simulate training iterations of a workload on a topology",
                              description="Simulate training iterations (DP/TP/PP) of WORKLOAD on TOPOLOGY and "
                                          "report the iteration time, its breakdown and traces.")
    p.add_argument("topology", metavar="TOPOLOGY", help="topology file or builder expression")
    p.add_argument("workload", metavar="WORKLOAD",
                   help="workload YAML file (see workloads/), a Chakra trace / SimAI / AICB file (docs/formats.md), "
                        "or a cluster file of several jobs (docs/cluster.md)")
    p.add_argument("--workload-format", metavar="FORMAT",
                   help="force the workload format instead of detecting it (docs/formats.md)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--backend", default="packet", help="packet (default), flow or analytic")
    p.add_argument("--cc", default="none", help="congestion control (none, dcqcn, cubic, dctcp, ...)")
    p.add_argument("--iterations", type=int, default=1, metavar="N", help="iterations to simulate (default 1)")
    p.add_argument("--seed", type=seed_arg, default=0, metavar="N", help="random seed (default 0)")
    p.add_argument("--set", action="append", default=[], metavar="K=V", help="network parameter (repeatable)")
    p.add_argument("--cc-param", action="append", default=[], metavar="K=V",
                   help="congestion-control parameter, K=V for --cc or CC.K=V (repeatable)")
    p.add_argument("--cc-params-file", metavar="FILE",
                   help="YAML/JSON {cc: {key: value}} (or flat {key: value} for --cc); --cc-param wins")
    p.add_argument("--no-trace", action="store_true", help="do not write trace.json (Chrome trace events)")
    p.add_argument("--fct", default="per-flow", metavar="MODE",
                   help="flow records: per-flow (fct.csv, default), per-op (fct_ops.csv: one row per op and step; "
                        "for very large runs) or off")
    p.add_argument("--workload-set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override a workload field, e.g. parallelism.dp=4 (repeatable)")
    p.add_argument("--inject-delay", action="append", default=[], metavar="COLL[@GROUP]=DUR",
                   help="what-if: extra latency before every matching collective, e.g. allreduce@dp=2ms")
    p.add_argument("--straggler", action="append", default=[], metavar="RANK=FACTOR",
                   help="what-if: rank RANK's compute takes FACTOR times as long")
    p.add_argument("--degrade-link", action="append", default=[], metavar="A:B=FACTOR@TIME",
                   help="what-if: link A-B runs at FACTOR x its rate from TIME on")
    p.add_argument("--fail-link", action="append", default=[], metavar="A:B@TIME",
                   help="what-if: link A-B fails at TIME (traffic reroutes)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run N times with seeds SEED..SEED+N-1 and report the iteration-time distribution "
                        "(summary.json distribution_s, repeats.csv, repeats.png; default 1)")
    p.add_argument("--variability", action="append", default=[], metavar="K=V",
                   help="compute variability, as the workload's variability: section, e.g. jitter=lognormal, "
                        "jitter_cv=0.05, gpu_cv=0.08, straggler_rate=0.001 (repeatable; docs/workloads.md)")
    p.add_argument("--overlap-slowdown", metavar="F",
                   help="compute overlapping communication on its GPU for x takes F*x longer (overlap.slowdown; "
                        "default: the workload's, else 0)")
    p.add_argument("--allow-oom", action="store_true",
                   help="run a configuration that does not fit in GPU memory (summary.json memory.stages says where)")
    p.add_argument("--cache", metavar="DIR", help="cluster files: folder of cached alone-runs (default OUT/alone)")
    p.add_argument("--no-alone", action="store_true", help="cluster files: do not run each job alone (no slowdown)")
    p.add_argument("--fast-forward", default="off", metavar="on|off",
                   help="packet backend: skip steady states of the network (default off; tolerance: --set "
                        "fast_forward_tolerance=F; docs/packet.md, Fast-forward)")
    p.add_argument("--memo", default="off", metavar="on|off",
                   help="packet backend: replay a collective repeated from an empty network from its stored run, "
                        "exactly (default off; not with --fast-forward on; docs/packet.md, Exact memoisation)")
    p.add_argument("--quiet", action="store_true", help="print nothing on success; no progress line")
    p.set_defaults(func=_run)
