"""Benchmarks (not tests): ``netsim bench [NAME ...]``.

A benchmark is a function registered with :func:`benchmark`; it returns a
dict of figures (wall seconds, packets, packet-hops per wall second, ...).
Speed is reported as a ratio to :func:`simpy_ceiling`, the raw SimPy event
rate measured in the same run, so figures compare across machines and loads.
Modules ``netsim.bench.<area>`` register their benchmarks on import.
"""
from __future__ import annotations

import importlib
import os
import re
import time
from typing import Callable

import simpy

BENCHES: dict[str, Callable[[], dict]] = {}
AREAS = ("packet", "cc", "training", "flow", "flowgpt", "outputs", "routing", "simai")


def benchmark(name: str):
    def deco(fn):
        BENCHES[name] = fn
        return fn
    return deco


def load_all() -> dict[str, Callable[[], dict]]:
    """Every benchmark of every area (imports them all)."""
    for area in AREAS:
        _import_area(area)
    return BENCHES


def load(names=()) -> dict[str, Callable[[], dict]]:
    """The benchmarks, importing only the areas that define ``names`` (:func:`area_names`); every
    area when ``names`` is empty or names one that no area defines (then the caller reports it)."""
    where = area_names() if names else {}
    areas = {where.get(n) for n in names}
    if not names or None in areas:
        return load_all()
    for area in sorted(areas):
        _import_area(area)
    return BENCHES


def area_names() -> dict[str, str]:
    """Benchmark name -> area, read from each area's source (its ``@benchmark("NAME")`` lines) without
    importing it: a run of one benchmark compiles one area, not seven."""
    out = {}
    here = os.path.dirname(os.path.abspath(__file__))
    for area in AREAS:
        try:
            with open(os.path.join(here, f"{area}.py"), encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            continue
        for name in _BENCH_LINE.findall(text):
            out.setdefault(name, area)
    return out


_BENCH_LINE = re.compile(r'^@benchmark\("([^"]+)"\)', re.MULTILINE)


def _import_area(area: str) -> None:
    try:
        importlib.import_module(f"{__name__}.{area}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{area}":
            raise


def simpy_ceiling(events: int = 400_000) -> float:
    """Events per wall second of a bare ``yield env.timeout(1)`` loop."""
    env = simpy.Environment()

    def loop(env):
        for _ in range(events):
            yield env.timeout(1)

    env.process(loop(env))
    t0 = time.perf_counter()
    env.run()
    return events / (time.perf_counter() - t0)
