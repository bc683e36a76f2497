"""Reading a GraphML topology (``.graphml``/``.xml``) with one-line errors.

Models what networkx's reader leaves unsaid: one pass over the XML first
rejects duplicate node ids (networkx merges them silently), attribute types
outside GraphML's (boolean, int, long, float, double, string) and values that
do not fit their declared type, each naming the node or link and the
attribute; then networkx reads the file and the graph is validated against
the topology contract (:func:`~.schema.validate`).  Leaves out GraphML's
hyperedges, nested graphs and ports (networkx rejects them), and writing
(:func:`~.io.save_topology`).
"""
from __future__ import annotations

import networkx as nx

from ..errors import TopologyError
from .schema import validate

_GRAPHML_TYPES = {"boolean": ("true", "false", "1", "0"), "int": int, "long": int, "float": float,
                  "double": float, "string": str}


def _graphml_value_ok(kind: str, text: str) -> bool:
    """Whether ``text`` reads as a GraphML value of type ``kind``."""
    conv = _GRAPHML_TYPES[kind]
    if isinstance(conv, tuple):
        return text.strip().lower() in conv
    try:
        conv(text.strip())
        return True
    except ValueError:
        return False


def _check_graphml(path: str) -> None:
    """One pass over the XML: duplicate node ids, unknown attribute types, values that do not fit their type.

    networkx silently merges duplicate node ids and reports a bad value as a
    bare ``could not convert string to float``; here each names the node or
    link and the attribute.
    """
    import xml.etree.ElementTree as ET
    keys: dict = {}
    seen: set = set()
    for _, elem in ET.iterparse(path):
        tag = elem.tag.rsplit("}", 1)[-1]
        if tag == "key":
            kind = elem.get("attr.type", "string")
            name = elem.get("attr.name", elem.get("id"))
            if kind not in _GRAPHML_TYPES:
                raise TopologyError("unknown GraphML attribute type", source=path, where=f"key {name}", value=kind,
                                    accepted="one of " + ", ".join(_GRAPHML_TYPES))
            keys[elem.get("id")] = (name, kind)
        elif tag in ("node", "edge"):
            where = f"node {elem.get('id')}" if tag == "node" else f"link {elem.get('source')} -- {elem.get('target')}"
            if tag == "node":
                if elem.get("id") in seen:
                    raise TopologyError("duplicate node name", source=path, where="node", value=elem.get("id"),
                                        accepted="each node id once")
                seen.add(elem.get("id"))
            for data in elem:
                if data.tag.rsplit("}", 1)[-1] != "data":
                    continue
                name, kind = keys.get(data.get("key"), (data.get("key"), "string"))
                if not _graphml_value_ok(kind, data.text or ""):
                    raise TopologyError(f"not a GraphML {kind}", source=path, where=f"{where}, field {name}",
                                        value=data.text, accepted=f"a {kind} value, as its <key> declares")


def read_graphml(path: str) -> nx.Graph:
    """Read a GraphML topology; every problem is one line naming the node or link and the attribute."""
    try:
        _check_graphml(path)
        g = nx.read_graphml(path)
    except TopologyError:
        raise
    except RecursionError:
        raise TopologyError("cannot read GraphML (nested too deeply)", source=path) from None
    except Exception as exc:  # networkx/ElementTree raise several types for malformed XML
        text = " ".join(str(exc).split())
        raise TopologyError(f"cannot read GraphML ({type(exc).__name__}: {text})", source=path) from None
    return validate(g, source=path)
