"""Builder expressions: ``name:key=value,...`` and ``builder:``/``args:`` documents.

:func:`build` calls a builder of :mod:`.builders` with checked arguments; a
bad argument is an :class:`~netsim.errors.InputError` naming the builder, the
argument at fault (:func:`_blamed_argument`) and its value. Lists are written
``a|b``; values parse as int, float, bool or a unit string.
"""
from __future__ import annotations

from typing import Any

import networkx as nx

from ..errors import InputError
from ..units import UnitError
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


def _check_counts(name: str, args: dict, source: str | None) -> None:
    """Arguments whose default is a count (a plain int, not a ``*_ns`` time or an offset) must be ints >= 1."""
    import inspect
    params = inspect.signature(_b.BUILDERS[name]).parameters
    for key, value in args.items():
        default = params[key].default
        if type(default) is not int or key.endswith("_ns") or key.endswith("_offset"):
            continue
        if type(value) is not int or value < 1:
            raise InputError("must be a whole number >= 1", source=source, where=f"builder {name}, argument {key}",
                             value=value, accepted=f"a count such as {default}")


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
    return validate(graph, source=source or f"{name}(...)")


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
