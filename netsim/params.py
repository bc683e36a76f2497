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
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .errors import InputError
from .units import UnitError, parse_rate, parse_size, parse_time_ns

KINDS = ("rate", "size", "time", "int", "float", "bool", "choice", "str")
UNIT_LABEL = {"rate": "bit/s", "size": "bytes", "time": "ns", "int": "", "float": "",
              "bool": "on/off", "choice": "", "str": ""}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One named parameter: ``name`` carries its unit (``_ns``, ``_bytes``, ``_bps``)."""

    name: str
    default: Any
    kind: str
    doc: str
    source: str
    choices: tuple = field(default=())
    minimum: float | None = None
    maximum: float | None = None

    def parse(self, value, *, where: str | None = None, source: str | None = None):
        """Convert ``value`` (a string from a CLI/file, or a Python value) to this kind."""
        where = where or f"parameter {self.name}"
        try:
            out = self._convert(value)
        except (UnitError, ValueError, TypeError) as exc:
            raise InputError(str(exc).split(": expected")[0] if isinstance(exc, UnitError) else "invalid value",
                             source=source, where=where, value=value, accepted=self.accepted()) from None
        if isinstance(out, (int, float)) and not isinstance(out, bool):
            if self.minimum is not None and out < self.minimum:
                raise InputError(f"must be >= {self.minimum}", source=source, where=where, value=value)
            if self.maximum is not None and out > self.maximum:
                raise InputError(f"must be <= {self.maximum}", source=source, where=where, value=value)
        return out

    def _convert(self, value):
        k = self.kind
        if value is None:
            raise ValueError("missing")
        if k == "rate":
            return parse_rate(value)
        if k == "size":
            return parse_size(value)
        if k == "time":
            return parse_time_ns(value)
        if k == "int":
            if isinstance(value, float) and not value.is_integer():
                raise ValueError("not an integer")
            return int(str(value).strip()) if isinstance(value, str) else int(value)
        if k == "float":
            if isinstance(value, str) and "/" in value:  # allow fractions like 1/256
                a, b = value.split("/", 1)
                return float(a) / float(b)
            return float(value)
        if k == "bool":
            if isinstance(value, bool):
                return value
            s = str(value).strip().lower()
            if s in _TRUE:
                return True
            if s in _FALSE:
                return False
            raise ValueError("not a boolean")
        if k == "choice":
            s = str(value).strip()
            if s not in self.choices:
                raise ValueError("not a choice")
            return s
        return str(value)

    def accepted(self) -> str:
        return {
            "rate": "a rate such as 100Gbps",
            "size": "a size such as 64KB or 1MiB",
            "time": "a duration such as 500ns, 10us or 1ms",
            "int": "an integer",
            "float": "a number (fractions like 1/256 allowed)",
            "bool": "on/off (true/false, 1/0)",
            "choice": "one of " + ", ".join(map(str, self.choices)),
            "str": "a string",
        }[self.kind]

    @property
    def unit(self) -> str:
        return UNIT_LABEL[self.kind]


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
        hint = f"did you mean {', '.join(close)}? " if close else ""
        return InputError(f"unknown {self.title} parameter", source=source, where=where, value=key,
                          accepted=hint + "one of: " + ", ".join(self.params))

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
    """Split ``KEY=VALUE`` strings; a malformed one is an :class:`InputError`."""
    out = []
    for item in items or ():
        if "=" not in item:
            raise InputError("expected KEY=VALUE", where=what, value=item)
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError("empty key", where=what, value=item)
        out.append((k, v.strip()))
    return out
