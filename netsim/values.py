"""Exact, bounded conversion of user values: the primitives behind :class:`netsim.params.Param`.

Every number a user writes (``--set``, ``--cc-param``, node attributes, workload
fields, flags) is read here without silent rounding: sizes are exact integers
(``parse_exact_size``: 9007199254740993 stays itself, 2.5 bytes is an error),
integers are never taken from floats that are not whole, non-finite numbers
and divisions by zero are errors, priority lists are checked 802.1p values.
The bounds shared by every value (:data:`MAX_EXACT`, :data:`MAX_RATE_BPS`)
live here too. Left out: unit-carrying rates and times, parsed by
:mod:`netsim.units`.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from .units import SIZE_UNITS, UnitError

#: largest integer an IEEE 754 double holds exactly (53-bit significand): the upper bound of every
#: size (bytes), duration (ns), integer and number parameter unless a Param declares a tighter one,
#: so that no value is silently rounded when it meets float arithmetic
MAX_EXACT = 2 ** 53
#: upper bound of a rate, bit/s: 1 Eb/s, 10^6 x the fastest link built today (1.6 Tb/s Ethernet,
#: IEEE P802.3dj); models use 1e18 for an ideal link whose serialization is negligible, and the bound
#: keeps bytes x 8 x 10^12 / rate (serialization in ps) finite and meaningful
MAX_RATE_BPS = 1e18
#: lower bound of a link's rate, bit/s: 1 Mb/s, 10^5 x below the slowest data-centre link built
#: today (10 Gb/s) (netsim choice: a slower link is a unit mistake, e.g. ``rate_bps: 100`` meant as
#: 100 Gb/s; at 1e-300 bit/s a 1 MB flow's serialization overflowed to infinity in every backend)
MIN_LINK_RATE_BPS = 1e6
#: longest duration of one operation read from a file (a compute time, an optimizer step), ns: one
#: day, the bound of ``compute.layer_times_ms`` (netsim choice: more is a unit mistake; it keeps the
#: simulated end times of any run far inside the int64 nanosecond columns of the output tables)
MAX_OP_NS = 86_400 * 10**9
#: 802.1p priorities are 3-bit values (IEEE 802.1Q PCP field)
PRIORITY_MAX = 7

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ValueReason(ValueError):
    """A conversion failure whose message is shown to the user as is."""


def fmt_bound(x) -> str:
    """A bound as an error message shows it: ``2^53``, ``1e+18``, ``7``."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        x = int(x)
    if isinstance(x, int) and x == MAX_EXACT:
        return "2^53"
    return f"{x:g}" if isinstance(x, float) or abs(x) >= 10 ** 7 else str(x)


def is_plain_int(value) -> bool:
    """An int, or a string of decimal digits only: converted exactly (no float rounding)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and value.strip().isascii() and value.strip().isdigit()


def exact_int(value) -> int:
    text = str(value).strip() if isinstance(value, str) else None
    if text is not None and len(text) > 30:   # far beyond every bound; int() of 10^5 digits is slow
        raise ValueReason("number too large")
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
    netsim.values.ValueReason: not a whole number of bytes
    """
    if isinstance(value, bool) or value is None:
        raise ValueReason("not a size")
    if isinstance(value, int):
        exact = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueReason("must be a finite number")
        exact = Fraction(value)
    else:
        m = _SIZE_RE.match(str(value).replace("_", ""))
        if not m or m.group(2) not in SIZE_UNITS:
            raise UnitError(f"bad size {value!r}: expected a number with a unit (e.g. 1500B, 32MB, 1MiB)")
        exact = Fraction(m.group(1)) * Fraction(SIZE_UNITS[m.group(2)])
    if exact < 0:
        raise ValueReason("must not be negative")
    if exact.denominator != 1:
        raise ValueReason("not a whole number of bytes")
    if exact > MAX_EXACT ** 2:   # far beyond every bound; the caller's bound check gives the message
        return MAX_EXACT ** 2
    return int(exact)


def to_int(value) -> int:
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ValueReason("not an integer")
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not (text.lstrip("+-").isascii() and text.lstrip("+-").isdigit()):
        raise ValueReason("not an integer")
    return exact_int(text.lstrip("+")) if not text.startswith("-") else -exact_int(text[1:])


def to_float(value) -> float:
    if isinstance(value, str) and "/" in value:  # allow fractions like 1/256
        a, b = value.split("/", 1)
        den = float(b)
        if den == 0:
            raise ValueReason("division by zero")
        out = float(a) / den
    else:
        out = float(value)
    if not math.isfinite(out):
        raise ValueReason("must be a finite number")
    return out


def to_bool(value) -> bool:
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise ValueReason("not a boolean")


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
        raise ValueReason("not a priority list")
    out = set()
    for part in parts:
        text = str(part).strip()
        if not text and not isinstance(part, int):
            continue
        if not (text.isascii() and text.isdigit()) or int(text) > PRIORITY_MAX:
            raise ValueReason("bad priority list")
        out.add(int(text))
    return ",".join(str(p) for p in sorted(out))
