"""Exact memoisation of repeated collectives against memo off (docs/packet.md, "Exact memoisation").

Eight ring all-reduces of 64 MiB across 16 servers on one 100 Gb/s switch
(``star(16)`` of the packet tests), DCQCN, seed 0, each 100 us after the
previous one's end, on one packet backend with ``memo`` off and on. Figures:
events off and on and their ratio (the first two steps are simulated: the
first starts from a network that never carried a packet, so the second's
start state differs; the last six are replayed, so the ratio is 8 / 2 less
the replays' own events), hits, whether every fct row and counter is the
same (1 = identical), CPU and wall seconds of each run. Times are rechecked
only within 400 % (another process on the machine moves them).
"""
from __future__ import annotations

import os
import sys
import time

from . import ROOT, Figure

SEED = 0
SLOW = True                    # about 6 minutes of CPU (the memo-off run ~4.5 min)
STEPS = 8
TOLERANCE = {k: 4.0 for k in ("cpu_off_s", "cpu_on_s", "cpu_ratio", "wall_off_s", "wall_on_s", "wall_ratio")}

FIGURES = [
    Figure("ring", "docs/packet.md", "| {steps} ring all-reduces of 64 MiB, 16 servers (DCQCN), 100 us apart | "
           "{events_off:,} / {events_on:,} ({ratio:.2f}x; {hits} replayed) | {cpu_off_s:.0f} s / {cpu_on_s:.0f} s "
           "({cpu_ratio:.1f}x; wall {wall_off_s:.0f} s / {wall_on_s:.0f} s) | identical: {identical} |"),
]


def _run(memo: bool) -> tuple:
    """(fct rows, stats, CPU seconds, wall seconds) of the steps with ``memo`` off or on."""
    import simpy
    from netsim.backends.base import TraceSinks, create_backend
    from netsim.collectives.api import run_collective
    from netsim.records import ListSink
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "packet"))
    from pkt_helpers import star
    env = simpy.Environment()
    b = create_backend("packet", star(16), env=env, cc="dcqcn", seed=SEED, params={"memo": memo},
                       sinks=TraceSinks(fct=ListSink()))

    def driver(env):
        for _ in range(STEPS):
            yield run_collective(b, "allreduce", [f"h{i}" for i in range(16)], 64 * 2**20, algorithm="ring")
            yield env.timeout(100_000_000)

    env.process(driver(env))
    t, w = time.process_time(), time.perf_counter()
    env.run()
    return b.sink.rows, b.stats(), time.process_time() - t, time.perf_counter() - w


def measure() -> dict:
    rows_off, s_off, cpu_off, wall_off = _run(False)
    rows_on, s_on, cpu_on, wall_on = _run(True)
    same = rows_off == rows_on and {k: v for k, v in s_off.items() if k != "events"} == \
        {k: v for k, v in s_on.items() if k not in ("events", "memo")}
    return {"steps": STEPS, "events_off": s_off["events"], "events_on": s_on["events"],
            "ratio": s_off["events"] / s_on["events"], "hits": s_on["memo"]["hits"], "identical": int(same),
            "cpu_off_s": cpu_off, "cpu_on_s": cpu_on, "cpu_ratio": cpu_off / cpu_on,
            "wall_off_s": wall_off, "wall_on_s": wall_on, "wall_ratio": wall_off / wall_on}


def measure_gpt() -> dict:
    """The small GPT step (``netsim run topologies/leaf_spine_64gpu.yaml workloads/gpt-3b-t2p2d8-small.yaml
    --backend packet --iterations 2 --memo on``): the ``memo`` block of its summary (not a figure: ~2 min)."""
    import json
    import tempfile
    from netsim.cli import main
    with tempfile.TemporaryDirectory() as d:
        main(["run", os.path.join(ROOT, "topologies", "leaf_spine_64gpu.yaml"),
              os.path.join(ROOT, "workloads", "gpt-3b-t2p2d8-small.yaml"), "--backend", "packet", "--iterations",
              "2", "--memo", "on", "--out", d, "--quiet"])
        with open(os.path.join(d, "summary.json"), encoding="utf-8") as fh:
            return json.load(fh)["network"]["memo"]
