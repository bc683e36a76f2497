"""What ``--fct`` writes of the flow records: per flow, per op, or nothing.

``per-flow`` (default) writes ``fct.csv`` (:class:`netsim.records.CsvSink`);
``per-op`` writes ``fct_ops.csv`` (:class:`OpFctSink`, one row per
iteration, op, step and tag) for runs whose millions of flows would make
``fct.csv`` the largest and slowest output; ``off`` writes neither
(:class:`NullSink`). Every backend's records go through the sink
:func:`fct_sink` returns, so every backend honours the mode; ``summary.json``
says ``fct_mode`` when it is not ``per-flow`` (so default outputs stay
byte-identical) and ``outputs`` names the file. Left out: per-flow
percentiles in ``per-op`` rows (only mean and max are exact in one pass).
"""
from __future__ import annotations

import os

from .records import FCT_COLUMNS, CsvSink
from .sinks import Sink

#: What ``--fct`` accepts: per-flow rows (fct.csv), per-op aggregates (fct_ops.csv), or no flow file.
FCT_MODES = ("per-flow", "per-op", "off")
DEFAULT_FCT_MODE = "per-flow"
#: Columns of ``fct_ops.csv``: the op's identity, then its flows' count, bytes, span and FCTs (ns).
FCT_OPS_COLUMNS = ("iteration", "op", "step", "tag", "group_kind", "collective", "groups", "flows", "bytes",
                   "first_start_ns", "last_end_ns", "mean_fct_ns", "max_fct_ns")


class OpFctSink(Sink):
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


class NullSink(Sink):
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
