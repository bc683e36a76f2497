"""``netsim defaults [--cc NAME]``: every default with its unit, meaning and source.

Without ``--cc``: the ``--set`` parameters of the packet network, of the
analytic and flow backends and of the host stack, the topology builders' and
collectives' defaults (each table when its module is installed), then the table
of every congestion-control algorithm.
With ``--cc NAME``: that algorithm only; for ``dcqcn`` also the values of each
preset, since its parameters default to ``None`` = "from the preset".
"""
from __future__ import annotations

import importlib


#: (module, ParamTable attribute, title) of every other table of defaults, in print order
TABLES = (
    ("netsim.network.params", "SIM_PARAMS", "packet network (--set KEY=VALUE)"),
    ("netsim.backends.analytic", "ANALYTIC_PARAMS",
     "analytic backend (--backend analytic --set KEY=VALUE; of the packet keys only mtu_bytes, header_bytes, "
     "roce_priority, tcp_priority and host_stack apply: the CLI rejects the others)"),
    ("netsim.backends.flow.settings", "FLOW_PARAMS", "flow backend (--backend flow --set KEY=VALUE)"),
    ("netsim.hoststack", "HOST_PARAMS", "host stack (--set host.KEY=VALUE)"),
    ("netsim.topology.builders", "TOPOLOGY_DEFAULTS", "topology builders (builder arguments, e.g. nic_rate_bps)"),
    ("netsim.collectives.engine", "COLLECTIVE_PARAMS", "collectives (Python API: netsim.collectives)"),
    ("netsim.collectives.protocol", "TUNING_PARAMS",
     "NCCL tuning model of algorithm: auto (Python API: netsim.collectives.protocol)"),
    ("netsim.collectives.nvls", "NVLS_PARAMS", "NVLS in-network all-reduce (algorithm: nvls)"),
)


def _tables() -> list:
    """``(title, ParamTable)`` of every table whose module is installed."""
    out = []
    for module, attr, title in TABLES:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError:
            continue
        table = getattr(mod, attr, None)
        if table is not None:
            out.append((title, table))
    return out


def format_table(table, *, title: str | None = None) -> str:
    """Aligned rows ``name  default  unit  meaning  [source]`` of a ParamTable."""
    rows = table.describe()
    lines = [f"# {title or table.title}"]
    if not rows:
        return lines[0] + "\n(no parameters)"
    w = max(len(r["name"]) for r in rows)
    wd = max(len(_fmt(r["default"])) for r in rows)
    wu = max(len(r["unit"]) for r in rows)
    for r in rows:
        lines.append(f"{r['name']:<{w}}  {_fmt(r['default']):<{wd}}  {r['unit']:<{wu}}  {r['doc']}"
                     f"  [source: {r['source']}]")
    return "\n".join(lines)


def _fmt(v) -> str:
    if v is None:
        return "(preset)"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _presets_table() -> str:
    from ..transport.cc.dcqcn import DEFAULT_PRESET, DEFAULT_PRESET_REASON, PRESETS
    names = list(PRESETS)
    keys = [k for k in PRESETS[names[0]] if not k.startswith("_")]
    w = max(len(k) for k in keys)
    lines = ["# dcqcn presets (rai/rhai/kmin/kmax scale with link rate / rate_scale_ref_bps when > 0)",
             f"{'key':<{w}}  " + "  ".join(f"{n:>12}" for n in names)]
    for k in keys:
        lines.append(f"{k:<{w}}  " + "  ".join(f"{_fmt(PRESETS[n][k]):>12}" for n in names))
    for n in names:
        lines.append(f"[{n}] {PRESETS[n]['_source']}")
    lines.append(f"default preset: {DEFAULT_PRESET} ({DEFAULT_PRESET_REASON})")
    return "\n".join(lines)


def describe_cc(name: str) -> str:
    from ..transport.cc.config import cc_class
    cls = cc_class(name)
    head = (f"{cls.name}: transport={cls.transport}, ecn_capable={'yes' if cls.ecn_capable else 'no'}"
            f" — {(cls.__doc__ or '').strip().splitlines()[0]}")
    out = [head, format_table(cls.PARAMS, title=f"cc {cls.name} (--cc-param [{cls.name}.]KEY=VALUE)")]
    if cls.name == "dcqcn":
        out.append(_presets_table())
    return "\n".join(out)


def run(args) -> int:
    from ..transport.cc import REGISTRY
    if args.cc:
        print(describe_cc(args.cc))
        return 0
    parts = [format_table(table, title=title) for title, table in _tables()]
    for name in sorted(REGISTRY):
        parts.append(describe_cc(name))
    print("\n\n".join(parts))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("defaults", help="list every default with its unit and source",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--cc", metavar="NAME", help="show one congestion-control algorithm only")
    p.set_defaults(func=run)
