"""``--repeat N``: the same run with N seeds, and the distribution of its iteration time.

Repeat k runs with seed ``seed + k`` (the same rule as a sweep's
``repetitions``), so each repeat is exactly ``netsim run --seed SEED+k`` and an
outlier can be rerun alone.  The seed drives every random source, each from
its own stream (:mod:`netsim.runtime.variability`): the ECMP hash salt, the
packet backend's RED/ECN marks, MoE routing and the compute-variability model.

Outputs (``out_dir``): ``repeat_000/`` … one complete run folder per repeat,
``repeats.csv`` (one row per repeat and iteration), ``repeats.png`` (the
distribution; PNG without a software/date stamp, so reruns are
byte-identical) and ``summary.json`` with the sample statistics under
``distribution_s``.  The sample is every iteration of every repeat.

Left out: confidence intervals of the percentiles (only the mean has one)
and repeats run in parallel processes.
"""
from __future__ import annotations

import math
import os

import numpy as np

#: folder of repeat k inside the output directory
REPEAT_DIR = "repeat_{:03d}"
REPEAT_COLUMNS = ("repeat", "seed", "iteration", "iteration_time_s")
#: confidence level of ``distribution_s.mean_ci95_s`` (Student-t interval of the mean)
CI_LEVEL = 0.95
#: largest --repeat (netsim choice: 10^4 runs is already hours; more is a typo)
MAX_REPEATS = 10_000


def repeat_seeds(seed: int, repeats: int) -> list[int]:
    """The seeds of ``repeats`` repeats: seed, seed + 1, …"""
    return [int(seed) + k for k in range(int(repeats))]


def distribution(times_s) -> dict:
    """Sample statistics of iteration times (s): n, mean, std (n-1), min, p50, p95, p99, max, 95 % CI of the mean.

    Percentiles are numpy's linear interpolation between order statistics.
    """
    x = np.asarray(list(times_s), dtype=float)
    n = int(x.size)
    if n == 0 or not np.all(np.isfinite(x)):
        raise ValueError("distribution needs finite iteration times")
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    half = 0.0
    if n > 1:
        from scipy.stats import t
        half = float(t.ppf(0.5 + CI_LEVEL / 2, n - 1)) * std / math.sqrt(n)
    p50, p95, p99 = (float(v) for v in np.percentile(x, [50, 95, 99]))
    mean = float(x.mean())
    return {"n": n, "mean": mean, "std": std, "min": float(x.min()), "p50": p50, "p95": p95, "p99": p99,
            "max": float(x.max()), "mean_ci95_s": [mean - half, mean + half]}


def plot_distribution(times_s, stats: dict, path: str, title: str) -> None:
    """Histogram of the iteration times with the mean and p50/p95/p99 marked; a deterministic PNG."""
    from matplotlib.figure import Figure
    ms = np.asarray(times_s, dtype=float) * 1e3
    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.subplots()
    bins = max(1, min(50, int(math.ceil(math.sqrt(ms.size)))))
    lo, hi = float(ms.min()), float(ms.max())
    if hi <= lo:                                  # every time equal: one visible bar
        lo, hi = lo * (1 - 1e-6) - 1e-9, hi * (1 + 1e-6) + 1e-9
    ax.hist(ms, bins=bins, range=(lo, hi), color="#4C72B0", alpha=0.8)
    for key, style in (("mean", "-"), ("p50", "--"), ("p95", "-."), ("p99", ":")):
        ax.axvline(stats[key] * 1e3, color="#C44E52", linestyle=style, label=f"{key} {stats[key] * 1e3:.4g} ms")
    ax.set_xlabel("iteration time (ms)")
    ax.set_ylabel("iterations")
    ax.set_title(title)
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})


def run_repeats(graph, workload, *, repeats: int, seed: int = 0, out_dir=None, after_run=None, **kwargs) -> dict:
    """Run :func:`netsim.runtime.run_training` ``repeats`` times with seeds seed, seed+1, …

    Parameters
    ----------
    repeats : int
        Number of runs (1 … :data:`MAX_REPEATS`).
    out_dir : str, optional
        Where ``repeat_NNN/``, ``repeats.csv``, ``repeats.png`` and ``summary.json`` go.
    after_run : callable(run_dir, seed), optional
        Called after each repeat that has a folder (the CLI writes trace.json/Parquet there).
    **kwargs
        Passed to ``run_training`` (backend, cc, params, iterations, variability, ...).

    Returns
    -------
    dict
        The repeat summary (what ``summary.json`` holds), plus ``paths``.
    """
    from ..errors import InputError
    from .api import run_training
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= MAX_REPEATS:
        raise InputError("must be an integer", where="--repeat", value=repeats, accepted=f"1 to {MAX_REPEATS}")
    if out_dir is not None:
        import contextlib

        from ..runfiles import prepare_out_dir
        prepare_out_dir(out_dir)                  # summary.json (the commit marker) goes first
        for name in ("repeats.csv", "repeats.png"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(os.fspath(out_dir), name))
    rows, runs, first = [], [], None
    try:
        for k, s in enumerate(repeat_seeds(seed, repeats)):
            sub = None if out_dir is None else os.path.join(os.fspath(out_dir), REPEAT_DIR.format(k))
            summ = run_training(graph, workload, seed=s, out_dir=sub, **kwargs)
            if sub is not None and after_run is not None:
                after_run(sub, s)
            first = first or summ
            runs.append(REPEAT_DIR.format(k))
            rows += [(k, s, i, t) for i, t in enumerate(summ["iteration_times_s"])]
    except BaseException as exc:          # interrupted or failed: say so at the top, keep what finished
        if out_dir is not None:
            _stopped(out_dir, exc, seed, repeats, runs, rows)
        raise
    times = [r[3] for r in rows]
    stats = distribution(times)
    out = {key: first.get(key) for key in ("workload", "workload_source", "topology", "backend", "cc")}
    out.update({"seed": int(seed), "repeats": repeats, "seeds": repeat_seeds(seed, repeats),
                "iterations": first["iterations"], "runs": runs if out_dir is not None else [],
                "iteration_times_s": times, "iteration_time_s": stats["mean"], "distribution_s": stats})
    out["paths"] = {}
    if out_dir is not None:
        _write(out_dir, out, rows, times, stats)
    return out


def _stopped(out_dir, exc: BaseException, seed: int, repeats: int, runs: list, rows: list) -> None:
    """The top-level ``summary.json`` of a stopped ``--repeat`` run: its status and the repeats that finished."""
    from ..records import write_rows
    from ..runfiles import status_of, write_summary
    d = os.fspath(out_dir)
    n = write_rows(os.path.join(d, "repeats.csv"), REPEAT_COLUMNS, rows)
    doc = {"seed": int(seed), "repeats": repeats, "seeds": repeat_seeds(seed, repeats), "runs": runs,
           "repeats_finished": len(runs), "iteration_times_s": [r[3] for r in rows]}
    write_summary(d, doc, status_of(exc), None, {"repeats.csv": n})


def _write(out_dir, out: dict, rows, times, stats) -> None:
    from ..records import write_rows
    from ..runfiles import COMPLETE, write_summary
    d = os.fspath(out_dir)
    paths = {"repeats": os.path.join(d, "repeats.csv"), "plot": os.path.join(d, "repeats.png"),
             "summary": os.path.join(d, "summary.json")}
    n = write_rows(paths["repeats"], REPEAT_COLUMNS, rows)
    plot_distribution(times, stats, paths["plot"], f"{out['workload']}: {out['repeats']} repeats "
                                                   f"({out['backend']})")
    doc = {k: v for k, v in out.items() if k != "paths"}
    write_summary(d, doc, COMPLETE, None, {"repeats.csv": n})
    out["paths"] = paths
