"""``netsim topo validate|show TOPOLOGY``: check a topology and print its summary.

TOPOLOGY is a .yaml/.graphml/HPCC topology.txt path or a builder expression
(``leaf_spine:leaves=4,spines=2,hosts_per_leaf=4``). Errors: one line, exit 2.
"""
from __future__ import annotations

import json


def _validate(args) -> int:
    from ..topology import load_topology, summary

    from ..topology.buildspec import check_endpoints_connected

    g = load_topology(args.topology)
    check_endpoints_connected(g, source=args.topology)   # a GPU/host that reaches no other is an error
    s = summary(g, bisection=False)
    kinds = ", ".join(f"{k}={v}" for k, v in s["node_kinds"].items())
    links = ", ".join(f"{k}={v['count']}" for k, v in s["link_kinds"].items())
    note = "" if s["connected"] else " (warning: not connected)"
    print(f"OK {args.topology}: {s['nodes']} nodes ({kinds}), {s['links']} links ({links}){note}")
    return 0


def _show(args) -> int:
    from ..topology import format_summary, load_topology, summary

    g = load_topology(args.topology)
    s = summary(g, bisection=not args.no_bisection)
    if args.json:
        def conv(o):
            if isinstance(o, dict):
                return {str(k): conv(v) for k, v in o.items()}
            return o
        print(json.dumps(conv(s), indent=2, sort_keys=True))
    else:
        print(format_summary(s))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("topo", help="validate or summarize a topology",
                              description="Check a topology against the graph contract, or print its summary.")
    sub = p.add_subparsers(dest="topo_command", metavar="ACTION")
    sub.required = True
    v = sub.add_parser("validate", help="check a topology; print OK and counts (exit 2 on error)")
    v.add_argument("topology", metavar="TOPOLOGY", help="YAML/GraphML/HPCC topology.txt file or builder expression")
    v.set_defaults(func=_validate)
    s = sub.add_parser("show", help="print counts by kind, link rates and bisection bandwidth")
    s.add_argument("topology", metavar="TOPOLOGY", help="YAML/GraphML/HPCC topology.txt file or builder expression")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.add_argument("--no-bisection", action="store_true", help="skip the max-flow bisection computation")
    s.set_defaults(func=_show)
