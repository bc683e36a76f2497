"""Loading and saving topologies: YAML, GraphML, HPCC ``topology.txt``, builder expressions.

:func:`load_topology` accepts

* a YAML file (``.yaml``/``.yml``) either listing ``nodes:`` and ``links:``
  with human units, or naming a ``builder:`` with ``args:`` (see
  docs/topology.md);
* a GraphML file (``.graphml``/``.xml``) whose attributes meet the contract;
* an HPCC/ns-3 ``topology.txt`` (any other file): first line
  ``nodes switches links``, second the switch ids, then exactly the declared
  number of link lines ``src dst rate delay error_rate`` (what follows, such
  as HPCC's help text, is ignored with a note, :mod:`.hpcc`); nodes are
  named ``"0".."N-1"``;
* a builder expression ``name:key=value,...`` (lists written ``a|b``).

Everything returned is validated by :func:`~.schema.validate` (numbers, not
unit strings). GraphML is read by :mod:`.graphml`, ``topology.txt`` by :mod:`.hpcc` (each imported
when a file of its format is read). Left out: ns-3 topology extensions beyond the five columns.
"""
from __future__ import annotations

import os
from typing import Any

import networkx as nx
import yaml

from ..errors import InputError, TopologyError
from . import builders as _b
from .buildspec import build, build_expression, parse_value  # noqa: F401 (re-exported)
from .schema import validate

YAML_EXT = (".yaml", ".yml")
GRAPHML_EXT = (".graphml", ".xml")


# builder expressions are in buildspec.py (re-exported here)


# -- YAML -----------------------------------------------------------------------------------------
from ..yamlio import yaml12_floats as _yaml12_floats  # noqa: E402  (1e12 is a number, as in YAML 1.2)

class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (YAML silently keeps the last one)."""


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise TopologyError("duplicate key", where=f"line {key_node.start_mark.line + 1}", value=key,
                                accepted="each name once")
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_yaml12_floats(_UniqueKeyLoader)


def _read_yaml(path: str) -> Any:
    from ..yamlio import load_yaml
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        return load_yaml(text, path, error=TopologyError, loader=_UniqueKeyLoader)
    except TopologyError as exc:
        if exc.source is None:  # raised inside the loader (duplicate key): add the file
            raise TopologyError(str(exc), source=path) from None
        raise


def _apply_node_defaults(g: nx.Graph, defaults, source: str) -> None:
    if not defaults:
        return
    if not isinstance(defaults, dict):
        raise TopologyError("node_defaults must map a node kind to attributes", source=source,
                            where="node_defaults", value=defaults)
    from .schema import NODE_KINDS
    for kind, attrs in defaults.items():
        if kind not in NODE_KINDS:   # a misspelt kind would apply to no node, silently
            import difflib
            close = difflib.get_close_matches(str(kind), NODE_KINDS, n=1)
            raise TopologyError("unknown node kind", source=source, where=f"node_defaults, field {kind}", value=kind,
                                accepted="one of " + ", ".join(NODE_KINDS)
                                + (f"; did you mean {close[0]}?" if close else ""))
        if attrs is not None and not isinstance(attrs, dict):
            raise TopologyError("node_defaults must map a node kind to attributes", source=source,
                                where=f"node_defaults, field {kind}", value=attrs,
                                accepted="a mapping such as {switch: {buffer_bytes: 32MB}}")
    for n, attrs in g.nodes(data=True):
        for key, value in (defaults.get(attrs.get("kind")) or {}).items():
            attrs.setdefault(key, value)


def _string_keys(attrs: dict, source: str, where: str) -> None:
    """Attribute names are strings (``&a: host`` is a YAML anchor on a null key, ``1: x`` an int key)."""
    for key in attrs:
        if not isinstance(key, str):
            raise TopologyError("an attribute name must be a string", source=source, where=where, value=key,
                                accepted="names such as kind, rate_bps, buffer_bytes")


def _node_name(value, source: str, where: str) -> str:
    """A node name from YAML as a string; ``null``, empty and nested values are errors.

    >>> _node_name(3, "t.yaml", "nodes[0]")
    '3'
    """
    if value is None or isinstance(value, (dict, list, bool)) or str(value).strip() == "":
        raise TopologyError("bad node name" + (" (null)" if value is None else ""), source=source, where=where,
                            value=value,
                            accepted="a non-empty string or number such as s0.gpu3 or leaf1")
    return str(value)


def topology_from_dict(doc: dict, source: str = "<dict>") -> nx.Graph:
    """Build a graph from a parsed YAML document (nodes+links or builder+args)."""
    if not isinstance(doc, dict):
        raise TopologyError("expected a mapping with nodes: and links:, or builder: and args:", source=source,
                            value=type(doc).__name__)
    known = {"name", "description", "builder", "args", "nodes", "links", "link_defaults", "node_defaults",
             "gpu_forwarding"}
    for key in doc:
        if key not in known:
            raise TopologyError("unknown top-level key", source=source, value=key,
                                accepted="one of " + ", ".join(sorted(known)))
    if "builder" in doc:
        args = doc.get("args") or {}
        if not isinstance(args, dict):
            raise TopologyError("args must be a mapping of builder arguments", source=source, where="args",
                                value=args, accepted="a mapping such as {servers: 4, fabric: rail}")
        g = build(str(doc["builder"]), args, source=source)
    else:
        if "nodes" not in doc or "links" not in doc:
            raise TopologyError("missing nodes: or links:", source=source,
                                accepted="nodes: and links: lists, or builder: and args:")
        g = nx.Graph(name=doc.get("name", os.path.basename(source)))
        nodes = doc["nodes"]
        if isinstance(nodes, dict):  # name: {attrs}
            for k, v in nodes.items():
                if v is not None and not isinstance(v, dict):
                    raise TopologyError("a node's attributes must be a mapping", source=source,
                                        where=f"nodes, node {k}", value=v, accepted="{kind: ..., ...}")
            nodes = [{"name": k, **(v or {})} for k, v in nodes.items()]
        for key in ("nodes", "links"):
            if doc[key] is not None and not isinstance(nodes if key == "nodes" else doc[key], list):
                raise TopologyError(f"{key} must be a list", source=source, where=key, value=doc[key],
                                    accepted=f"a list of {key[:-1]} mappings"
                                    + (" or a mapping name: {kind: ...}" if key == "nodes" else ""))
        for i, item in enumerate(nodes or []):
            if not isinstance(item, dict) or "name" not in item:
                raise TopologyError("a node needs a name", source=source, where=f"nodes[{i}]", value=item,
                                    accepted="{name: ..., kind: ...}")
            attrs = dict(item)
            _string_keys(attrs, source, f"nodes[{i}]")
            name = _node_name(attrs.pop("name"), source, f"nodes[{i}], field name")
            if name in g:
                raise TopologyError("duplicate node name", source=source, where=f"nodes[{i}]", value=name,
                                    accepted="each node name once")
            g.add_node(name, **attrs)
        ldef = doc.get("link_defaults") or {}
        if not isinstance(ldef, dict):
            raise TopologyError("link_defaults must be a mapping of link attributes", source=source,
                                where="link_defaults", value=ldef, accepted="e.g. {kind: ethernet, delay_ns: 1us}")
        for i, item in enumerate(doc["links"] or []):
            if not isinstance(item, dict):
                raise TopologyError("a link must be a mapping", source=source, where=f"links[{i}]", value=item)
            attrs = {**ldef, **item}
            _string_keys(attrs, source, f"links[{i}]")
            try:
                u, v = (_node_name(attrs.pop(end), source, f"links[{i}], field {end}") for end in ("src", "dst"))
            except KeyError:
                raise TopologyError("a link needs src and dst", source=source, where=f"links[{i}]",
                                    value=item) from None
            for end in (u, v):
                if end not in g:
                    raise TopologyError("link to an unknown node", source=source, where=f"links[{i}]", value=end,
                                        accepted="a name listed under nodes:")
            if g.has_edge(u, v):
                raise TopologyError("duplicate link", source=source, where=f"links[{i}]", value=f"{u} -- {v}",
                                    accepted="one link per node pair (sum the rates of parallel links)")
            g.add_edge(u, v, **attrs)
    _apply_node_defaults(g, doc.get("node_defaults"), source)
    if "name" in doc:
        g.graph["name"] = doc["name"]
    if "gpu_forwarding" in doc:     # routes may transit GPUs (netsim.topology.routing)
        if not isinstance(doc["gpu_forwarding"], bool):
            raise TopologyError("must be true or false", source=source, where="gpu_forwarding",
                                value=doc["gpu_forwarding"], accepted="true or false")
        g.graph["gpu_forwarding"] = doc["gpu_forwarding"]
    return validate(g, source=source)


# -- HPCC topology.txt: hpcc.py (re-exported here) ------------------------------------------------


# -- entry points ---------------------------------------------------------------------------------------
def load_topology(spec) -> nx.Graph:
    """Load a topology from a file path or builder expression (validated, numeric attributes).

    Parameters
    ----------
    spec : str, os.PathLike or networkx.Graph
        ``.yaml``/``.yml`` file, ``.graphml`` file, HPCC ``topology.txt``,
        builder expression such as ``"leaf_spine:leaves=4,spines=2,hosts_per_leaf=4"``,
        or a graph (validated and returned).

    Examples
    --------
    >>> g = load_topology("fat_tree:k=4")
    >>> g.number_of_nodes()
    36
    """
    if isinstance(spec, nx.Graph):
        return validate(spec)
    spec = os.fspath(spec)
    if not os.path.exists(spec) and os.path.exists(os.path.expanduser(spec)):
        spec = os.path.expanduser(spec)
    if os.path.isfile(spec):
        low = spec.lower()
        try:
            if low.endswith(YAML_EXT):
                doc = _read_yaml(spec)
                if isinstance(doc, dict) and "npus_count" in doc:     # an ASTRA-sim network YAML
                    from ..importers.astra import astra_network_from_dict
                    return astra_network_from_dict(doc, source=spec)
                return topology_from_dict(doc, source=spec)
            if low.endswith(GRAPHML_EXT):
                from .graphml import read_graphml      # the readers of other formats: imported when used
                return read_graphml(spec)
            from ..importers.simai_topo import looks_simai_topology, read_simai_topology
            if looks_simai_topology(spec):
                return read_simai_topology(spec)
            from .hpcc import read_hpcc_topology
            return read_hpcc_topology(spec)
        except UnicodeDecodeError:
            raise TopologyError("not a text file (UTF-8)", source=spec,
                                accepted="a .yaml/.graphml topology or an HPCC topology.txt") from None
        except PermissionError as exc:
            raise TopologyError(f"cannot read ({exc.strerror})", source=spec) from None
    name, colon, rest = spec.partition(":")
    if name.strip() in _b.BUILDERS or (colon and "=" in rest and not os.sep in name):
        return build_expression(spec)
    if os.path.exists(spec):
        raise InputError("not a regular file", value=spec)
    raise InputError("no such topology file or builder", value=spec,
                     accepted="a .yaml/.graphml/topology.txt path or a builder expression name:key=value,... "
                              "with name one of " + ", ".join(_b.BUILDERS))


def save_topology(graph: nx.Graph, path: str) -> None:
    """Write ``graph`` as YAML (nodes + links, numeric attributes) or GraphML (``.graphml``)."""
    path = os.fspath(path)
    if path.lower().endswith(GRAPHML_EXT):
        nx.write_graphml(graph, path)
        return
    nodes = [{"name": n, **dict(sorted(a.items()))} for n, a in graph.nodes(data=True)]
    links = [{"src": u, "dst": v, **dict(sorted(a.items()))} for u, v, a in graph.edges(data=True)]
    doc = {"name": str(graph.graph.get("name", os.path.basename(path))), "nodes": nodes, "links": links}
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False, default_flow_style=None, width=120)
