"""Shipped flow-size CDFs (data, with their sources): the two the HPCC paper evaluates with.

Each is a table of ``(size_bytes, cumulative fraction)`` read as a
piecewise-linear CDF (see :mod:`netsim.traffic.cdf`). Values are the published
tables as the HPCC artifact tabulates them (``traffic_gen/*_distribution.txt``,
cumulative in percent there).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BuiltinCDF:
    """A named, sourced CDF table."""

    points: tuple[tuple[int, float], ...]
    source: str


def _pct(rows):
    return tuple((size, pct / 100.0) for size, pct in rows)


BUILTIN_CDFS: dict[str, BuiltinCDF] = {
    "websearch": BuiltinCDF(_pct((
        (0, 0), (10000, 15), (20000, 20), (30000, 30), (50000, 40), (80000, 53), (200000, 60),
        (1000000, 70), (2000000, 80), (5000000, 90), (10000000, 97), (30000000, 100))),
        "Alizadeh et al., DCTCP, SIGCOMM 2010 (web search cluster), as tabulated by HPCC (Li et al., "
        "SIGCOMM 2019) in traffic_gen/WebSearch_distribution.txt"),
    "fb_hadoop": BuiltinCDF(_pct((
        (0, 0), (100, 1), (200, 2), (300, 5), (350, 15), (400, 20), (500, 30), (600, 40), (700, 50),
        (1000, 60), (2000, 67), (7000, 70), (30000, 72), (50000, 82), (80000, 87), (120000, 90),
        (300000, 95), (1000000, 97.5), (2000000, 99), (10000000, 100))),
        "Roy et al., Inside the Social Network's (Datacenter) Network, SIGCOMM 2015 (Hadoop cluster), as "
        "tabulated by HPCC (Li et al., SIGCOMM 2019) in traffic_gen/FbHdp_distribution.txt"),
}
