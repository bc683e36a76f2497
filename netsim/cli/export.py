"""``netsim export chakra WORKLOAD --out DIR``: a workload as per-rank Chakra ET files.

Any workload ``netsim run`` takes (a netsim YAML, a Chakra trace, a SimAI or
AICB file) becomes ``DIR/NAME.<rank>.et`` plus ``DIR/comm_group.json``
(:mod:`netsim.importers.chakra_write`), one iteration, so ASTRA-sim can run
the same job; ``netsim run TOPOLOGY DIR`` reads it back.  ``netsim export
hpcc-flows RUN_DIR --out FILE`` writes a run's flows (``fct.csv``) as an
HPCC/ns-3 ``flow.txt`` (:mod:`netsim.importers.hpcc_write`).  Bad input: one
line on stderr, exit status 2.
"""
from __future__ import annotations

from .args import seed_arg

from ..params import parse_assignments


def _chakra(args) -> int:
    from ..importers.chakra_write import workload_ops, write_chakra
    from .args import check_out_dir
    check_out_dir(args.out)
    graph = None
    if args.topology:
        from ..topology import load_topology
        graph = load_topology(args.topology)
    overrides = parse_assignments(args.workload_set, what="--workload-set")
    name, world, ops = workload_ops(args.workload, graph, overrides=overrides,
                                    workload_format=args.workload_format, seed=args.seed)
    paths = write_chakra(ops, world, args.out, args.name or name)
    if not args.quiet:
        print(f"{name}: {len(ops)} ops on {world} ranks -> {args.out}/{args.name or name}.{{0..{world - 1}}}.et, "
              f"comm_group.json")
    return 0 if paths else 2


def _hpcc(args) -> int:
    from ..importers.hpcc_write import write_hpcc_flows
    from .args import check_out_file
    from ..analysis.io import check_run_dir
    from .args import warn_if_incomplete
    check_out_file(args.out)
    warn_if_incomplete("export", check_run_dir(args.run_dir),
                       "flows still in flight are not in fct.csv, so the flow.txt is not the whole run")
    n = write_hpcc_flows(args.run_dir, args.out, offset_s=args.offset_s)
    if not args.quiet:
        print(f"{n} flows -> {args.out}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("export", help="write a workload or a run's flows in another tool's format",
                              description=__doc__)
    sub = p.add_subparsers(dest="format", metavar="FORMAT")
    sub.required = True
    c = sub.add_parser("chakra", help="per-rank Chakra execution traces (ASTRA-sim)")
    c.add_argument("workload", metavar="WORKLOAD", help="netsim workload YAML, or any imported format")
    c.add_argument("--out", required=True, metavar="DIR", help="output directory")
    c.add_argument("--topology", metavar="TOPOLOGY",
                   help="place ranks on this topology's GPUs (needed for nic_aware, placement.gpus, balanced)")
    c.add_argument("--name", metavar="NAME", help="file-name prefix (default: the workload's name)")
    c.add_argument("--workload-format", metavar="FORMAT", help="force the workload format")
    c.add_argument("--workload-set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override a workload field (repeatable)")
    c.add_argument("--seed", type=seed_arg, default=0, metavar="N", help="random seed (MoE routing; default 0)")
    c.add_argument("--quiet", action="store_true", help="print nothing on success")
    c.set_defaults(func=_chakra)
    h = sub.add_parser("hpcc-flows", help="a run's flows as an HPCC/ns-3 flow.txt")
    h.add_argument("run_dir", metavar="RUN_DIR", help="output directory of netsim run/flows (its fct.csv)")
    h.add_argument("--out", required=True, metavar="FILE", help="flow.txt to write")
    h.add_argument("--offset-s", type=float, default=0.0, metavar="S",
                   help="seconds added to every start time (default 0; HPCC's examples start flows at 2 s)")
    h.add_argument("--quiet", action="store_true", help="print nothing on success")
    h.set_defaults(func=_hpcc)
