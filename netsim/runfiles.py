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

Flow records (``--fct``, :data:`FCT_MODES`): ``per-flow`` (default) writes
``fct.csv``; ``per-op`` writes ``fct_ops.csv`` (:class:`OpFctSink`, one row
per iteration, op, step and tag) for runs whose millions of flows would make
``fct.csv`` the largest output; ``off`` writes neither. Every backend's
records go through the sink :func:`fct_sink` returns, so every backend
honours the mode; ``summary.json`` says ``fct_mode`` when it is not
``per-flow`` (so default outputs stay byte-identical) and ``outputs`` names the file.

4. :func:`finalize_outputs` (the CLI's post-run step) sets ``writing
   outputs``, writes the Parquet copies and ``trace.json`` (each atomically)
   and writes ``summary.json`` again, last.

A reader (:func:`netsim.analysis.load_run`) treats a folder without
``summary.json``, with a status other than ``complete``, or with ``.partial``
leftovers as incomplete, says so, and still shows the whole files it has.
"""
from __future__ import annotations

import contextlib
import glob
import os

from .records import FCT_COLUMNS, PARTIAL_SUFFIX, CsvSink, write_json

STATUS_KEY = "status"
COMPLETE = "complete"
INTERRUPTED = "interrupted"
WRITING = "writing outputs"
SUMMARY_FILE = "summary.json"

#: Tables a run writes as ``NAME.csv`` (and ``NAME.parquet``).
TABLE_FILES = ("fct", "ops", "queues", "pfc", "cc", "traffic_matrix", "message_sizes")
#: Other files netsim writes into a run folder.
OTHER_FILES = ("trace.json", "report.html", "fct.txt", "fct_ops.csv")


#: What ``--fct`` accepts: per-flow rows (fct.csv), per-op aggregates (fct_ops.csv), or no flow file.
FCT_MODES = ("per-flow", "per-op", "off")
DEFAULT_FCT_MODE = "per-flow"
#: Columns of ``fct_ops.csv``: the op's identity, then its flows' count, bytes, span and FCTs (ns).
FCT_OPS_COLUMNS = ("iteration", "op", "step", "tag", "group_kind", "collective", "groups", "flows", "bytes",
                   "first_start_ns", "last_end_ns", "mean_fct_ns", "max_fct_ns")


class OpFctSink:
    """Aggregates flow records into one ``fct_ops.csv`` row per ``(iteration, op, step, tag)``.

    Memory is one small record per key (thousands for a 10k-GPU step, not
    millions of flows). :meth:`close` writes the rows in order of iteration,
    first start, op, step and tag (deterministic), atomically (CsvSink).
    ``groups`` counts the distinct parallel groups (``FlowTag.group``) whose
    flows the row sums; ``mean_fct_ns`` is the exact mean rounded to 9 decimals.

    Examples
    --------
    >>> import os, tempfile
    >>> from netsim.records import FlowTag, make_record
    >>> d = tempfile.mkdtemp(); s = OpFctSink(os.path.join(d, "fct_ops.csv"))
    >>> for i, (grp, start, end) in enumerate([("dp0", 0, 30), ("dp1", 10, 20), ("dp0", 5, 45)]):
    ...     s.add(make_record(i, "a", "b", 100, start, end, 10, FlowTag(op="ar", step=0, group=grp, iteration=0)))
    >>> s.close(); print(open(s.path).read().splitlines()[1])
    0,ar,0,,,,2,3,300,0,45,26.666666667,40
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.columns = FCT_OPS_COLUMNS
        self._acc: dict = {}
        self.flows = 0
        self.closed = False

    @property
    def count(self) -> int:
        """Rows (ops) so far; all of them are in the file after :meth:`close`."""
        return len(self._acc)

    def add(self, rec) -> None:
        if not hasattr(rec, "fct_ns"):
            rec = dict(zip(FCT_COLUMNS, rec))
            get = rec.__getitem__
        else:
            get = rec.__getattribute__
        key = (get("iteration"), get("op"), get("step"), get("tag"))
        a = self._acc.get(key)
        start, end, fct = get("start_ns"), get("end_ns"), get("fct_ns")
        if a is None:
            a = self._acc[key] = [get("group_kind"), get("collective"), set(), 0, 0, start, end, 0, fct]
        a[2].add(get("group"))
        a[3] += 1
        a[4] += get("size_bytes")
        a[5], a[6] = min(a[5], start), max(a[6], end)
        a[7] += fct
        a[8] = max(a[8], fct)
        self.flows += 1

    def flush(self) -> None:  # noqa: D401 - rows are written whole at close
        pass

    def close(self) -> None:
        """Write every aggregated row (idempotent)."""
        if self.closed:
            return
        sink = CsvSink(self.path, FCT_OPS_COLUMNS)
        for (it, op, step, tag), a in sorted(self._acc.items(), key=lambda kv: (kv[0][0], kv[1][5], kv[0][1:])):
            sink.add((it, op, step, tag, a[0], a[1], len(a[2]), a[3], a[4], a[5], a[6], a[7] / a[3], a[8]))
        sink.close()
        self.closed = True


def check_fct_mode(mode) -> str:
    """``mode`` if it is one of :data:`FCT_MODES`, else InputError naming ``--fct``."""
    if mode not in FCT_MODES:
        from .errors import InputError
        raise InputError("unknown flow-record mode", where="--fct", value=mode,
                         accepted="one of " + ", ".join(FCT_MODES) + f" (default {DEFAULT_FCT_MODE})")
    return mode


class NullSink:
    """Takes flow records and keeps none (``--fct off``: the backends' records go nowhere)."""

    count = 0

    def add(self, row) -> None:  # noqa: D401 - dropped
        pass

    def flush(self) -> None:
        pass

    close = flush


def fct_sink(mode: str, out_dir: str | os.PathLike):
    """The flow-record sink of ``--fct mode`` in ``out_dir`` (None for ``off``); InputError for another mode."""
    check_fct_mode(mode)
    if mode == "per-flow":
        return CsvSink(os.path.join(os.fspath(out_dir), "fct.csv"), FCT_COLUMNS)
    if mode == "per-op":
        return OpFctSink(os.path.join(os.fspath(out_dir), "fct_ops.csv"))
    return None


def prepare_out_dir(out_dir: str | os.PathLike) -> str:
    """Create ``out_dir`` and remove a previous run's outputs, ``summary.json`` first."""
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    names = [SUMMARY_FILE] + [t + ext for t in TABLE_FILES for ext in (".csv", ".parquet")] + list(OTHER_FILES)
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(out_dir, name))
    for p in partial_files(out_dir):
        with contextlib.suppress(FileNotFoundError):
            os.remove(p)
    return out_dir


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
        counts[name] = int(getattr(sink, "count", 0))
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
            outputs = {n: int(getattr(s, "count", 0)) for n, s in sinks.items()}
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
    sp = os.path.join(out_dir, SUMMARY_FILE)
    summary = None
    if os.path.exists(sp):
        with open(sp, encoding="utf-8") as fh:
            summary = json.load(fh)
        final = summary.get("status", COMPLETE)
        write_summary(out_dir, summary, WRITING, None, {})
    written: list[str] = []
    try:
        outputs = _derived_outputs(out_dir, graph, seed, trace, written, summary)
    except BaseException as exc:
        if summary is not None:
            from .interrupts import deferred
            with deferred(raise_pending=False):
                write_summary(out_dir, summary, status_of(exc), None, {})
        raise
    if summary is not None:
        write_summary(out_dir, summary, final, None, outputs)
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
