"""Run one sweep point, in-process, inside whatever process calls it (a Dask worker).

The point's folder gets ``point.json`` (its parameters) first, then the
command's own outputs (``summary.json``, traces) and the command's stdout and
stderr in ``log.txt``, and last ``done.json`` — the done marker: status
(``ok`` | ``failed``), error message, wall seconds, and the figures computed
from the point's ``fct.csv`` (:mod:`netsim.sweep.figures`). A folder without
``done.json`` is an interrupted point and is run again by ``--resume``.

The command is ``netsim.cli.main(argv)``: exactly what a user would type, so
a point depends on nothing but the documented CLI. A nonzero exit, an
argparse error, an exception or a missing ``summary.json`` all make the point
``failed`` with a one-line message; nothing propagates to the sweep.

Left out: time limits per point, and isolating a point that crashes the
interpreter (Dask then reports the worker lost and the point is failed).
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from typing import Any, Callable

from .figures import fct_figures

POINT_FILE = "point.json"
DONE_FILE = "done.json"
SUMMARY_FILE = "summary.json"
LOG_FILE = "log.txt"

# sys.stdout/stderr are process-wide: points sharing a process run one at a time.
_LOCK = threading.Lock()


def write_json_atomic(path: str, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` via a temporary file and ``os.replace``."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


def _last_error_line(log_path: str) -> str:
    """The last non-empty line of the log, minus a ``netsim CMD: error:`` prefix."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            lines = [ln.strip() for ln in fh.read().splitlines() if ln.strip()]
    except OSError:
        return ""
    for line in reversed(lines):
        if ": error: " in line and line.startswith("netsim"):
            return line.split(": error: ", 1)[1]
    return lines[-1] if lines else ""


def _default_main() -> Callable[[list[str]], int]:
    from ..cli import main
    return main


def run_point(task: dict[str, Any], out_dir: str, main: Callable[[list[str]], int] | None = None) -> dict[str, Any]:
    """Run one point and return its outcome.

    Parameters
    ----------
    task : dict
        :meth:`Point.to_json` of the point.
    out_dir : str
        The point's own folder (created if needed).
    main : callable, optional
        ``argv -> exit status``; defaults to :func:`netsim.cli.main`.

    Returns
    -------
    dict
        ``index``, ``point_id``, ``status`` (ok|failed), ``error`` (str),
        ``wall_s`` (float, seconds) and ``summary`` (dict or None).
    """
    main = main or _default_main()
    os.makedirs(out_dir, exist_ok=True)
    for stale in (DONE_FILE, SUMMARY_FILE):
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(out_dir, stale))
    write_json_atomic(os.path.join(out_dir, POINT_FILE), task)
    argv = list(task["argv"]) + ["--out", out_dir]
    log_path = os.path.join(out_dir, LOG_FILE)
    error = ""
    with _LOCK:
        start = time.perf_counter()
        with open(log_path, "w", encoding="utf-8") as log, \
                contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            try:
                rc = main(argv)
            except SystemExit as exc:  # argparse errors
                rc = exc.code if isinstance(exc.code, int) else 2
            except Exception as exc:  # noqa: BLE001 - any failure is the point's, not the sweep's
                rc, error = 1, f"{type(exc).__name__}: {exc}".splitlines()[0]
        wall_s = time.perf_counter() - start
    summary = None
    if rc == 0:
        try:
            with open(os.path.join(out_dir, SUMMARY_FILE), encoding="utf-8") as fh:
                summary = json.load(fh)
        except (OSError, ValueError) as exc:
            error = f"command succeeded but {SUMMARY_FILE} is unreadable: {exc}"
    elif not error:
        error = _last_error_line(log_path) or f"exit status {rc}"
    if rc == 0 and not error and not isinstance(summary, dict):
        error, summary = f"{SUMMARY_FILE} is not a JSON object", None
    status = "failed" if error else "ok"
    figures = fct_figures(out_dir) if status == "ok" else {}
    done = {"status": status, "error": error, "wall_s": round(wall_s, 6), "exit_status": rc, "figures": figures}
    write_json_atomic(os.path.join(out_dir, DONE_FILE), done)
    return {"index": task["index"], "point_id": task["point_id"], "status": status, "error": error,
            "wall_s": wall_s, "summary": summary if status == "ok" else None, "figures": figures}


def load_done(out_dir: str) -> dict[str, Any] | None:
    """The outcome of a finished point from its folder, or None if it never finished OK."""
    try:
        with open(os.path.join(out_dir, DONE_FILE), encoding="utf-8") as fh:
            done = json.load(fh)
        if done.get("status") != "ok":
            return None
        with open(os.path.join(out_dir, SUMMARY_FILE), encoding="utf-8") as fh:
            summary = json.load(fh)
    except (OSError, ValueError):
        return None
    return {"status": "ok", "error": "", "wall_s": float(done.get("wall_s", 0.0)), "summary": summary,
            "figures": done.get("figures") or {}}
