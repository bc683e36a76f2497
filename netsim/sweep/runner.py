"""Run a sweep's points on Dask and gather one results table.

``run_sweep`` expands the sweep file, skips (with ``resume``) the points whose
folder already holds a successful ``done.json``, submits the rest to a Dask
cluster — a ``LocalCluster`` of ``workers`` single-threaded processes by
default, or the scheduler at ``scheduler`` — and, as each point finishes
(``as_completed``), adds its row and rewrites ``results.csv`` atomically, so an
interrupted sweep keeps every finished point. Progress (done / running /
failed, ETA) goes to stderr on a terminal.

Files under ``DIR``: ``sweep.yaml`` (copy of the sweep file), ``plan.json``
(every point: index, id, varied values, parameters, command line),
``points/<id>/`` (one folder per point), ``results.csv``,
``results.parquet`` and, with ``repetitions`` > 1, ``distribution.csv``
(:mod:`netsim.sweep.repeats`).

Left out: retrying failed points within one run (``--resume`` reruns them),
and shipping files to remote workers — with ``scheduler``, ``DIR`` and the
input files must be visible at the same paths on every worker.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO

from ..errors import InputError
from .point import DONE_FILE, load_done, run_point, write_json_atomic
from .points import Point, expand
from .spec import load_sweep
from .table import make_row, write_csv, write_parquet

POINTS_DIR = "points"
PLAN_FILE = "plan.json"
RESULTS_CSV = "results.csv"
RESULTS_PARQUET = "results.parquet"


@dataclass
class SweepResult:
    """What a sweep did. Counts are points; ``wall_s`` is seconds of this run."""

    out_dir: str
    points: int
    ran: int = 0
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    wall_s: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)
    parquet: bool = False

    @property
    def points_per_s(self) -> float:
        """Points run (not skipped) per wall second."""
        return self.ran / self.wall_s if self.wall_s > 0 else 0.0


class Progress:
    """One overwritten stderr line: ``done/total, running, failed, ETA``."""

    def __init__(self, total: int, already: int, slots: int, stream: TextIO | None):
        self.total, self.already, self.slots, self.stream = total, already, slots, stream
        self.done = self.failed = 0
        self.start = time.perf_counter()

    def update(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += failed
        self.show()

    def show(self) -> None:
        if self.stream is None:
            return
        finished = self.already + self.done
        remaining = self.total - finished
        running = min(remaining, self.slots)
        elapsed = time.perf_counter() - self.start
        eta = "?" if self.done == 0 else _fmt_s(elapsed / self.done * remaining)
        self.stream.write(f"\rsweep: {finished}/{self.total} done, {running} running, "
                          f"{self.failed} failed, elapsed {_fmt_s(elapsed)}, ETA {eta}   ")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()


def _fmt_s(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int):
    """A ``distributed.Client`` on ``scheduler``, or on a fresh LocalCluster; closed on exit."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise InputError("netsim sweep needs dask.distributed", value="import dask.distributed",
                         accepted="pip install 'dask[distributed]' (the netsim[sweep] extra)") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise InputError("cannot reach the Dask scheduler", where="--scheduler", value=scheduler,
                             accepted=f"a running scheduler address like tcp://HOST:8786 ({exc})") from None
        with client:
            yield client
        return
    # no dashboard; the scheduler's small HTTP server (health, metrics) on a free local port
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
                           silence_logs=logging.ERROR)
    with cluster, Client(cluster) as client:
        # Ctrl-C reaches the whole terminal process group: let only this process handle it
        # (it cancels the points and closes the cluster) instead of every worker dying noisily.
        client.run(_ignore_sigint)
        yield client


def _ignore_sigint() -> None:
    """Run on each LocalCluster worker (in its event-loop thread, the main thread)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _prepare_out(out_dir: str, spec_path: str, points: list[Point], resume: bool) -> None:
    plan_path = os.path.join(out_dir, PLAN_FILE)
    points_dir = os.path.join(out_dir, POINTS_DIR)
    if not resume and os.path.isdir(points_dir) and any(
            os.path.exists(os.path.join(points_dir, d, DONE_FILE)) for d in os.listdir(points_dir)):
        raise InputError("output folder already holds a sweep with finished points", where="--out", value=out_dir,
                         accepted="--resume to continue it, or an empty or new folder")
    try:
        os.makedirs(os.path.join(out_dir, POINTS_DIR), exist_ok=True)
    except OSError as exc:  # --out is a file, or under one, or not writable
        raise InputError(f"cannot create the output folder ({exc.strerror})", where="--out", value=out_dir,
                         accepted="a new or existing folder") from None
    copy = os.path.join(out_dir, "sweep.yaml")
    if not (os.path.exists(copy) and os.path.samefile(spec_path, copy)):
        shutil.copyfile(spec_path, copy)
    write_json_atomic(plan_path, {"sweep": os.path.abspath(spec_path),
                                  "points": [p.to_json() for p in points]})


def run_sweep(spec_path: str, out_dir: str, *, scheduler: str | None = None, workers: int | None = None,
              resume: bool = False, progress: TextIO | None = None,
              on_point: Callable[[dict[str, Any]], None] | None = None,
              main: Callable[[list[str]], int] | None = None) -> SweepResult:
    """Run every point of sweep file ``spec_path`` into ``out_dir``.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running Dask scheduler; default: a LocalCluster.
    workers : int, optional
        LocalCluster worker processes (1 thread each); default: CPU count,
        at most the number of points to run.
    resume : bool
        Reuse points whose folder holds a successful ``done.json``.
    progress : text stream, optional
        Where the progress line goes (None: no progress).
    on_point : callable, optional
        Called with each finished row (after ``results.csv`` is rewritten);
        an exception it raises stops the sweep, cluster closed.
    main : callable, optional
        ``argv -> status`` run per point; default :func:`netsim.cli.main`.
    """
    start = time.perf_counter()
    spec = load_sweep(spec_path)
    points = expand(spec)
    axes = list(dict.fromkeys(k for p in points for k in p.axes))
    _prepare_out(out_dir, spec_path, points, resume)
    result = SweepResult(out_dir=out_dir, points=len(points))
    rows: dict[int, dict[str, Any]] = {}
    todo: list[Point] = []
    for p in points:
        done = load_done(os.path.join(out_dir, POINTS_DIR, p.point_id)) if resume else None
        if done is None:
            todo.append(p)
        else:
            rows[p.index] = make_row(p.to_json(), done)
            result.skipped += 1
    csv_path = os.path.join(out_dir, RESULTS_CSV)
    write_csv(csv_path, list(rows.values()), axes)
    if todo:
        n_workers = max(1, min(workers or os.cpu_count() or 1, len(todo)))
        with dask_client(scheduler, n_workers) as client:
            slots = sum(client.nthreads().values()) or n_workers
            bar = Progress(len(points), result.skipped, slots, progress)
            bar.show()
            from dask.distributed import as_completed
            tag = uuid.uuid4().hex[:8]
            folder = os.path.abspath(os.path.join(out_dir, POINTS_DIR))
            futures = {client.submit(run_point, p.to_json(), os.path.join(folder, p.point_id), main,
                                     key=f"netsim-point-{p.index}-{p.point_id}-{tag}", pure=False): p
                       for p in todo}
            try:
                for fut in as_completed(futures):
                    p = futures[fut]
                    try:
                        outcome = fut.result()
                    except Exception as exc:  # worker lost, cancelled, unpicklable ...
                        outcome = {"status": "failed", "error": f"{type(exc).__name__}: {exc}".splitlines()[0],
                                   "wall_s": 0.0, "summary": None}
                    row = make_row(p.to_json(), outcome)
                    rows[p.index] = row
                    result.ran += 1
                    write_csv(csv_path, list(rows.values()), axes)
                    bar.update(failed=row["status"] != "ok")
                    if on_point is not None:
                        on_point(row)
            finally:
                bar.close()
                client.cancel(list(futures))
    ordered = [rows[i] for i in sorted(rows)]
    write_csv(csv_path, ordered, axes)
    result.parquet = write_parquet(os.path.join(out_dir, RESULTS_PARQUET), ordered, axes)
    from .repeats import write_distribution   # distribution.csv: each point's spread over its repetitions
    write_distribution(out_dir, ordered, axes, spec.repetitions)
    result.rows = ordered
    result.ok = sum(r["status"] == "ok" for r in ordered)
    result.failed = sum(r["status"] != "ok" for r in ordered)
    result.wall_s = time.perf_counter() - start
    return result


def default_progress(quiet: bool) -> TextIO | None:
    """stderr when it is a terminal and not ``quiet``; else None."""
    return None if quiet or not sys.stderr.isatty() else sys.stderr


def load_plan(out_dir: str) -> list[dict[str, Any]]:
    """The points of a sweep folder, as written in ``plan.json``."""
    with open(os.path.join(out_dir, PLAN_FILE), encoding="utf-8") as fh:
        return json.load(fh)["points"]
