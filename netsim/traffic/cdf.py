"""Flow-size distributions: a piecewise-linear CDF of bytes, its exact moments, inverse-CDF sampling.

Modelled: the distribution a CDF table describes when read the way the
data-centre literature uses it (DCTCP's WebSearch, Roy et al.'s Facebook
Hadoop; HPCC's ``traffic_gen`` files): between two points ``(x_i, F_i)`` and
``(x_{i+1}, F_{i+1})`` the size is uniform, and a zero-width step is an atom.
A flow's size in bytes is the integer ``S = max(1, ceil(X))`` of that
``X``, which keeps every table point exact: ``P(S ≤ k) = P(X ≤ k) = F(k)`` for
every integer ``k ≥ 1``, atoms included, and never yields a zero-byte flow
(HPCC's generator truncates instead, 0.5 byte low on average). Its mean and second
moment are computed in closed form over the integer distribution (no
sampling), so an arrival rate derived from them offers exactly the load asked
for.

Left out: fitted parametric forms (Pareto, log-normal) — give their table.

File format (HPCC's): one ``size cumulative`` pair per line, the cumulative
column in percent (0..100) or as a fraction (0..1), whichever the last line
shows; ``#`` comments and blank lines are ignored.

>>> cdf = SizeCDF.from_points([(0, 0.0), (100, 0.5), (100, 1.0)], name="toy")
>>> round(cdf.mean_bytes, 6)   # half uniform on (0,100]: E[ceil X] = 50.5; half the atom at 100
75.25
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .cdfdata import BUILTIN_CDFS


@dataclass(frozen=True)
class SizeCDF:
    """A flow-size CDF: ``sizes_bytes[i]`` with cumulative probability ``cum[i]`` (0 → 1)."""

    name: str
    sizes_bytes: tuple[float, ...]
    cum: tuple[float, ...]

    @classmethod
    def from_points(cls, points, name: str = "cdf", source: str | None = None) -> "SizeCDF":
        """Validate ``(size_bytes, cumulative)`` pairs (cumulative as a fraction) into a :class:`SizeCDF`."""
        src = source or name
        pts = [(float(x), float(c)) for x, c in points]
        if len(pts) < 2:
            raise InputError("a CDF needs at least two points", source=src, value=len(pts),
                             accepted="'size cumulative' lines, the first at cumulative 0, the last at 100 (or 1)")
        for i, (x, c) in enumerate(pts):
            if not (math.isfinite(x) and math.isfinite(c)) or x < 0 or not 0.0 <= c <= 1.0:
                raise InputError("a CDF point must be a finite size ≥ 0 with a cumulative in [0, 1]",
                                 source=src, where=f"point {i + 1}", value=(x, c))
            if i and (x < pts[i - 1][0] or c < pts[i - 1][1]):
                raise InputError("CDF points must be non-decreasing in both size and cumulative",
                                 source=src, where=f"point {i + 1}", value=(x, c))
        if pts[0][1] != 0.0 or abs(pts[-1][1] - 1.0) > 1e-12:
            raise InputError("a CDF must start at cumulative 0 and end at 100 % (or 1)", source=src,
                             value=(pts[0][1], pts[-1][1]))
        return cls(name, tuple(x for x, _ in pts), tuple(c for _, c in pts))

    # -- moments of the integer size S = max(1, ceil(X)) ---------------------------------------
    def _segments(self):
        xs, cs = self.sizes_bytes, self.cum
        for i in range(len(xs) - 1):
            p = cs[i + 1] - cs[i]
            if p > 0:
                yield xs[i], xs[i + 1], p

    @property
    def mean_bytes(self) -> float:
        """``E[S]``, exact: on a segment of width > 0, ``E[ceil X] = E[floor X] + 1`` in closed form;
        an atom at ``x`` contributes ``max(1, ceil(x))``."""
        total = 0.0
        for a, b, p in self._segments():
            if b == a:
                total += p * max(1, math.ceil(a))
            else:
                total += p * ((_floor_integral(b) - _floor_integral(a)) / (b - a) + 1.0)
        return total

    @property
    def second_moment_bytes2(self) -> float:
        """``E[S²]`` within about a byte²: ``E[X²] + E[X] + 1/3`` (S − X is near-uniform on [0, 1))."""
        ex2 = ex = 0.0
        for a, b, p in self._segments():
            ex2 += p * (a * a + a * b + b * b) / 3.0
            ex += p * (a + b) / 2.0
        return ex2 + ex + 1.0 / 3.0

    def cdf_at(self, size_bytes) -> np.ndarray:
        """``P(S ≤ k)`` for integer sizes ``k ≥ 1`` (= the table's F(k), linearly interpolated)."""
        k = np.asarray(size_bytes, dtype=float)
        return np.interp(k, self.sizes_bytes, self.cum, left=0.0, right=1.0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` integer sizes (int64) by inverse transform of uniform draws from ``rng``."""
        u = rng.random(n)
        x = np.interp(u, self.cum, self.sizes_bytes)
        return np.maximum(np.ceil(x).astype(np.int64), 1)


def _floor_integral(y: float) -> float:
    """``∫_0^y floor(t) dt`` for ``y ≥ 0``: ``n(n−1)/2 + n(y−n)`` with ``n = floor(y)``."""
    n = math.floor(y)
    return n * (n - 1) / 2.0 + n * (y - n)


def parse_cdf_text(text: str, source: str) -> SizeCDF:
    """Read HPCC-style ``size cumulative`` lines (percent or fraction) into a :class:`SizeCDF`."""
    rows = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.replace(",", " ").split()
        if len(fields) != 2:
            raise InputError("a CDF line holds two numbers, size and cumulative", source=source,
                             where=f"line {lineno}", value=raw.strip()[:80])
        try:
            rows.append((float(fields[0]), float(fields[1]), lineno))
        except ValueError:
            raise InputError("not a number", source=source, where=f"line {lineno}", value=raw.strip()[:80],
                             accepted="'size_bytes cumulative', e.g. '10000 15'") from None
    if not rows:
        raise InputError("no CDF points", source=source, accepted="'size cumulative' lines")
    scale = 100.0 if rows[-1][1] > 1.0 else 1.0
    if rows[-1][1] not in (1.0, 100.0):
        raise InputError("the last CDF point must be at 100 (percent) or 1 (fraction)", source=source,
                         where=f"line {rows[-1][2]}", value=rows[-1][1])
    name = source.rsplit("/", 1)[-1]
    return SizeCDF.from_points([(x, c / scale) for x, c, _ in rows], name=name, source=source)


def load_cdf(spec: str) -> SizeCDF:
    """A shipped CDF by name (``websearch``, ``fb_hadoop``) or a CDF file's path."""
    key = spec.lower().replace("-", "_")
    if key in BUILTIN_CDFS:
        return SizeCDF.from_points(BUILTIN_CDFS[key].points, name=key)
    try:
        with open(spec, encoding="utf-8") as fh:
            text = fh.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise InputError("no such CDF", where="CDF", value=spec,
                         accepted=f"one of {', '.join(sorted(BUILTIN_CDFS))} or a CDF file") from None
    except UnicodeDecodeError:
        raise InputError("not a text file", source=spec, accepted="'size cumulative' lines") from None
    return parse_cdf_text(text, spec)
