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
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping

from .errors import InputError
from .units import SIZE_UNITS, UnitError, parse_rate, parse_time_ns

KINDS = ("rate", "size", "time", "int", "float", "bool", "choice", "str", "priorities")
UNIT_LABEL = {"rate": "bit/s", "size": "bytes", "time": "ns", "int": "", "float": "",
              "bool": "on/off", "choice": "", "str": "", "priorities": ""}

#: largest integer an IEEE 754 double holds exactly (53-bit significand): the upper bound of every
#: size (bytes), duration (ns), integer and number parameter unless a Param declares a tighter one,
#: so that no value is silently rounded when it meets float arithmetic
MAX_EXACT = 2 ** 53
#: upper bound of a rate, bit/s: 1 Eb/s, 10^6 x the fastest link built today (1.6 Tb/s Ethernet,
#: IEEE P802.3dj); models use 1e18 for an ideal link whose serialization is negligible, and the bound
#: keeps bytes x 8 x 10^12 / rate (serialization in ps) finite and meaningful
MAX_RATE_BPS = 1e18
#: 802.1p priorities are 3-bit values (IEEE 802.1Q PCP field)
PRIORITY_MAX = 7
#: kinds whose values are numbers and therefore need bounds
NUMERIC_KINDS = ("rate", "size", "time", "int", "float")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
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
            reason = str(exc) if isinstance(exc, _Reason) else "invalid value"
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
            raise _Reason("missing value")
        if isinstance(value, (list, tuple, dict, set)) and k != "priorities":
            raise _Reason(f"a {type(value).__name__} is not a single value")
        if isinstance(value, bool) and k in NUMERIC_KINDS:
            raise _Reason("a boolean is not a number")
        if k in ("rate", "size", "time", "float") and isinstance(value, float) and not math.isfinite(value):
            raise _Reason("must be a finite number")
        if k == "rate":
            return parse_rate(value)
        if k == "size":
            return parse_exact_size(value)
        if k == "time":
            return _exact_int(value) if _is_plain_int(value) else parse_time_ns(value)
        if k == "int":
            return _to_int(value)
        if k == "float":
            return _to_float(value)
        if k == "bool":
            return _to_bool(value)
        if k == "choice":
            s = str(value).strip()
            if s not in self.choices:
                raise _Reason("not one of the choices")
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
            low = "> 0" if (self.kind == "rate" and self.minimum is None) else f">= {_fmt(lo)}"
            text += f" {low} and <= {_fmt(hi)}" + (f" {self.unit}" if self.unit else "")
        return text

    @property
    def unit(self) -> str:
        return UNIT_LABEL[self.kind]


class _Reason(ValueError):
    """A conversion failure whose message is shown to the user as is."""


def _fmt(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        x = int(x)
    if isinstance(x, int) and x == MAX_EXACT:
        return "2^53"
    return f"{x:g}" if isinstance(x, float) or abs(x) >= 10 ** 7 else str(x)


def _is_plain_int(value) -> bool:
    """An int, or a string of decimal digits only: converted exactly (no float rounding)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and value.strip().isascii() and value.strip().isdigit()


def _exact_int(value) -> int:
    text = str(value).strip() if isinstance(value, str) else None
    if text is not None and len(text) > 30:   # far beyond every bound; int() of 10^5 digits is slow
        raise _Reason("number too large")
    return int(text) if text is not None else int(value)


_SIZE_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,4})?)\s*([A-Za-z]*)\s*$")


def parse_exact_size(value) -> int:
    """A size (``4096``, ``"1.5KB"``, ``"2MiB"``) as exact integer bytes: never rounded.

    Unlike :func:`netsim.units.parse_size` (which goes through a float), the
    number is read exactly, so 9007199254740993 stays itself and 2.5 bytes is
    an error, not 2. Bounds are the caller's (a :class:`Param`'s).

    >>> parse_exact_size("1.5KB"), parse_exact_size(9007199254740993), parse_exact_size("8b")
    (1500, 9007199254740993, 1)
    >>> parse_exact_size(2.5)
    Traceback (most recent call last):
    ...
    netsim.params._Reason: not a whole number of bytes
    """
    if isinstance(value, bool) or value is None:
        raise _Reason("not a size")
    if isinstance(value, int):
        exact = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _Reason("must be a finite number")
        exact = Fraction(value)
    else:
        m = _SIZE_RE.match(str(value).replace("_", ""))
        if not m or m.group(2) not in SIZE_UNITS:
            raise UnitError(f"bad size {value!r}: expected a number with a unit (e.g. 1500B, 32MB, 1MiB)")
        exact = Fraction(m.group(1)) * Fraction(SIZE_UNITS[m.group(2)])
    if exact < 0:
        raise _Reason("must not be negative")
    if exact.denominator != 1:
        raise _Reason("not a whole number of bytes")
    if exact > MAX_EXACT ** 2:   # far beyond every bound; the caller's bound check gives the message
        return MAX_EXACT ** 2
    return int(exact)


def _to_int(value) -> int:
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise _Reason("not an integer")
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not (text.lstrip("+-").isascii() and text.lstrip("+-").isdigit()):
        raise _Reason("not an integer")
    return _exact_int(text.lstrip("+")) if not text.startswith("-") else -_exact_int(text[1:])


def _to_float(value) -> float:
    if isinstance(value, str) and "/" in value:  # allow fractions like 1/256
        a, b = value.split("/", 1)
        den = float(b)
        if den == 0:
            raise _Reason("division by zero")
        out = float(a) / den
    else:
        out = float(value)
    if not math.isfinite(out):
        raise _Reason("must be a finite number")
    return out


def _to_bool(value) -> bool:
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise _Reason("not a boolean")


def parse_priorities(value) -> str:
    """A list of 802.1p priorities (``"3"``, ``"3,4"``, ``[3, 4]``) as its canonical string ``"3,4"``.

    >>> parse_priorities("4; 3,")
    '3,4'
    >>> parse_priorities("")
    ''
    """
    if isinstance(value, (list, tuple)):
        parts = list(value)
    elif isinstance(value, (int, str)) and not isinstance(value, bool):
        parts = str(value).replace(";", ",").split(",")
    else:
        raise _Reason("not a priority list")
    out = set()
    for part in parts:
        text = str(part).strip()
        if not text and not isinstance(part, int):
            continue
        if not (text.isascii() and text.isdigit()) or int(text) > PRIORITY_MAX:
            raise _Reason("bad priority list")
        out.add(int(text))
    return ",".join(str(p) for p in sorted(out))


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
