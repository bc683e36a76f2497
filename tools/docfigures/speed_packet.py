"""docs/packet.md's packet-backend speed, as ratios to the bare SimPy event rate of the same run (slow, ~1–2 min).

Each benchmark measures the raw SimPy event rate (a bare ``yield
env.timeout(1)`` loop) in the same process, around its run, and states its
packet-hops per second as a ratio to it, so the figure does not depend on the
machine's speed; it still moves with the load of a shared machine (±20 % and
more), so each value is the best of :data:`REPEATS` runs, the benchmarks
interleaved, and the ratios are rechecked only within 100 % (:data:`TOLERANCE`):

* ``netsim bench permutation64`` and ``incast16`` (cc none): the wall-clock
  ratio and ``ratio_cpu_time`` (both rates in process CPU time, steadier);
* ``netsim bench incast16_none incast16_cubic incast16_dcqcn incast16_dctcp``
  (16 × 4 MB into one 100 Gb/s port): ``ratio_to_simpy`` of each and each
  algorithm's ratio against ``none``.

Left out: the before/after comparisons with earlier code, which the doc keeps
dated (the earlier code is not in the tree to rerun).
"""
from __future__ import annotations

from . import Figure

SEED = 0                       # the benchmarks' fixed seed
SLOW = True                    # six packet-level benchmarks
DOC = "docs/packet.md"
CCS = ("none", "cubic", "dcqcn", "dctcp")
#: runs of each benchmark, interleaved; each figure is the best (highest ratio) of them
REPEATS = 3
TOLERANCE = {k: 1.0 for k in ("perm_cpu", "perm_wall", "incast_cpu", "incast_wall",
                              *(f"cc_{cc}" for cc in CCS), *(f"cc_{cc}_vs_none" for cc in CCS[1:]))}

FIGURES = [
    Figure("ratios", DOC, "permutation64 CPU-time ratio {perm_cpu:.3f}, incast16 {incast_cpu:.3f}; `netsim bench` "
           "wall ratios {perm_wall:.3f} (permutation64) and {incast_wall:.3f} (incast16)."),
    Figure("cc_cost", DOC, "none {cc_none:.3f}, cubic {cc_cubic:.3f}, dcqcn {cc_dcqcn:.3f}, dctcp {cc_dctcp:.3f}: "
           "against none, cubic {cc_cubic_vs_none:.2f}×, dcqcn {cc_dcqcn_vs_none:.2f}×, dctcp "
           "{cc_dctcp_vs_none:.2f}×."),
]


def measure() -> dict:
    """Packet-hop rates as ratios to the SimPy event rate, and the algorithms' ratios to none."""
    from netsim.bench import load_all
    from netsim.bench import packet as bench_packet
    benches = load_all()
    runs: dict[str, list[float]] = {}
    for _ in range(REPEATS):
        for key, fn in (("perm", bench_packet.permutation64), ("incast", bench_packet.incast16)):
            r = fn()
            runs.setdefault(f"{key}_cpu", []).append(r["ratio_cpu_time"])
            runs.setdefault(f"{key}_wall", []).append(r["ratio"])
        for cc in CCS:
            runs.setdefault(f"cc_{cc}", []).append(benches[f"incast16_{cc}"]()["ratio_to_simpy"])
    out = {k: max(v) for k, v in runs.items()}
    for cc in CCS[1:]:
        out[f"cc_{cc}_vs_none"] = out[f"cc_{cc}"] / out["cc_none"]
    return out
