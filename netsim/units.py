"""Unit parsing and conversion.

Conventions (the whole code base follows them):

* time inside the simulation engine is an integer count of **picoseconds**
  (``PS_PER_NS = 1000``), so that serialization at any realistic link rate is
  represented without bending the rate; every trace column is in integer
  nanoseconds and carries ``_ns`` in its name;
* sizes are integer bytes (``_bytes``), rates are bits per second (``_bps``);
* human strings use SI decimal prefixes (``1MB`` = 10**6 bytes, ``100Gbps`` =
  10**11 bit/s); binary prefixes only when written so (``MiB``, ``GiB``).

>>> parse_rate("100Gbps")
100000000000.0
>>> parse_size("32MB"), parse_size("1MiB")
(32000000, 1048576)
>>> parse_time_ns("1us"), parse_time_ns("2.5ms")
(1000, 2500000)
"""
from __future__ import annotations

import math
import re

PS_PER_NS = 1000
NS_PER_S = 1_000_000_000
PS_PER_S = 1_000_000_000_000

_NUM = r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_RE = re.compile(r"^\s*" + _NUM + r"\s*([A-Za-z/]*)\s*$")

_SI = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_BIN = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}

RATE_UNITS = {"bps": 1, "b/s": 1}
for _p, _m in _SI.items():
    if _p:
        RATE_UNITS[_p + "bps"] = _m
        RATE_UNITS[_p + "b/s"] = _m
        RATE_UNITS[_p + "Bps"] = 8 * _m  # bytes per second, written explicitly
for _p, _m in _BIN.items():
    RATE_UNITS[_p + "bps"] = _m

SIZE_UNITS = {"": 1, "B": 1, "b": 1 / 8}
for _p, _m in _SI.items():
    if _p:
        SIZE_UNITS[_p + "B"] = _m
        SIZE_UNITS[_p + "b"] = _m / 8
for _p, _m in _BIN.items():
    SIZE_UNITS[_p + "B"] = _m

TIME_UNITS_NS = {"ps": 1e-3, "ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


class UnitError(ValueError):
    """A quantity string could not be parsed; the message says what is accepted."""


def _split(text, what: str, accepted) -> tuple[float, str]:
    if isinstance(text, bool):
        raise UnitError(f"bad {what} {text!r}: expected a number with a unit ({accepted})")
    if isinstance(text, (int, float)):
        return float(text), ""
    m = _RE.match(str(text).replace("µ", "u").replace("_", ""))
    if not m:
        raise UnitError(f"bad {what} {text!r}: expected a number with a unit ({accepted})")
    return float(m.group(1)), m.group(2)


def _scaled(text, what: str, units: dict, default_unit: str, accepted: str) -> float:
    """``text`` (a number with an optional unit from ``units``) times that unit's multiplier; never negative."""
    val, unit = _split(text, what, accepted)
    unit = (unit or default_unit).replace("µ", "u")
    if unit not in units:
        raise UnitError(f"bad {what} {text!r}: unknown unit {unit!r} ({accepted})")
    out = val * units[unit]
    if not math.isfinite(out):
        raise UnitError(f"bad {what} {text!r}: must be a finite number")
    if out < 0:
        raise UnitError(f"bad {what} {text!r}: must not be negative")
    return out


def parse_rate(text, default_unit: str = "bps") -> float:
    """Parse a rate such as ``"400Gbps"`` into bits per second (float).

    A bare number is taken in ``default_unit``.
    """
    return _scaled(text, "rate", RATE_UNITS, default_unit, "e.g. 100Gbps, 400Gbps, 10Mbps, 1.2Tbps")


def parse_size(text, default_unit: str = "B") -> int:
    """Parse a size such as ``"32MB"`` or ``"1MiB"`` into integer bytes."""
    return int(round(_scaled(text, "size", SIZE_UNITS, default_unit, "e.g. 1500B, 32MB, 1MiB, 2GiB")))


def parse_time_ns(text, default_unit: str = "ns") -> int:
    """Parse a duration such as ``"1us"`` or ``"2.5ms"`` into integer nanoseconds."""
    return int(round(_scaled(text, "time", TIME_UNITS_NS, default_unit, "e.g. 500ns, 1us, 2.5ms, 1s")))


def parse_time_exact_ns(text, default_unit: str = "ns") -> int | float:
    """A duration in ns kept to the picosecond (the packet backend's resolution), bare number or unit string alike.

    The value is rounded to the nearest ps; an int when it is whole ns, else a float. A positive duration
    below half a picosecond would become 0 and is refused.

    >>> [parse_time_exact_ns(t) for t in ("1.5ns", 1.5, "1.0005us", "2us")]
    [1.5, 1.5, 1000.5, 2000]
    """
    if isinstance(text, int) and not isinstance(text, bool) and default_unit == "ns":
        if text < 0:
            raise UnitError(f"bad time {text!r}: must not be negative")
        return text                                              # whole ns: exact, however large
    ns = _scaled(text, "time", TIME_UNITS_NS, default_unit, "e.g. 500ns, 1us, 2.5ms, 1s")
    ps = round(ns * PS_PER_NS)
    if ps == 0 and ns > 0:
        raise UnitError(f"bad time {text!r}: below the 1 ps time resolution, it would become 0")
    return ps // PS_PER_NS if ps % PS_PER_NS == 0 else ps / PS_PER_NS


def ps_to_ns(ps: int) -> int:
    """Round a picosecond time to the nearest nanosecond (half up)."""
    return (ps + PS_PER_NS // 2) // PS_PER_NS


def serialization_ps(size_bytes: int, rate_bps: float) -> float:
    """Exact (fractional) serialization time of ``size_bytes`` at ``rate_bps``, in ps."""
    return size_bytes * 8 * PS_PER_S / rate_bps


def format_rate(bps: float) -> str:
    for unit, m in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= m:
            return f"{bps / m:g}{unit}"
    return f"{bps:g}bps"


def format_size(nbytes: float) -> str:
    for unit, m in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if nbytes >= m:
            return f"{nbytes / m:g}{unit}"
    return f"{nbytes:g}B"


def format_time_ns(ns: float) -> str:
    for unit, m in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= m:
            return f"{ns / m:g}{unit}"
    return f"{ns:g}ns"
