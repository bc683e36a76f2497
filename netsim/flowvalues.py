"""The quantities of a flow-file row: sizes in whole bytes and start times in whole nanoseconds, exactly.

Models how ``size_bytes`` and ``start_ns`` cells are read: an ASCII number
(sign, fraction, exponent up to 10^30) with an optional unit
(:data:`netsim.units.SIZE_UNITS`, :data:`netsim.units.TIME_UNITS_NS`) taken
as an exact fraction, never through a float, so ``9007199254740993`` stays
itself and ``0.5`` ns is refused instead of rounded; the latest start is
:data:`MAX_START_NS`.  Every problem is a one-line
:class:`~netsim.errors.InputError` naming the file and line.  Leaves out the
flow file's formats and columns (:mod:`netsim.flowfile`).
"""
from __future__ import annotations

import re

from .errors import InputError

#: largest decimal exponent read in a size or time (1e30 bytes is far beyond MAX_FLOW_BYTES already)
MAX_EXPONENT = 30
#: a number (ASCII digits, optional sign, fraction and exponent) and an optional unit
QUANTITY = re.compile(r"\s*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z/]*)\s*")


def exact_quantity(text: str, units: dict, default_unit: str):
    """``text`` (ASCII number, optional unit of ``units``) as an exact Fraction, or None when malformed."""
    from fractions import Fraction
    m = QUANTITY.fullmatch(text.replace("_", "").replace("\u00b5", "u"))
    if not m or (m.group(2) or default_unit) not in units:
        return None
    mantissa, _, exp = m.group(1).lower().partition("e")
    if exp and abs(int(exp)) > MAX_EXPONENT:  # 1e999999999 would build a billion-digit integer
        return None
    return Fraction(m.group(1)) * Fraction(units[m.group(2) or default_unit])


def parse_size_bytes(text, source, where):
    """Integer bytes, exactly (``9007199254740993`` is not rounded to 2**53)."""
    from .units import SIZE_UNITS
    s = text.strip() if isinstance(text, str) else str(text)
    val = exact_quantity(s, SIZE_UNITS, "B") if s else None
    if val is None or val.denominator != 1:
        why = "bad size" if val is None else "fractional bytes"
        raise InputError(why, source=source, where=where, value=text,
                         accepted="whole bytes, optionally with a unit (1500, 64KB, 1MB, 1MiB)")
    return int(val)


#: latest flow start, ns: 2**53 ps (about 2.5 hours of simulated time) keeps every picosecond instant exact
#: as a float, which the analytic and flow rate models compute in (a 1 MB flow's FCT drifted by 6 ns at 1e18 ns)
MAX_START_NS = 2**53 // 1000


def parse_start_ns(text, source, where, default_unit="ns"):
    """Integer ns, exactly: a start that is not a whole number of ns (``0.5``, ``1.5ns``, ``1ps``) is refused,
    as fractional sizes are, rather than rounded (it used to become the nearest ns silently)."""
    from fractions import Fraction
    from .units import TIME_UNITS_NS
    units = {k: Fraction(v).limit_denominator(1000) for k, v in TIME_UNITS_NS.items()}
    s = text.strip()
    val = exact_quantity(s, units, default_unit) if s else None
    if val is None or val < 0:
        raise InputError("bad time", source=source, where=where, value=text,
                         accepted=f"a non-negative time, {default_unit} or with a unit (0, 10us, 1ms)")
    if val > MAX_START_NS:
        raise InputError("start time too late", source=source, where=where, value=text,
                         accepted=f"at most {MAX_START_NS} ns = {MAX_START_NS / 1e9:g} s (2**53 ps, about 2.5 hours)")
    if val.denominator != 1:
        raise InputError("not a whole number of ns", source=source, where=where, value=text,
                         accepted="a start time in whole nanoseconds (netsim's flow start resolution), "
                                  "e.g. 1 or 500ns or 0.5us, not 0.5 or 1ps")
    return int(val)
