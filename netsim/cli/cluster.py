"""``netsim run TOPOLOGY CLUSTER.yaml --out DIR``: several jobs on one fabric (docs/cluster.md).

Chosen by :mod:`netsim.cli.run` when WORKLOAD is a cluster file (a YAML file
with a top-level ``jobs:`` key). Prints one line per job (iteration time, its
slowdown against the job alone) and the background's median FCT. The flags a
cluster file already states per job (``--iterations``, ``--workload-set``,
``--workload-format``, the what-if flags, ``--variability``,
``--overlap-slowdown``) are errors here, and so are ``--repeat`` and ``--memo on``
(a job's collectives share the fabric with the other jobs, so none is replayed).
"""
from __future__ import annotations

from ..errors import InputError
from ..network.params import parse_override
from ..params import parse_assignments

#: run flags a cluster file states per job (flag -> args attribute)
_PER_JOB = {"--workload-set": "workload_set", "--workload-format": "workload_format",
            "--inject-delay": "inject_delay", "--straggler": "straggler", "--degrade-link": "degrade_link",
            "--fail-link": "fail_link", "--variability": "variability", "--overlap-slowdown": "overlap_slowdown"}


def format_cluster(summary: dict) -> str:
    """The lines ``netsim run`` prints for a cluster."""
    lines = [f"cluster {summary['cluster']} on {summary['topology']} ({summary['backend']}, cc={summary['cc']}): "
             f"{len(summary['jobs'])} jobs"]
    for name, j in summary["jobs"].items():
        slow = f", slowdown {j['slowdown']:.4f} vs alone" if "slowdown" in j else ""
        lines.append(f"  {name}: {j['workload']} on {len(j['gpus'])} GPUs ({j['placement']}), iteration time "
                     f"{j['iteration_time_s'] * 1e3:.3f} ms (mean of {j['iterations']}){slow}")
    bg = summary.get("background")
    if bg is not None and bg.get("flows"):
        lines.append(f"  background: {bg['flows']} flows ({bg['cdf']}, load {bg['load']:g}), "
                     f"median FCT {bg['fct_median_ns'] / 1e3:.3f} us")
    return "\n".join(lines)


def run_cluster_cli(args) -> int:
    """The ``netsim run`` body for a cluster file (args already checked for TOPOLOGY, --out, backend options)."""
    from ..cluster import run_cluster
    from ..runfiles import finalize_outputs
    from .simargs import cc_params_from_cli
    for flag, attr in _PER_JOB.items():
        if getattr(args, attr, None):
            raise InputError("a cluster file states this per job", where=flag, value=getattr(args, attr),
                             accepted=f"no {flag} with a cluster file (docs/cluster.md)")
    if getattr(args, "repeat", 1) != 1:
        raise InputError("--repeat is not supported for cluster files", where="--repeat", value=args.repeat,
                         accepted="--repeat 1 (run the cluster file once per seed with --seed)")
    if getattr(args, "fct", "per-flow") != "per-flow":
        raise InputError("cluster runs write per-flow fct.csv (with its job column) only", where="--fct",
                         value=args.fct, accepted="--fct per-flow with a cluster file")
    if args.iterations != 1:
        raise InputError("a cluster file states each job's iterations", where="--iterations", value=args.iterations,
                         accepted="iterations: N in each job of the cluster file")
    params = dict(parse_assignments(args.set, what="--set"))
    if "memo" in params and parse_override("memo", params["memo"], where="--set memo"):
        raise InputError("a cluster's jobs share the fabric, so their collectives are always simulated",
                         where="--memo" if getattr(args, "memo", "off") == "on" else "--set memo",
                         value=params["memo"], accepted="--memo off with a cluster file")
    cc_params = cc_params_from_cli(args.cc, args.cc_param, args.cc_params_file)
    from ..interrupts import interrupt_signals
    with interrupt_signals():
        summary = run_cluster(args.topology, args.workload, backend=args.backend, cc=args.cc, params=params,
                              cc_params=cc_params, seed=args.seed, out_dir=args.out, cache_dir=args.cache,
                              alone=not args.no_alone, allow_oom=args.allow_oom,
                              progress=None if not args.quiet else False)
        finalize_outputs(args.out, args.topology, args.seed, trace=not args.no_trace)
    if not args.quiet:
        print(format_cluster(summary))
        print(f"wrote {args.out}/")
    return 0
