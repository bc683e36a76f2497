"""The topology graph contract and its validator.

A topology is a plain :mod:`networkx` graph (``nx.Graph``; every edge is one
full-duplex link, the same rate and delay in both directions):

* every node has ``kind`` in :data:`NODE_KINDS`
  (``gpu``, ``host``, ``nic``, ``nvswitch``, ``pcie_switch``, ``switch``);
* every edge has ``rate_bps`` (> 0, bit/s), ``delay_ns`` (>= 0, propagation,
  ns) and ``kind`` in :data:`EDGE_KINDS` (``nvlink``, ``pcie``, ``ethernet``,
  ``infiniband``); an optional ``error_rate`` in [0, 1) is a per-packet random
  loss probability (from HPCC ``topology.txt``);
* optional attributes override simulation defaults: any name ending in
  ``_bytes`` (sizes), ``_ns`` (times) or ``_bps`` (rates) may be written with
  a unit (``32MB``, ``1us``, ``400Gbps``) and is normalized to a number;
* GPU-server nodes may carry ``server`` (e.g. ``"s3"``) and ``index`` (local
  index); NICs may carry ``nic_kind`` in :data:`NIC_KINDS`.

Deliberately left out: per-direction (asymmetric) links and parallel links
(a ``MultiGraph`` is rejected: merge parallel links into one of summed rate).
A directed graph is accepted only when it is symmetric; it is converted to an
undirected graph.
"""
from __future__ import annotations

import math
from numbers import Real

import networkx as nx

from ..errors import InputError, TopologyError
from ..values import MAX_EXACT, MAX_RATE_BPS, MIN_LINK_RATE_BPS
from ..units import UnitError, parse_rate, parse_size, parse_time_exact_ns

NODE_KINDS = ("gpu", "host", "nic", "nvswitch", "pcie_switch", "switch")
#: boolean node attributes saying a switch reduces in-network: NVSwitch NVLS, SHARP (CollNet)
IN_NETWORK_FLAGS = {"nvls": ("nvswitch",), "sharp": ("switch",)}
EDGE_KINDS = ("nvlink", "pcie", "ethernet", "infiniband")
NIC_KINDS = ("infiniband", "roce", "ethernet")
#: node kinds that only ever terminate traffic (routes never transit them)
ENDPOINT_KINDS = frozenset({"gpu", "host"})
#: node attributes netsim reads besides the network-parameter overrides (``netsim defaults`` names)
NODE_ATTRS = ("kind", "server", "index", "nic_kind", "cluster", "tier", "pod", "memory_bytes", "nvls", "sharp")
#: link attributes netsim reads
EDGE_ATTRS = ("kind", "rate_bps", "delay_ns", "error_rate")
_UNIT_SUFFIXES = ("_bps", "_ns", "_bytes")
#: unit-less names other tools give the quantities netsim reads with a unit in their name (ns-3's
#: ``Delay``/``DataRate``, GraphML exports' ``bandwidth``/``latency``): refused with the field they mean,
#: since kept as annotations the default would silently apply instead
_UNITLESS_NAMES = {"delay": "delay_ns", "latency": "delay_ns", "propagation_delay": "delay_ns",
                   "bandwidth": "rate_bps", "rate": "rate_bps", "datarate": "rate_bps", "data_rate": "rate_bps",
                   "capacity": "rate_bps", "speed": "rate_bps", "bw": "rate_bps",
                   "mtu": "mtu_bytes", "buffer": "buffer_bytes", "buffer_size": "buffer_bytes"}


def _unit_parser(key: str):
    """Return (parser, accepted) for an attribute name carrying a unit, else None."""
    if key.endswith("_bps"):
        return parse_rate, "a rate such as 100Gbps or a number of bit/s"
    if key.endswith("_ns"):
        return parse_time_exact_ns, "a duration such as 500ns or 1us, or a number of ns (kept to 1 ps)"
    if key.endswith("_bytes"):
        return parse_size, "a size such as 32MB or 1MiB, or a number of bytes"
    return None


def _is_number(v) -> bool:
    if isinstance(v, int) and not isinstance(v, bool):
        return True          # exact, however large (a bound check follows)
    return isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(float(v))


def _normalize_attrs(attrs: dict, source, where: str) -> None:
    """Parse unit strings in-place for every ``*_bps``/``*_ns``/``*_bytes`` attribute."""
    for key in list(attrs):
        conv = _unit_parser(key)
        if conv is None:
            continue
        parser, accepted = conv
        value = attrs[key]
        if _is_number(value) and (type(value) is int or not key.endswith("_ns")):
            if value < 0:
                raise TopologyError("must not be negative", source=source, where=f"{where}, field {key}",
                                    value=value, accepted=accepted)
        else:   # a unit string, or a fractional time: to the ps as a unit string is (parse_time_exact_ns)
            try:
                if isinstance(value, str) and value.strip() == "":
                    raise UnitError("empty")
                attrs[key] = parser(value)
            except (UnitError, TypeError, ValueError, OverflowError) as exc:
                what = "bad unit string"
                if "must not be negative" in str(exc):
                    what = "must not be negative"
                elif "finite" in str(exc):
                    what = "must be finite"
                elif "resolution" in str(exc):
                    what = "a positive time below the 1 ps resolution (it would become 0)"
                raise TopologyError(what, source=source, where=f"{where}, field {key}",
                                    value=value, accepted=accepted) from None
        limit = MAX_RATE_BPS if key.endswith("_bps") else MAX_EXACT   # netsim.params: the bounds of every value
        if attrs[key] > limit:
            raise TopologyError("out of range", source=source, where=f"{where}, field {key}", value=value,
                                accepted=f"{accepted}, at most {'2^53' if limit == MAX_EXACT else f'{limit:g}'}")


def _check_attr_names(attrs: dict, known, source, where: str, what: str) -> None:
    """A misspelt attribute is an error, not an ignored annotation.

    An attribute netsim does not read is refused when it looks like one it
    does: its name carries a unit suffix (``_bps``, ``_ns``, ``_bytes`` — an
    override of a default) or is one edit away from a known name
    (``rate_bsp``, ``bufer_bytes``), or is another tool's unit-less name for one
    (``delay``, ``bandwidth``: :data:`_UNITLESS_NAMES`). Other names (``label``,
    ``rack``) stay free annotations.
    """
    import difflib
    for key in attrs:
        if not isinstance(key, str) or key in known or key.rsplit(".", 1)[0] in known:
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
        meant = _UNITLESS_NAMES.get(key.lower())
        if meant in known:
            close = [meant]
        if close or key.endswith(_UNIT_SUFFIXES):
            hint = f"did you mean {close[0]}? " if close else ""
            base = NODE_ATTRS if what == "node" else EDGE_ATTRS
            extra = " or a network parameter named by `netsim defaults`" if what == "node" else ""
            raise TopologyError(f"unknown {what} attribute", source=source, where=f"{where}, field {key}",
                                value=attrs[key], accepted=f"{hint}one of {', '.join(base)}{extra}")


def _known_node_attrs() -> tuple:
    try:
        from ..network.params import SIM_PARAMS
    except ImportError:  # pragma: no cover - topology layer used alone
        return NODE_ATTRS
    return NODE_ATTRS + tuple(p.name for p in SIM_PARAMS)


def _fmt_edge(u, v) -> str:
    return f"link {u} -- {v}"


def _check_symmetric(graph: nx.DiGraph, source) -> None:
    """Every directed edge of ``graph`` has its reverse with the same attributes.

    A link is full duplex with one rate and delay each way (docs/topology.md), so
    an asymmetric ``DiGraph`` cannot be converted without dropping one direction's
    values; values are compared after unit parsing (``"100Gbps"`` equals ``1e11``).

    Raises
    ------
    TopologyError
        Naming the directed edge, the attribute and both directions' values.
    """
    for u, v, fwd in graph.edges(data=True):
        if not graph.has_edge(v, u):
            raise TopologyError("directed link without its reverse", source=source, where=f"link {u} -> {v}",
                                accepted="full-duplex links (an undirected graph, or both directions)")
        rev = graph.edges[v, u]
        a, b = dict(fwd), dict(rev)
        _normalize_attrs(a, source, f"link {u} -> {v}")
        _normalize_attrs(b, source, f"link {v} -> {u}")
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                raise TopologyError("asymmetric directed link (a link is full duplex: one value each way)",
                                    source=source, where=f"link {u} -> {v}, field {key}",
                                    value=f"{a.get(key)} one way, {b.get(key)} the other ({v} -> {u})",
                                    accepted="the same attributes in both directions (or an undirected graph)")


def _check_kind(attrs: dict, kinds, what: str, source, where: str) -> None:
    """The ``kind`` attribute of a node or link is present and one of ``kinds``."""
    kind = attrs.get("kind")
    if kind is None:
        raise TopologyError("missing field kind", source=source, where=where, accepted="one of " + ", ".join(kinds))
    if kind not in kinds:
        raise TopologyError(f"unknown {what} kind", source=source, where=f"{where}, field kind", value=kind,
                            accepted="one of " + ", ".join(kinds))


def _check_node_params(n, attrs: dict, source) -> None:
    """Node attributes that override network parameters (``buffer_bytes``, ``scheduler``, ...) are valid.

    Checked here, with the file's name, for every backend (the packet backend
    applies them; the others must not accept what it would reject).
    """
    try:
        from ..network.params import SIM_PARAMS, lossless_set, parse_override
    except ImportError:  # pragma: no cover - topology layer used alone
        return
    for key, value in attrs.items():
        base = key.rsplit(".", 1)[0] if isinstance(key, str) and "." in key else key
        if not isinstance(key, str) or base not in SIM_PARAMS:
            continue
        where = f"node {n}, field {key}"
        try:
            parsed = parse_override(key, value, source=source, where=where)
            if base == "lossless_priorities":
                lossless_set({"pfc": True, "lossless_priorities": parsed})
        except TopologyError:
            raise
        except InputError as exc:
            text = str(exc)
            for prefix in (f"{source}: " if source else "", f"{where}: ", "parameter lossless_priorities: "):
                if prefix and text.startswith(prefix):
                    text = text[len(prefix):]
            raise TopologyError(text, source=source, where=where) from None


def validate(graph: nx.Graph, source: str | None = None) -> nx.Graph:
    """Check ``graph`` against the topology contract and normalize units in place.

    Parameters
    ----------
    graph : networkx.Graph
        Any networkx graph meeting the contract (built, read from YAML or
        GraphML). A symmetric ``DiGraph`` is converted to a ``Graph``.
    source : str, optional
        File name used in error messages.

    Returns
    -------
    networkx.Graph
        The same graph (or its undirected copy) with numeric attributes:
        ``rate_bps`` float bit/s, ``delay_ns`` and ``*_ns`` integer ns,
        ``*_bytes`` integer bytes.

    Raises
    ------
    TopologyError
        Naming the file, node or link, the field, the bad value and what is accepted.

    Examples
    --------
    >>> g = nx.Graph()
    >>> g.add_node("a", kind="host"); g.add_node("b", kind="switch", buffer_bytes="32MB")
    >>> g.add_edge("a", "b", kind="ethernet", rate_bps="100Gbps", delay_ns="1us")
    >>> g = validate(g)
    >>> g.edges["a", "b"]["rate_bps"], g.edges["a", "b"]["delay_ns"], g.nodes["b"]["buffer_bytes"]
    (100000000000.0, 1000, 32000000)
    """
    if not isinstance(graph, nx.Graph):
        raise TopologyError("not a networkx graph", source=source, value=type(graph).__name__,
                            accepted="a networkx.Graph")
    if graph.is_multigraph():
        raise TopologyError("parallel links (MultiGraph) are not supported", source=source,
                            accepted="a networkx.Graph; merge parallel links into one of summed rate_bps")
    if graph.is_directed():
        _check_symmetric(graph, source)
        graph = nx.Graph(graph)
    if graph.number_of_nodes() == 0:
        raise TopologyError("empty topology", source=source, accepted="at least two nodes and one link")
    node_attrs = _known_node_attrs()
    for n, attrs in graph.nodes(data=True):
        _check_node(n, attrs, node_attrs, source)
    if graph.number_of_edges() == 0:
        raise TopologyError("topology has no links", source=source, accepted="at least two nodes and one link")
    for u, v, attrs in graph.edges(data=True):
        _check_link(u, v, attrs, source)
    for n, attrs in graph.nodes(data=True):
        if attrs["kind"] not in ENDPOINT_KINDS and graph.degree(n) == 0:
            raise TopologyError(f"a {attrs['kind']} with no link", source=source, where=f"node {n}",
                                accepted="every NIC and switch on at least one link (add its link or remove it)")
    return graph


def _check_node(n, attrs: dict, node_attrs, source) -> None:
    """One node: kind, attribute names, nic_kind, in-network flags, units, parameter overrides."""
    where = f"node {n}"
    _check_kind(attrs, NODE_KINDS, "node", source, where)
    _check_attr_names(attrs, node_attrs, source, where, "node")
    nk = attrs.get("nic_kind")
    if nk is not None and nk not in NIC_KINDS:
        raise TopologyError("unknown nic_kind", source=source, where=f"{where}, field nic_kind", value=nk,
                            accepted="one of " + ", ".join(NIC_KINDS))
    for flag, kinds in IN_NETWORK_FLAGS.items():   # in-network reduction (docs/collectives.md)
        if flag in attrs and (not isinstance(attrs[flag], bool) or attrs["kind"] not in kinds):
            raise TopologyError(f"{flag} must be true or false, on a node of kind {' or '.join(kinds)}",
                                source=source, where=f"{where}, field {flag}", value=attrs[flag],
                                accepted=f"{flag}: true/false on {'/'.join(kinds)} nodes")
    _normalize_attrs(attrs, source, where)
    _check_node_params(n, attrs, source)


def _check_link(u, v, attrs: dict, source) -> None:
    """One link: no self-loop, kind, attribute names, rate_bps > 0, delay_ns, error_rate in [0, 1)."""
    where = _fmt_edge(u, v)
    if u == v:
        raise TopologyError("self-loop link", source=source, where=where, accepted="a link between two nodes")
    _check_kind(attrs, EDGE_KINDS, "link", source, where)
    _check_attr_names(attrs, EDGE_ATTRS, source, where, "link")
    for req in ("rate_bps", "delay_ns"):
        if attrs.get(req) is None:
            raise TopologyError(f"missing field {req}", source=source, where=where,
                                accepted="rate_bps > 0 (e.g. 100Gbps) and delay_ns >= 0 (e.g. 1us)")
    _normalize_attrs(attrs, source, where)
    rate = attrs["rate_bps"]
    if not rate > 0:
        raise TopologyError("rate_bps must be > 0", source=source, where=f"{where}, field rate_bps",
                            value=rate, accepted="a positive rate such as 100Gbps")
    if rate < MIN_LINK_RATE_BPS:
        raise TopologyError("rate_bps below the slowest link netsim models", source=source,
                            where=f"{where}, field rate_bps", value=rate,
                            accepted=f"a rate such as 100Gbps, at least {MIN_LINK_RATE_BPS:g} bit/s (1Mbps); "
                                     "a bare number is bit/s")
    attrs["rate_bps"] = float(rate)
    attrs["delay_ns"] = int(round(attrs["delay_ns"])) if float(attrs["delay_ns"]).is_integer() \
        else float(attrs["delay_ns"])
    if "error_rate" in attrs:
        er = attrs["error_rate"]
        try:
            er = float(er)
        except (TypeError, ValueError):
            er = float("nan")
        if not (0.0 <= er < 1.0):
            raise TopologyError("error_rate out of range", source=source, where=f"{where}, field error_rate",
                                value=attrs["error_rate"], accepted="a loss probability in [0, 1)")
        attrs["error_rate"] = er
