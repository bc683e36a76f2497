"""Named, documented, overridable parameters.

Every default in netsim (switch buffer, ECN thresholds, Kmin, DCQCN's g, Cubic's
min RTO, ...) is a :class:`Param` with a unit, a one-line meaning and the source
of its value. A :class:`ParamTable` groups the parameters of one component,
parses user overrides (``--set KEY=VALUE``, ``--cc-param``, node attributes,
YAML) with unit strings, and rejects unknown keys with the list of known ones.

>>> t = ParamTable("demo", [Param("delay_ns", 1000, "time", "link delay", "example")])
>>> t.resolve({"delay_ns": "2us"})["delay_ns"]
2000
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .errors import InputError
from .units import UnitError, parse_rate, parse_time_exact_ns, parse_time_ns
from .values import (  # noqa: F401  (MAX_*, parse_exact_size, parse_priorities are re-exported)
    MAX_EXACT, MAX_RATE_BPS, PRIORITY_MAX, ValueReason, exact_int, fmt_bound, is_plain_int, parse_exact_size,
    parse_priorities, to_bool, to_float, to_int)

KINDS = ("rate", "size", "time", "int", "float", "bool", "choice", "str", "priorities")
UNIT_LABEL = {"rate": "bit/s", "size": "bytes", "time": "ns", "int": "", "float": "",
              "bool": "on/off", "choice": "", "str": "", "priorities": ""}

#: kinds whose values are numbers and therefore need bounds
NUMERIC_KINDS = ("rate", "size", "time", "int", "float")

_KIND_MIN = {"rate": 0, "size": 0, "time": 0}
_KIND_MAX = {"rate": MAX_RATE_BPS, "size": MAX_EXACT, "time": MAX_EXACT, "int": MAX_EXACT,
             "float": MAX_EXACT}


@dataclass(frozen=True)
class Param:
    """One named parameter: ``name`` carries its unit (``_ns``, ``_bytes``, ``_bps``).

    ``minimum``/``maximum`` bound a numeric value (inclusive); kinds bring their own
    bounds too (sizes and times >= 0, every number <= :data:`MAX_EXACT`, rates in
    (0, :data:`MAX_RATE_BPS`]; a rate of 0 only with ``minimum=0``). Non-finite
    values (NaN, infinities) are never accepted.
    """

    name: str
    default: Any
    kind: str
    doc: str
    source: str
    choices: tuple = field(default=())
    minimum: float | None = None
    maximum: float | None = None

    def parse(self, value, *, where: str | None = None, source: str | None = None):
        """Convert ``value`` (a string from a CLI/file, or a Python value) to this kind and check its bounds."""
        where = where or f"parameter {self.name}"
        try:
            out = self._convert(value)
        except UnitError as exc:
            raise InputError(str(exc).split(": expected")[0], source=source, where=where, value=value,
                             accepted=self.accepted()) from None
        except (ValueError, TypeError, ArithmeticError) as exc:
            reason = str(exc) if isinstance(exc, ValueReason) else "invalid value"
            raise InputError(reason, source=source, where=where, value=value,
                             accepted=self.accepted()) from None
        if self.kind in NUMERIC_KINDS:
            lo, hi = self.bounds()
            if not (lo <= out <= hi) or (self.kind == "rate" and self.minimum is None and out <= 0):
                raise InputError("out of range", source=source, where=where, value=value,
                                 accepted=self.accepted())
        return out

    def bounds(self) -> tuple[float, float]:
        """``(low, high)``, inclusive: the Param's own bounds, else its kind's."""
        lo = self.minimum if self.minimum is not None else _KIND_MIN.get(self.kind, -MAX_EXACT)
        hi = self.maximum if self.maximum is not None else _KIND_MAX[self.kind]
        return lo, min(hi, _KIND_MAX[self.kind])

    def _convert(self, value):
        k = self.kind
        if value is None:
            raise ValueReason("missing value")
        if isinstance(value, (list, tuple, dict, set)) and k != "priorities":
            raise ValueReason(f"a {type(value).__name__} is not a single value")
        if isinstance(value, bool) and k in NUMERIC_KINDS:
            raise ValueReason("a boolean is not a number")
        if k in ("rate", "size", "time", "float") and isinstance(value, float) and not math.isfinite(value):
            raise ValueReason("must be a finite number")
        if k == "rate":
            return parse_rate(value)
        if k == "size":
            return parse_exact_size(value)
        if k == "time":
            if is_plain_int(value):
                return exact_int(value)
            ns = parse_time_ns(value)          # these times are whole ns (rounded); a positive one never 0
            if ns == 0 and parse_time_exact_ns(value) > 0:
                raise ValueReason("a positive time below 0.5 ns would become 0 (whole ns)")
            return ns
        if k == "int":
            return to_int(value)
        if k == "float":
            return to_float(value)
        if k == "bool":
            return to_bool(value)
        if k == "choice":
            s = str(value).strip()
            if s not in self.choices:
                raise ValueReason("not one of the choices")
            return s
        if k == "priorities":
            return parse_priorities(value)
        return str(value)

    def accepted(self) -> str:
        """What this Param accepts, with its bounds: the end of an error message."""
        text = {
            "rate": "a rate such as 100Gbps",
            "size": "a size such as 64KB or 1MiB (integer bytes)",
            "time": "a duration such as 500ns, 10us or 1ms",
            "int": "an integer",
            "float": "a finite number (fractions like 1/256 allowed)",
            "bool": "on/off (true/false, 1/0)",
            "choice": "one of " + ", ".join(map(str, self.choices)),
            "str": "a string",
            "priorities": f"comma-separated 802.1p priorities 0..{PRIORITY_MAX}, e.g. 3 or 3,4",
        }[self.kind]
        if self.kind in NUMERIC_KINDS:
            lo, hi = self.bounds()
            low = "> 0" if (self.kind == "rate" and self.minimum is None) else f">= {fmt_bound(lo)}"
            text += f" {low} and <= {fmt_bound(hi)}" + (f" {self.unit}" if self.unit else "")
        return text

    @property
    def unit(self) -> str:
        return UNIT_LABEL[self.kind]


def _check_declaration(title: str, p: Param) -> None:
    """A declaration error (a bug, not bad input): ints and floats must state their lower bound,
    and a default must pass the Param's own validation (``None`` = filled in later)."""
    if p.kind in ("int", "float") and p.minimum is None:
        raise ValueError(f"{title}: {p.name}: a {p.kind} parameter must declare its minimum")
    if p.kind == "choice" and not p.choices:
        raise ValueError(f"{title}: {p.name}: a choice parameter must list its choices")
    if p.default is not None:
        try:
            p.parse(p.default)
        except InputError as exc:
            raise ValueError(f"{title}: default of {p.name} fails its own validation: {exc}") from None


class ParamTable:
    """An ordered registry of :class:`Param` for one component."""

    def __init__(self, title: str, params: Iterable[Param]):
        self.title = title
        self.params: dict[str, Param] = {}
        for p in params:
            if p.kind not in KINDS:
                raise ValueError(f"{p.name}: unknown kind {p.kind}")
            if p.name in self.params:
                raise ValueError(f"duplicate parameter {p.name}")
            _check_declaration(title, p)
            self.params[p.name] = p

    def __contains__(self, name: str) -> bool:
        return name in self.params

    def __getitem__(self, name: str) -> Param:
        return self.params[name]

    def __iter__(self):
        return iter(self.params.values())

    def defaults(self) -> dict:
        return {name: p.default for name, p in self.params.items()}

    def unknown(self, key: str, *, source: str | None = None, where: str | None = None) -> InputError:
        close = difflib.get_close_matches(key, list(self.params), n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return InputError(f"unknown {self.title} parameter", source=source, where=where, value=key,
                          accepted="one of: " + ", ".join(self.params) + hint)

    def parse_one(self, key: str, value, *, source: str | None = None, where: str | None = None):
        if key not in self.params:
            raise self.unknown(key, source=source, where=where)
        return self.params[key].parse(value, where=where or f"parameter {key}", source=source)

    def resolve(self, overrides: Mapping[str, Any] | None = None, *, base: Mapping[str, Any] | None = None,
                source: str | None = None) -> dict:
        """Defaults, then ``base``, then ``overrides`` (all parsed and checked)."""
        out = self.defaults()
        for layer in (base or {}), (overrides or {}):
            for key, value in layer.items():
                out[key] = self.parse_one(key, value, source=source)
        return out

    def describe(self) -> list[dict]:
        """Rows for ``netsim defaults``: name, default, unit, meaning, source."""
        return [{"name": p.name, "default": p.default, "unit": p.unit, "doc": p.doc, "source": p.source}
                for p in self.params.values()]

    def format_table(self) -> str:
        rows = self.describe()
        w = max(len(r["name"]) for r in rows) if rows else 4
        lines = [f"# {self.title}"]
        for r in rows:
            d = r["default"]
            lines.append(f"{r['name']:<{w}}  {d!s:<14} {r['unit']:<7} {r['doc']}  [source: {r['source']}]")
        return "\n".join(lines)


def parse_assignments(items: Iterable[str], *, what: str = "--set") -> list[tuple[str, str]]:
    """Split ``KEY=VALUE`` strings; a malformed one, or a key given twice (which value would win is
    not for netsim to guess), is an :class:`InputError`.

    >>> parse_assignments(["mtu_bytes=1000", "pfc = off"])
    [('mtu_bytes', '1000'), ('pfc', 'off')]
    """
    out = []
    seen: dict[str, str] = {}
    for item in items or ():
        if "=" not in item:
            raise InputError("expected KEY=VALUE", where=what, value=item)
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError("empty key", where=what, value=item)
        if k in seen:
            raise InputError("key given twice", where=f"{what} {k}", value=f"{seen[k]} and {item}",
                             accepted=f"each key once per {what}")
        seen[k] = item
        out.append((k, v.strip()))
    return out
