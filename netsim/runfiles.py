"""The life cycle of a run's output folder: nothing lost on failure, nothing misread after a kill.

Protocol (``netsim run``, ``netsim flows`` and their Python twins):

1. :func:`prepare_out_dir` removes ``summary.json`` first (the commit
   marker), then the outputs a previous run left under netsim's own names
   (tables, Parquet copies, ``trace.json``, ``report.html``, ``fct.txt``,
   leftover ``*.partial``). Other files in the folder are kept.
2. Every file is written under ``NAME.partial`` and renamed to ``NAME`` when
   whole (:func:`netsim.records.atomic_output`, :class:`netsim.records.CsvSink`).
3. Whatever ends the run — success, an error, SIGINT/SIGTERM
   (:mod:`netsim.interrupts`) — the sinks are closed (every row received is
   in its file) and ``summary.json`` is written last with :data:`STATUS_KEY`
   (``complete``, ``failed: <reason>``, ``interrupted``, or
   ``writing outputs`` while the derived trace/Parquet files are produced),
   ``sim_time_ns`` (simulated time reached) and ``outputs`` (rows per file).

Flow records: ``fct.csv`` by default, ``fct_ops.csv`` or nothing with
``--fct per-op|off`` (:mod:`netsim.fctmodes`).

4. :func:`finalize_outputs` (the CLI's post-run step) sets ``writing
   outputs``, writes the Parquet copies and ``trace.json`` (each atomically)
   and writes ``summary.json`` again, last.

5. A run refused before it starts (an input error, exit 2) into a folder
   that already exists: :func:`record_refusal` removes the previous run's
   outputs as step 1 does and writes ``summary.json`` with ``failed: <the
   one error line>`` and no outputs, so the folder never shows an earlier
   run's complete results as if they were this command's.

A reader (:func:`netsim.analysis.load_run`) treats a folder without
``summary.json``, with a status other than ``complete``, or with ``.partial``
leftovers as incomplete, says so, and still shows the whole files it has.
"""
from __future__ import annotations

import contextlib
import glob
import os

from .records import PARTIAL_SUFFIX, write_json

STATUS_KEY = "status"
COMPLETE = "complete"
INTERRUPTED = "interrupted"
WRITING = "writing outputs"
SUMMARY_FILE = "summary.json"

#: Tables a run writes as ``NAME.csv`` (and ``NAME.parquet``).
TABLE_FILES = ("fct", "ops", "queues", "pfc", "cc", "traffic_matrix", "message_sizes", "fct_ops")
#: Other files netsim writes into a run folder.
OTHER_FILES = ("trace.json", "report.html", "fct.txt")


#: folders :func:`prepare_out_dir` has prepared in this process (their summary is the run's own)
_PREPARED: set[str] = set()


def prepare_out_dir(out_dir: str | os.PathLike) -> str:
    """Create ``out_dir`` and remove a previous run's outputs, ``summary.json`` first."""
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    _PREPARED.add(os.path.realpath(out_dir))
    names = [SUMMARY_FILE] + [t + ext for t in TABLE_FILES for ext in (".csv", ".parquet")] + list(OTHER_FILES)
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(out_dir, name))
    for p in partial_files(out_dir):
        with contextlib.suppress(FileNotFoundError):
            os.remove(p)
    return out_dir


def forget_prepared() -> None:
    """A new command begins (:func:`netsim.cli.main`): no folder is this command's yet."""
    _PREPARED.clear()


def record_refusal(out_dir: str | os.PathLike | None, message: str) -> bool:
    """A run refused before it began: clear ``out_dir``'s previous outputs and say so in ``summary.json``.

    Only for a folder that exists and that no run of this process has
    prepared (a run that started writes its own ``failed: ...`` summary,
    :func:`stopped_run`). A folder that does not exist is not created.
    Never raises; returns whether the summary was written.

    >>> import tempfile, json
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "fct.csv"), "w").write("old")
    >>> record_refusal(d, "run.yaml: field x: bad")
    True
    >>> sorted(os.listdir(d)), json.load(open(os.path.join(d, SUMMARY_FILE)))[STATUS_KEY]
    (['summary.json'], 'failed: run.yaml: field x: bad')
    """
    if not out_dir or not os.path.isdir(out_dir) or os.path.realpath(out_dir) in _PREPARED:
        return False
    try:
        prepare_out_dir(out_dir)
        write_summary(out_dir, {}, "failed: " + message.strip().splitlines()[0], 0, {})
    except OSError:
        return False
    return True


def partial_files(out_dir: str | os.PathLike) -> list[str]:
    """Files of ``out_dir`` still under their temporary ``.partial`` name (sorted)."""
    return sorted(glob.glob(os.path.join(glob.escape(os.fspath(out_dir)), "*" + PARTIAL_SUFFIX)))


def one_line(exc: BaseException) -> str:
    """``exc`` as the one-line reason of a ``failed: ...`` status."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def status_of(exc: BaseException | None) -> str:
    """The status a run ended with: ``complete``, ``interrupted`` or ``failed: <reason>``."""
    if exc is None:
        return COMPLETE
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED
    from .errors import NetsimError
    return "failed: " + (str(exc).strip().splitlines()[0] if isinstance(exc, NetsimError) else one_line(exc))


def close_sinks(sinks: dict) -> dict[str, int]:
    """Close every sink (``{file name: sink}``), even if some fail; return rows written per file."""
    counts, first = {}, None
    for name, sink in sinks.items():
        try:
            sink.close()
        except Exception as exc:  # noqa: BLE001 - close the others; the caller reports the run's error
            first = first or exc
        counts[name] = int(sink.count)       # a netsim.sinks.Sink
    if first is not None:
        raise first
    return counts


def write_summary(out_dir: str | os.PathLike, summary: dict, status: str, sim_time_ns: int | None,
                  outputs: dict[str, int]) -> dict:
    """Add ``status``, ``sim_time_ns`` and ``outputs`` to ``summary`` and write it (atomically) as the commit marker."""
    summary[STATUS_KEY] = status
    if sim_time_ns is not None:
        summary["sim_time_ns"] = int(sim_time_ns)
    summary["outputs"] = dict(sorted({**summary.get("outputs", {}), **outputs}.items()))
    write_json(os.path.join(os.fspath(out_dir), SUMMARY_FILE), _without_machine_times(summary))
    return summary


#: keys that measure this machine, not the simulation: kept in the returned summary (benchmarks read them),
#: left out of summary.json so identical runs give identical files (only top-level ``wall_time_s`` differs)
MACHINE_TIME_KEYS = ("recompute_wall_s",)


def _without_machine_times(doc):
    """``doc`` without :data:`MACHINE_TIME_KEYS` at any depth (a copy; ``doc`` is left as it is)."""
    if isinstance(doc, dict):
        return {k: _without_machine_times(v) for k, v in doc.items() if k not in MACHINE_TIME_KEYS}
    if isinstance(doc, list):
        return [_without_machine_times(v) for v in doc]
    return doc


def stopped_run(out_dir, summary: dict, sinks: dict, exc: BaseException, sim_time_ns: int | None) -> None:
    """After a failure or interrupt: close ``sinks`` and write ``summary.json`` saying what happened.

    Never raises (the run's own exception is what the caller re-raises); a
    further interrupt meanwhile is held back (:func:`netsim.interrupts.deferred`).
    """
    from .interrupts import deferred
    with deferred(raise_pending=False):
        try:
            outputs = close_sinks(sinks)
        except Exception:  # noqa: BLE001 - the files that could be closed are; report the run's error
            outputs = {n: int(s.count) for n, s in sinks.items()}
        with contextlib.suppress(Exception):
            write_summary(out_dir, summary, status_of(exc), sim_time_ns, outputs)


def finalize_outputs(out_dir: str, graph=None, seed: int = 0, *, trace: bool = True) -> list[str]:
    """The post-run step of ``netsim flows`` and ``netsim run``: Parquet copies and ``trace.json``.

    Writes ``NAME.parquet`` next to each ``NAME.csv``
    (:func:`netsim.analysis.io.write_parquet`, streamed in chunks; a no-op
    without pyarrow) and ``trace.json`` (Chrome trace-event format, streamed,
    aggregated beyond :data:`netsim.analysis.trace.MAX_TRACE_EVENTS`;
    :func:`netsim.analysis.trace.write_trace`; skipped with
    ``trace=False``). Both only read what the run already wrote: a failure
    prints one warning line on stderr and the run's results stay as they are.

    ``summary.json`` says ``status: writing outputs`` meanwhile and is written
    again last (``complete``, with the files' row/event counts under
    ``outputs`` and the trace's mode under ``trace``); an interrupt here leaves
    ``status: interrupted`` and is re-raised.

    Parameters
    ----------
    out_dir : str
        The run's output directory.
    graph : networkx.Graph or str, optional
        The topology (or its spec, loaded here) to place flows on their links.
    seed : int
        The run's seed (ECMP hashing of the flows' paths).
    trace : bool
        Write ``trace.json`` (``--no-trace`` turns it off).

    Returns
    -------
    list of str
        Paths written.
    """
    import json

    from .interrupts import deferred
    sp = os.path.join(out_dir, SUMMARY_FILE)
    summary = None
    written: list[str] = []
    if os.path.exists(sp):
        with open(sp, encoding="utf-8") as fh:
            summary = json.load(fh)
    final = summary.get("status", COMPLETE) if summary is not None else COMPLETE
    try:
        # an interrupt from the moment "writing outputs" is on disk to the last write says "interrupted"
        if summary is not None:
            with deferred():
                write_summary(out_dir, summary, WRITING, None, {})
        outputs = _derived_outputs(out_dir, graph, seed, trace, written, summary)
        if summary is not None:
            with deferred():
                write_summary(out_dir, summary, final, None, outputs)
    except BaseException as exc:
        if summary is not None:
            with deferred(raise_pending=False):
                write_summary(out_dir, summary, status_of(exc), None, {})
        raise
    return written


def _warn(what: str, exc: Exception) -> None:
    import sys
    msg = str(exc).splitlines()[0] if str(exc) else ""
    print(f"netsim: warning: {what} not written ({type(exc).__name__}: {msg})", file=sys.stderr)


def _derived_outputs(out_dir, graph, seed, trace, written, summary) -> dict[str, int]:
    """Parquet copies then trace.json; a failure of either is one warning line. Returns rows per file."""
    outputs: dict[str, int] = {}
    try:
        from .analysis.io import write_parquet_counts
        for path, rows in write_parquet_counts(out_dir):
            written.append(path)
            outputs[os.path.basename(path)] = rows
    except Exception as exc:  # noqa: BLE001 - the run's results must survive any conversion problem
        _warn("Parquet copies", exc)
    if trace:
        try:
            from .analysis import trace as trace_mod
            if isinstance(graph, (str, os.PathLike)):
                from .topology import load_topology
                graph = load_topology(os.fspath(graph))
            info: dict = {}
            written.append(trace_mod.write_trace(out_dir, graph=graph, seed=seed, info=info))
            outputs["trace.json"] = int(info.get("events", 0))
            if summary is not None:
                summary["trace"] = info
        except Exception as exc:  # noqa: BLE001 - the run's results must survive any trace problem
            _warn("trace.json", exc)
    return outputs
