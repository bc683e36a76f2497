"""Benchmarks (not tests): ``netsim bench [NAME ...]``.

A benchmark is a function registered with :func:`benchmark`; it returns a
dict of figures (wall seconds, packets, packet-hops per wall second, ...).
Speed is reported as a ratio to :func:`simpy_ceiling`, the raw SimPy event
rate measured in the same run, so figures compare across machines and loads.
Modules ``netsim.bench.<area>`` register their benchmarks on import.
"""
from __future__ import annotations

import importlib
import time
from typing import Callable

import simpy

BENCHES: dict[str, Callable[[], dict]] = {}
AREAS = ("packet", "cc", "training", "flow", "flowgpt", "outputs", "routing")


def benchmark(name: str):
    def deco(fn):
        BENCHES[name] = fn
        return fn
    return deco


def load_all() -> dict[str, Callable[[], dict]]:
    for area in AREAS:
        try:
            importlib.import_module(f"{__name__}.{area}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{area}":
                raise
    return BENCHES


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
