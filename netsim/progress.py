"""Progress display for long SimPy runs: simulated time reached, events per
second and an ETA, on one self-rewriting stderr line.

Cheap by construction: no per-event hook and no extra SimPy event. When the
display is active, :meth:`Progress.run` drives the environment itself with
``env.step()`` — exactly what ``env.run()`` does inside, with the same stop
event, so results are identical whether progress is shown or not — and looks
at the wall clock once every ``check_every`` events (default 4096). When the
display is off (``quiet=True`` or stderr is not a terminal) it simply calls
``env.run(until)``: zero overhead.

ETA: from simulated time when ``total_ps`` (the end time) is known; or from
work done when ``work`` (a callable returning e.g. completed flows or bytes)
and ``total_work`` are given. Otherwise the line shows time reached and rate.

Usage in a runner::

    from netsim.progress import Progress, run_with_progress
    run_with_progress(env, until=None, quiet=args.quiet, label="flows",
                      work=lambda: backend.completed, total_work=len(flows))
    # or
    with Progress(env, total_ps=end_ps, quiet=quiet, label="run") as p:
        p.run(until=end_ps)

Left out: multi-line/tqdm bars, progress inside Dask workers (always quiet).
"""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from simpy.core import EmptySchedule, StopSimulation
from simpy.events import URGENT, Event

from .gctune import tuned_gc
from .units import PS_PER_NS, format_time_ns


def _fmt_wall(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


class Progress:
    """A one-line progress reporter bound to a SimPy environment.

    Parameters
    ----------
    env : simpy.Environment   time in ps (the netsim convention).
    total_ps : int, optional  simulated end time, for the percentage and ETA.
    quiet : bool              never print.
    label : str               prefix of the line.
    work, total_work          callable returning work done so far, and the total (ETA by work).
    stream : file             default ``sys.stderr``; shown only if it is a tty.
    interval_s : float        minimum wall seconds between two redraws.
    check_every : int         events between two wall-clock checks.
    """

    def __init__(self, env, total_ps: int | None = None, quiet: bool = False, label: str = "",
                 work: Callable[[], float] | None = None, total_work: float | None = None,
                 stream: TextIO | None = None, interval_s: float = 0.5, check_every: int = 4096):
        self.env = env
        self.total_ps = total_ps
        self.label = label
        self.work, self.total_work = work, total_work
        self.stream = stream if stream is not None else sys.stderr
        self.interval_s = interval_s
        self.check_every = max(1, int(check_every))
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = not quiet and bool(isatty and isatty())
        self.events = 0
        self._t0 = self._last = 0.0
        self._shown = False

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "Progress":
        self._t0 = self._last = time.perf_counter()
        return self

    def close(self) -> None:
        """Draw the final line and end it with a newline (if anything was drawn)."""
        if self.enabled and self._shown:
            self._draw(time.perf_counter(), final=True)
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> "Progress":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- running -----------------------------------------------------------
    def run(self, until=None):
        """Like ``env.run(until)`` (number or event), drawing progress if enabled.

        The run uses :func:`netsim.gctune.tuned_gc` (fewer full garbage collections)."""
        with tuned_gc():
            return self._run(until)

    def _run(self, until):
        env = self.env
        if not self.enabled:
            return env.run(until)
        if not self._t0:
            self.start()
        if until is not None:
            if not isinstance(until, Event):
                at = until if isinstance(until, int) else float(until)
                if at <= env.now:
                    raise ValueError(f"until ({at}) must be greater than the current simulation time")
                if self.total_ps is None:
                    self.total_ps = at
                until = Event(env)
                until._ok, until._value = True, None
                env.schedule(until, URGENT, at - env.now)
            elif until.callbacks is None:
                return until.value
            until.callbacks.append(StopSimulation.callback)
        step, k = env.step, self.check_every
        i = 0
        try:
            while True:
                for i in range(k):
                    step()
                self.events += k
                i = 0
                self.update()
        except StopSimulation as exc:
            self.events += i + 1
            return exc.args[0]
        except EmptySchedule:
            self.events += i
            if until is not None:
                raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}') from None
        return None

    def update(self) -> None:
        """Redraw if enabled and ``interval_s`` has passed (call from a runner's own loop too)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last >= self.interval_s:
            self._draw(now)
            self._last = now

    def line(self, wall_now: float | None = None) -> str:
        """The text of the progress line (exposed for tests)."""
        wall = (wall_now or time.perf_counter()) - self._t0
        sim_ps = self.env.now
        parts = [self.label] if self.label else []
        parts.append(f"sim {format_time_ns(float(f'{sim_ps / PS_PER_NS:.4g}'))}")
        if wall > 0 and self.events:
            parts.append(f"{self.events / wall / 1e3:.0f}k ev/s")
        frac = None
        if self.work is not None and self.total_work:
            frac = min(1.0, float(self.work()) / float(self.total_work))
        elif self.total_ps:
            frac = min(1.0, sim_ps / self.total_ps)
        if frac is not None:
            parts.append(f"{100 * frac:.0f}%")
            if 0 < frac < 1:
                parts.append(f"ETA {_fmt_wall(wall * (1 - frac) / frac)}")
        parts.append(f"wall {_fmt_wall(wall)}")
        return " | ".join(parts)

    def _draw(self, now: float, final: bool = False) -> None:
        text = self.line(now)
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()
        self._shown = True


def run_with_progress(env, until=None, quiet: bool = False, label: str = "", total_ps: int | None = None,
                      work: Callable[[], float] | None = None, total_work: float | None = None,
                      stream: TextIO | None = None):
    """``env.run(until)`` with a progress line on a terminal; returns what ``env.run`` returns."""
    with Progress(env, total_ps=total_ps, quiet=quiet, label=label, work=work, total_work=total_work,
                  stream=stream) as p:
        return p.run(until)
