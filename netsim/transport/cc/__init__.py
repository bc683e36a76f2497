"""Congestion-control algorithms as pure state machines (see :mod:`.base`).

The built-in algorithms are ``none``, ``cubic``, ``dcqcn``, ``dctcp``,
``hpcc``, ``swift`` and ``timely``. Their names and transports are listed in
:data:`BUILTIN_CC` without importing their modules: a run imports only the
algorithms it uses (:func:`load_cc`), so checking a ``--cc`` name or a flow's
default priority costs no import. :data:`REGISTRY` (read from this package)
is the full table of classes by name: reading it imports every built-in
module. :mod:`.config` resolves ``--cc-param`` overrides and the network ECN
settings an algorithm implies.

Left out: algorithms registered from outside this package are known only
once their module has run :func:`~.base.register`.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Iterator, NamedTuple

from .base import CongestionControl, NoneCC, register  # noqa: F401
from .base import REGISTRY as _REGISTRY


class BuiltinCC(NamedTuple):
    """Where a built-in algorithm lives and the transport its flows use (the class's ``transport``)."""

    module: str      #: submodule of this package that registers the class
    transport: str   #: ``tcp`` or ``roce``: its default priority (``tcp_priority`` / ``roce_priority``)


#: every built-in algorithm by name (checked against the classes by tests/test_lazy_imports.py)
BUILTIN_CC: dict[str, BuiltinCC] = {
    "cubic": BuiltinCC("cubic", "tcp"),
    "dcqcn": BuiltinCC("dcqcn", "roce"),
    "dctcp": BuiltinCC("dctcp", "tcp"),
    "hpcc": BuiltinCC("hpcc", "roce"),
    "none": BuiltinCC("base", "roce"),
    "swift": BuiltinCC("swift", "tcp"),
    "timely": BuiltinCC("timely", "roce"),
}

#: names re-exported from submodules, imported on first access: name -> (submodule, attribute)
_LAZY = {
    "Cubic": ("cubic", "Cubic"), "DCQCN": ("dcqcn", "DCQCN"), "DCQCN_PRESETS": ("dcqcn", "PRESETS"),
    "DCTCP": ("dctcp", "DCTCP"), "HPCC": ("hpcc", "HPCC"), "HPCC_PRESETS": ("hpcc", "PRESETS"),
    "Swift": ("swift", "Swift"), "Timely": ("timely", "Timely"),
    "cc_class": ("config", "cc_class"), "ecn_overrides": ("config", "ecn_overrides"),
    "load_cc_params_file": ("config", "load_cc_params_file"), "resolve_cc_params": ("config", "resolve_cc_params"),
}


def cc_names() -> list[str]:
    """Every known algorithm name, sorted: the built-ins and any class registered so far (no import)."""
    return sorted(set(BUILTIN_CC) | set(_REGISTRY))


def cc_transport(name: str) -> str:
    """The transport (``tcp`` or ``roce``) of known algorithm ``name`` (KeyError if unknown)."""
    cls = _REGISTRY.get(name)
    if cls is not None:
        return cls.transport
    return BUILTIN_CC[name].transport


def load_cc(name) -> type[CongestionControl] | None:
    """The class of algorithm ``name``, importing its module on first use; ``None`` if ``name`` is unknown."""
    cls = _REGISTRY.get(name)
    if cls is None and name in BUILTIN_CC:
        importlib.import_module(f"{__name__}.{BUILTIN_CC[name].module}")
        cls = _REGISTRY.get(name)
    return cls


def load_all() -> dict[str, type[CongestionControl]]:
    """Import every built-in algorithm; the full :data:`REGISTRY` (name -> class)."""
    for name in sorted(BUILTIN_CC):
        load_cc(name)
    return _REGISTRY


class LazyClasses(Mapping):
    """Read-only name -> class view of every known algorithm; a class is imported when first read.

    ``name in CLASSES`` and iteration (sorted names) import nothing.
    """

    def __getitem__(self, name) -> type[CongestionControl]:
        cls = load_cc(name) if isinstance(name, str) else None
        if cls is None:
            raise KeyError(name)
        return cls

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and (name in _REGISTRY or name in BUILTIN_CC)

    def __iter__(self) -> Iterator[str]:
        return iter(cc_names())

    def __len__(self) -> int:
        return len(cc_names())


#: every known algorithm's class by name, imported on first read (see :class:`LazyClasses`)
CLASSES = LazyClasses()


def __getattr__(name: str):
    """``REGISTRY`` (complete: every built-in imported) and the lazily re-exported classes and helpers."""
    if name == "REGISTRY":
        return load_all()
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    return _submodule(name)


def _submodule(name: str):
    """Submodule ``name`` of this package, imported now (as ``import netsim.transport.cc`` used to)."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


__all__ = ["BUILTIN_CC", "BuiltinCC", "CLASSES", "CongestionControl", "LazyClasses", "NoneCC", "REGISTRY", "cc_names", "cc_transport",
           "load_all", "load_cc", "register", *sorted(_LAZY)]
