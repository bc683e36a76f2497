"""Builder expressions: ``name:key=value,...`` and ``builder:``/``args:`` documents.

:func:`build` calls a builder of :mod:`.builders` with checked arguments; a
bad argument is an :class:`~netsim.errors.InputError` naming the builder, the
argument at fault (:func:`_blamed_argument`) and its value. Lists are written
``a|b``; values parse as int, float, bool or a unit string.

Before a builder runs, the node count its arguments imply
(:func:`estimated_nodes`) must not exceed :data:`MAX_BUILDER_NODES`; after it
runs, every GPU and host must reach every other (:func:`check_endpoints_connected`).
"""
from __future__ import annotations

from typing import Any

import networkx as nx

from ..errors import InputError, TopologyError
from ..params import Param
from ..units import UnitError, parse_time_exact_ns
from . import builders as _b
from .schema import validate


def parse_value(text: str):
    """Parse one expression value: bool, int, float, list (``a|b``) or string (units kept).

    >>> parse_value("4"), parse_value("0.5"), parse_value("yes"), parse_value("100Gbps")
    (4, 0.5, True, '100Gbps')
    >>> parse_value("infiniband|roce")
    ['infiniband', 'roce']
    """
    text = text.strip()
    if "|" in text:
        return [parse_value(t) for t in text.split("|")]
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


#: largest topology a builder may build, in nodes: 10^6 nodes (1/8 of them GPUs in a DGX-like cluster,
#: i.e. over 100k GPUs) already take minutes and gigabytes to build and route in networkx; larger
#: arguments are a typo and would otherwise spin before any error (netsim choice)
MAX_BUILDER_NODES = 1_000_000
#: largest value of one count argument (keeps the node estimate itself cheap; netsim choice)
MAX_COUNT = MAX_BUILDER_NODES


def estimated_nodes(name: str, args: dict) -> int:
    """An upper estimate of the nodes builder ``name`` creates with ``args`` (defaults fill the rest), computed
    from the builders' documented structure without building anything.

    >>> estimated_nodes("leaf_spine", {"leaves": 4, "spines": 2, "hosts_per_leaf": 4})
    22
    >>> estimated_nodes("fat_tree", {"k": 4})
    36
    """
    import inspect
    a = {k: p.default for k, p in inspect.signature(_b.BUILDERS[name]).parameters.items()}
    a.update(args)

    def count(key, default=1):
        v = a.get(key)
        return v if type(v) is int and v > 0 else default

    def server(gpus, per_nic):     # GPUs + NICs + their PCIe switches + NVSwitch + root complex
        return gpus + 2 * -(-gpus // max(1, per_nic)) + 2
    if name == "dumbbell":
        return count("n_left") + count("n_right") + 2
    if name == "leaf_spine":
        return count("leaves") * (count("hosts_per_leaf") + 1) + count("spines")
    if name == "fat_tree":
        k = count("k")
        return k ** 3 // 4 + 5 * k * k // 4
    if name == "gpu_clos3":
        from .clos3 import clos3_nodes
        return clos3_nodes({k: count(k) for k in ("servers", "gpus_per_server", "gpus_per_nic", "servers_per_pod",
                                                  "servers_per_leaf", "spines_per_pod", "cores_per_plane")})
    if name == "gpu_server":
        return server(count("gpus"), count("gpus_per_nic"))
    per = server(count("gpus_per_server"), count("gpus_per_nic"))
    servers = count("servers") if name == "gpu_cluster" else count("servers_a") + count("servers_b")
    nics = -(-count("gpus_per_server") // max(1, count("gpus_per_nic")))
    return servers * (per + nics) + count("spines", 0)   # a leaf/rail switch per NIC at most


def check_endpoints_connected(graph: nx.Graph, source: str | None = None) -> None:
    """Every GPU and host of ``graph`` must reach every other by a route netsim takes (else :class:`TopologyError`).

    Routes never transit a GPU or host unless the graph has ``gpu_forwarding``
    (:mod:`.routing`), so two GPUs joined only through a third do not reach
    each other. Checked for every pair up to :data:`_ALL_PAIRS_UP_TO`
    endpoints, above that against the first one.

    >>> g = nx.Graph(); g.add_nodes_from([("a", {"kind": "host"}), ("b", {"kind": "host"})])
    >>> check_endpoints_connected(g)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: topology: not connected: ...
    """
    ends = [n for n, k in graph.nodes(data="kind") if k in ("gpu", "host")]
    if len(ends) < 2:
        return
    from .routing import relay_kinds
    if relay_kinds(graph):
        reach = nx.node_connected_component(graph, ends[0])
        cut = [n for n in ends if n not in reach]
        if cut:
            raise TopologyError(f"not connected: {len(cut)} of {len(ends)} GPUs/hosts cannot reach {ends[0]}",
                                source=source or "topology", value=str(cut[0]),
                                accepted="a topology in which every GPU/host reaches every other")
        return
    end_set = set(ends)
    comp = {}
    for i, c in enumerate(nx.connected_components(graph.subgraph(n for n in graph if n not in end_set))):
        comp.update((n, i) for n in c)
    via = {e: {comp[m] for m in graph[e] if m in comp} for e in ends}

    def reaches(a, b) -> bool:
        return bool(via[a] & via[b]) or graph.has_edge(a, b)
    firsts = ends if len(ends) <= _ALL_PAIRS_UP_TO else ends[:1]
    for i, a in enumerate(firsts):
        for b in ends[i + 1:]:
            if not reaches(a, b):
                raise TopologyError(f"not connected: {b} cannot reach {a} (routes never pass through a GPU or "
                                    "host)", source=source or "topology", value=str(b),
                                    accepted="a switch/NIC path between every two GPUs/hosts, or gpu_forwarding: "
                                             "true for GPUs linked to each other")


#: endpoints up to which every pair is checked (above: each against the first)
_ALL_PAIRS_UP_TO = 512


def _check_counts(name: str, args: dict, source: str | None) -> None:
    """Arguments whose default is a count (a plain int, not a ``*_ns`` time or an offset) must be ints >= 1."""
    import inspect
    params = inspect.signature(_b.BUILDERS[name]).parameters
    for key, value in args.items():
        default = params[key].default
        if type(default) is not int or key.endswith("_ns") or key.endswith("_offset"):
            continue
        if type(value) is not int or not 1 <= value <= MAX_COUNT:
            raise InputError(f"must be a whole number in 1..{MAX_COUNT}", source=source,
                             where=f"builder {name}, argument {key}", value=value,
                             accepted=f"a count such as {default}")
    _check_quantities(name, args, source)
    nodes = estimated_nodes(name, args)
    if nodes > MAX_BUILDER_NODES:
        raise InputError(f"too large: about {nodes} nodes", source=source, where=f"builder {name}", value=args,
                         accepted=f"at most {MAX_BUILDER_NODES} nodes (netsim.topology.buildspec.MAX_BUILDER_NODES)")


#: how a builder argument's name ending says what it holds (a rate must be > 0, a time >= 0)
_QUANTITIES = {"_bps": Param("rate_bps", 1e9, "rate", "a builder's link rate", "builder argument"),
               "_ns": Param("delay_ns", 0, "time", "a builder's link delay", "builder argument")}


def _check_quantities(name: str, args: dict, source: str | None) -> None:
    """Rate (``*_bps``) and time (``*_ns``) arguments, lists included, are checked whether or not the
    builder uses them here (``gpu_server`` keeps ``nic_rate_bps`` for a cluster link it does not build)."""
    for key, value in args.items():
        p = next((q for end, q in _QUANTITIES.items() if key.endswith(end)), None)
        if p is None or value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if key.endswith("_ns") and not isinstance(v, bool):   # kept to the ps as the builder keeps it
                try:
                    exact = parse_time_exact_ns(v)
                except (UnitError, TypeError) as exc:
                    raise InputError(str(exc).split(": expected")[0], source=source,
                                     where=f"builder {name}, argument {key}", value=v,
                                     accepted=p.accepted() + " (kept to 1 ps)") from None
                v = 0 if 0 < exact < 1 else v     # sub-ns: kept by the builder, refused by a whole-ns Param
            p.parse(v, source=source, where=f"builder {name}, argument {key}")


def _blamed_argument(args: dict, message: str) -> str | None:
    """The one argument a builder's error ``message`` is about, else None.

    The only argument given; else the one the message starts with; else the
    only one named in it; else the only one whose value (or a list element)
    it quotes.

    >>> _blamed_argument({"servers": 2, "fabric": "torus"}, "fabric must be leaf_spine or rail")
    'fabric'
    >>> _blamed_argument({"servers": 2, "nic_rates_bps": ["1Gbps", "2Gbsp"]}, "bad rate '2Gbsp': unknown unit")
    'nic_rates_bps'
    """
    if len(args) == 1:
        return next(iter(args))
    import re
    first = [k for k in args if re.match(rf"{re.escape(k)}(?![A-Za-z0-9_])", message)]
    if len(first) == 1:
        return first[0]
    named = [k for k in args if re.search(rf"(?<![A-Za-z0-9_]){re.escape(k)}(?![A-Za-z0-9_])", message)]
    if len(named) == 1:
        return named[0]
    def quotes(x) -> bool:
        if isinstance(x, str):
            return repr(x) in message
        return re.search(rf"(?<![\w.]){re.escape(repr(x))}(?![\w.])", message) is not None

    quoted = [k for k, v in args.items() if any(quotes(x) for x in (v if isinstance(v, (list, tuple)) else [v]))]
    return quoted[0] if len(quoted) == 1 else None


def build(name: str, args: dict | None = None, *, source: str | None = None) -> nx.Graph:
    """Call builder ``name`` with ``args``; unknown names/arguments and bad values are InputError."""
    if name not in _b.BUILDERS:
        raise InputError("unknown builder", source=source, where="builder", value=name,
                         accepted="one of " + ", ".join(_b.BUILDERS))
    args = dict(args or {})
    accepted = _b.builder_args(name)
    for key in args:
        if key not in accepted:
            raise InputError(f"unknown argument of builder {name}", source=source, where=f"builder {name}",
                             value=key, accepted="one of " + ", ".join(accepted))
    _check_counts(name, args, source)
    try:
        graph = _b.BUILDERS[name](**args)
    except (UnitError, ValueError, TypeError, ZeroDivisionError) as exc:
        key = _blamed_argument(args, str(exc))
        raise InputError(f"invalid {'argument' if key else 'arguments'}: {exc}", source=source,
                         where=f"builder {name}" + (f", argument {key}" if key else ""),
                         value=args[key] if key else args) from None
    graph = validate(graph, source=source or f"{name}(...)")
    check_endpoints_connected(graph, source=source or f"{name}(...)")
    return graph


def build_expression(expr: str, *, source: str | None = None) -> nx.Graph:
    """Build ``"name:key=value,key=value"``.

    >>> g = build_expression("leaf_spine:leaves=2,spines=2,hosts_per_leaf=2,host_rate_bps=25Gbps")
    >>> g.number_of_nodes(), g.edges["h0", "leaf0"]["rate_bps"]
    (8, 25000000000.0)
    """
    name, _, rest = expr.partition(":")
    args: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        if "=" not in item:
            raise InputError("expected key=value in builder expression", source=source or expr,
                             where=f"builder {name.strip()}", value=item)
        k, v = item.split("=", 1)
        if k.strip() in args:
            raise InputError("argument given twice", source=source or expr, where=f"builder {name.strip()}",
                             value=k.strip(), accepted="each argument once")
        args[k.strip()] = parse_value(v)
    return build(name.strip(), args, source=source or expr)
