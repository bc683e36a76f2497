"""Topology layer: the graph contract, builders, file io and routing.

A topology is a plain networkx graph (see :mod:`.schema` and docs/topology.md).
This package knows nothing of SimPy. Its names are imported from their
modules on first use (``from netsim.topology import validate`` imports the
schema only, not the builders or the file readers), so a backend that only
routes pays for no builder.
"""
from __future__ import annotations

import importlib
import sys
import types

#: public name -> the submodule that defines it (imported when the name is first read)
_WHERE = {
    "BUILDERS": "builders", "dumbbell": "builders", "fat_tree": "builders", "gpu_cluster": "builders",
    "gpu_server": "builders", "leaf_spine": "builders", "two_clusters": "builders",
    "build": "io", "build_expression": "io", "load_topology": "io", "save_topology": "io",
    "endpoints": "query", "gpus": "query", "hosts": "query", "natural_key": "query", "nic_of": "query",
    "server_of": "query",
    "Router": "routing", "bottleneck_rate_bps": "paths", "path_delay_ns": "paths", "path_links": "paths",
    "EDGE_KINDS": "schema", "ENDPOINT_KINDS": "schema", "NIC_KINDS": "schema", "NODE_KINDS": "schema",
    "validate": "schema",
    "bisection_bandwidth_bps": "summary", "format_summary": "summary", "summary": "summary",
}


def __getattr__(name: str):
    """A public name of this package (or the ``builders`` module), imported from its module on first use."""
    where = _WHERE.get(name)
    if where is None:
        return _submodule(name)
    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


def _submodule(name: str):
    """Submodule ``name`` of this package (``builders``, ``domains``, ...), imported now."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


class _Package(types.ModuleType):
    """This package's module type: ``summary`` stays the function when the import system binds the
    ``summary`` submodule to the package (as when this package imported every name at once)."""

    def __setattr__(self, name, value):
        if name == "summary" and isinstance(value, types.ModuleType):
            value = value.summary
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | {"builders"})


__all__ = sorted(set(_WHERE) | {"builders"})
