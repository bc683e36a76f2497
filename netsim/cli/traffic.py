"""``netsim traffic CDF --load L --duration T --out FLOWS.csv``: background traffic as a flow file.

CDF: ``websearch``, ``fb_hadoop`` (shipped) or a file of ``size cumulative``
lines (HPCC's format, cumulative in percent or as a fraction). Hosts: every
GPU/host of ``--topology`` (default), or ``--hosts a,b,c``. Line rate: ``--rate``
(one rate for every host), else each host's only link in ``--topology``. The
flow file (``src,dst,size_bytes,start_ns,tag``) goes to ``netsim flows`` as is.
Prints the flows written, the expected offered load and the load realised.
"""
from __future__ import annotations

from .args import seed_arg


def _hosts_and_rates(args):
    from ..errors import InputError
    from ..topology import load_topology
    from ..topology.query import endpoints
    graph = load_topology(args.topology) if args.topology else None
    if args.hosts and args.hosts != "all":
        hosts = tuple(h.strip() for h in args.hosts.split(",") if h.strip())
        if graph is not None:
            for h in hosts:
                if h not in graph or graph.nodes[h].get("kind") not in ("gpu", "host"):
                    raise InputError("not a GPU or host of the topology", where="--hosts", value=h,
                                     accepted=f"endpoints of {args.topology}")
    elif graph is not None:
        hosts = tuple(endpoints(graph))
    else:
        raise InputError("give --hosts a,b,... or --topology", where="--hosts", value=args.hosts)
    if args.rate:
        rate = _FLAG_PARAMS["--rate"].parse(args.rate, where="--rate")
        return hosts, tuple(float(rate) for _ in hosts)
    if graph is None:
        raise InputError("give --rate (e.g. 100Gbps) or --topology to read each host's line rate", where="--rate",
                         value=None)
    rates = []
    for h in hosts:
        links = list(graph.edges(h, data="rate_bps"))
        if len(links) != 1:
            raise InputError("a host's line rate is read from its only link; this one has several", where="--rate",
                             value=h, accepted="--rate RATE for hosts with several links (e.g. GPUs)")
        from ..network.fabric import FABRIC_KINDS
        kind = graph.edges[links[0][0], links[0][1]].get("kind")
        if kind not in FABRIC_KINDS:   # a GPU behind its NIC: PCIe/NVLink is not the line rate
            raise InputError(f"a host's line rate is read from its only link, a network link; this one is {kind}",
                             where="--rate", value=h,
                             accepted="--rate RATE for GPUs behind a NIC (the NIC's rate, shared by its GPUs)")
        rates.append(float(links[0][2]))
    return hosts, tuple(rates)


def _flag_params() -> dict:
    """The quantities of the flags, checked by :meth:`netsim.params.Param.parse` (finite, bounded)."""
    from ..params import Param
    return {"--rate": Param("rate_bps", 100e9, "rate", "line rate of every host", "--rate"),
            "--duration": Param("duration_ns", 1, "time", "window length", "--duration", minimum=1),
            "--start": Param("start_ns", 0, "time", "window start", "--start")}


_FLAG_PARAMS = _flag_params()


def _run(args) -> int:
    from ..traffic import BackgroundSpec, generate_background, load_cdf, write_flow_csv
    from .args import check_out_file
    check_out_file(args.out)   # a directory or a missing folder: one line naming --out, before any work
    hosts, rates = _hosts_and_rates(args)
    duration_ns = _FLAG_PARAMS["--duration"].parse(args.duration, where="--duration")
    start_ns = _FLAG_PARAMS["--start"].parse(args.start, where="--start")
    spec = BackgroundSpec(load_cdf(args.cdf), load=args.load, hosts=hosts, host_rate_bps=rates,
                          duration_ns=duration_ns, start_ns=start_ns, seed=args.seed, tag=args.tag)
    flows = generate_background(spec)
    n = write_flow_csv(flows, args.out)
    realised = float(flows.size_bytes.sum()) * 8 / (sum(rates) * spec.duration_ns * 1e-9)
    print(f"{n} flows from {len(hosts)} hosts over {args.duration} ({spec.cdf.name}, mean {spec.cdf.mean_bytes:,.0f} B): "
          f"offered load {spec.load:.4g} expected, {realised:.4g} drawn -> {args.out}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("traffic", help="generate background traffic (Poisson arrivals, sizes from a CDF)",
                              description=__doc__)
    p.add_argument("cdf", metavar="CDF", help="websearch, fb_hadoop, or a CDF file ('size cumulative' lines)")
    p.add_argument("--load", type=float, required=True, help="offered load per host, fraction of its line rate (0, 1]")
    p.add_argument("--duration", required=True, help="window length, e.g. 10ms")
    p.add_argument("--out", required=True, metavar="FLOWS.csv", help="flow CSV to write")
    p.add_argument("--topology", default=None, help="topology whose GPUs/hosts send (and whose links give rates)")
    p.add_argument("--hosts", default=None, help="comma-separated host names, or 'all' (default with --topology)")
    p.add_argument("--rate", default=None, help="line rate of every host, e.g. 100Gbps (default: from --topology)")
    p.add_argument("--start", default="0ns", help="window start (default 0ns)")
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed (each host has its own stream)")
    p.add_argument("--tag", default="background", help="tag written on every flow (default 'background')")
    p.set_defaults(func=_run)
