"""``netsim flows TOPOLOGY FLOWS --out DIR``: FCT traces from a flow list.

TOPOLOGY: YAML/GraphML/HPCC topology.txt or a builder expression. FLOWS: a CSV
(``src,dst,size_bytes,start_ns[,tag,cc,priority]``) or an HPCC ``flow.txt``.
Writes fct.csv, queues.csv, pfc.csv, cc.csv, summary.json (+ fct.txt and fct_nodes.csv with
``--hpcc-fct``), trace.json (unless ``--no-trace``) and Parquet copies of the
CSVs (with pyarrow) into DIR and prints a short result. Bad input: one line on
stderr, exit status 2. A failed (exit 2) or interrupted (SIGINT/SIGTERM, exit
130) run keeps every flow it finished in fct.csv and says so in summary.json.
"""
from __future__ import annotations

import csv
import os

from .args import seed_arg


def _percentile(xs: list, q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def _run(args) -> int:
    from ..flowfile import load_flows
    from ..simulate import check_network_params, finalize_outputs, run_flows
    from .simargs import cc_params_from_cli, parse_set_assignments
    from ..topology import load_topology
    from .args import check_backend_options, check_flow_ecn_args, check_input_file, check_out_dir

    check_input_file(args.topology, "TOPOLOGY", "a topology file (.yaml/.graphml/topology.txt) or a builder "
                     "expression", builder_ok=True)
    check_input_file(args.flows, "FLOWS", "a CSV flow file or an HPCC flow.txt", noun="flow file")
    check_out_dir(args.out)
    check_backend_options(args, command="flows")
    params = parse_set_assignments(args.set)
    check_network_params(args.backend, params)  # unknown --set key: fail before reading anything big
    cc_params = cc_params_from_cli(args.cc, args.cc_param, args.cc_params_file)  # the command line wins
    graph = load_topology(args.topology)
    check_network_params(args.backend, params, graph, source=args.topology)  # node attributes too
    flows = load_flows(args.flows, graph)
    check_flow_ecn_args(args, {f.cc for f in flows})     # ECN thresholds need a DCQCN flow on flow
    from ..interrupts import interrupt_signals
    with interrupt_signals():  # SIGINT/SIGTERM: outputs flushed, summary.json "interrupted", exit 130
        summary = run_flows(graph, flows, backend=args.backend, cc=args.cc, params=params, cc_params=cc_params,
                            seed=args.seed, out_dir=args.out, hpcc_fct=args.hpcc_fct, quiet=args.quiet,
                            fct=args.fct)
        finalize_outputs(args.out, graph, args.seed, trace=not args.no_trace)
    if not args.quiet:
        _print_line(summary, args.out, args.fct)
    status = summary.get("status", "complete")
    if status != "complete":   # flows lost: never a quiet exit 0 (the outputs above stay written)
        from ..errors import SimulationError
        raise SimulationError(f"{status}; see {args.out}/summary.json (e.g. --set max_timeouts, link rates)")
    return 0


def _print_line(summary: dict, out: str, fct: str = "per-flow") -> None:
    """The one summary line: flow counts, mean and p99 FCT (from ``fct.csv``, or the mean from
    ``fct_ops.csv`` with ``--fct per-op``), drops, pauses, wall time."""
    from ..units import format_time_ns
    fcts, mean = [], float("nan")
    if fct == "per-flow":
        with open(os.path.join(out, "fct.csv"), newline="") as fh:
            for row in csv.DictReader(fh):
                fcts.append(int(row["fct_ns"]))
        mean = sum(fcts) / len(fcts) if fcts else float("nan")
    elif fct == "per-op":         # the flow-weighted mean of the per-op means; no percentile without flows
        with open(os.path.join(out, "fct_ops.csv"), newline="") as fh:
            rows = [(int(r["flows"]), float(r["mean_fct_ns"])) for r in csv.DictReader(fh)]
        n = sum(k for k, _ in rows)
        mean = sum(k * m for k, m in rows) / n if n else float("nan")
    p99 = _percentile(fcts, 0.99)
    fmt = (lambda v: format_time_ns(v) if v == v else "n/a")
    print(f"flows {summary['flows']}  completed {summary['completed']}  mean FCT {fmt(mean)}  "
          f"p99 FCT {fmt(p99)}  drops {summary.get('drops', 0)}  PFC pauses {summary.get('pfc_pauses', 0)}  "
          f"wall {summary['wall_time_s']:.2f}s  -> {out}")


def register(subparsers) -> None:
    p = subparsers.add_parser("flows", help="simulate a flow list, write FCT/queue/PFC/CC traces",
                              description="Simulate the flows of FLOWS on TOPOLOGY and write traces into --out.")
    p.add_argument("topology", metavar="TOPOLOGY", help="YAML/GraphML/HPCC topology.txt or builder expression")
    p.add_argument("flows", metavar="FLOWS", help="CSV src,dst,size_bytes,start_ns[,tag,cc,priority] or HPCC flow.txt")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--backend", default="packet", help="packet (default), flow or analytic")
    p.add_argument("--cc", default="none", help="default congestion control (a flow's cc column wins)")
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed (ECN marking, spraying, ECMP hash)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a simulation default (see `netsim defaults`); per priority: NAME.P=VALUE")
    p.add_argument("--cc-param", action="append", default=[], metavar="[CC.]KEY=VALUE",
                   help="override a congestion-control parameter (bare key: the --cc algorithm)")
    p.add_argument("--cc-params-file", metavar="FILE",
                   help="YAML/JSON {cc: {key: value}} (or flat {key: value} for --cc); --cc-param wins")
    p.add_argument("--fct", default="per-flow", metavar="MODE",
                   help="flow records: per-flow (fct.csv, default), per-op (fct_ops.csv: one row per tag) or off")
    p.add_argument("--hpcc-fct", action="store_true",
                   help="also write HPCC ns-3's fct.txt and fct_nodes.csv (node id, HPCC address, name); any backend")
    p.add_argument("--no-trace", action="store_true", help="do not write trace.json (Chrome trace events)")
    p.add_argument("--fast-forward", default="off", metavar="on|off",
                   help="packet backend: skip steady states of the network (default off; tolerance: --set "
                        "fast_forward_tolerance=F; docs/packet.md, Fast-forward)")
    p.add_argument("--quiet", action="store_true", help="print nothing on success; no progress line")
    p.set_defaults(func=_run)
