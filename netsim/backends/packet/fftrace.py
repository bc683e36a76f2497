"""The trace of skipped intervals: ``fast_forward.csv`` beside the packet run's ``queues.csv`` (issue #21).

With ``--fast-forward on`` and an output folder, the run writes one row per
jump (:mod:`.fastforward`): ``start_ns`` (the network or component froze,
its sequence spaces advanced), ``end_ns`` (it resumed; a jump cut short by a
flow starting on its ports ends there), ``links`` (the egress ports it
froze, ``A->B`` joined by ``;``), ``flows`` (their flow ids, ``;``-joined,
as in fct.csv), ``cycles`` (whole limit cycles skipped, 0 for a fixed
point). queues.csv and cc.csv have no rows of a frozen interval when the
whole network jumps (their samplers move with it); when one component jumps
the samplers keep running and its queues read constant. With
fast-forward off nothing is written (no file), so outputs stay byte-identical.

``trace.json`` (built from the output folder by :mod:`netsim.analysis.trace`)
reads this file: a process ``fast-forward`` with one complete event per row.

Left out: a run interrupted before its end writes no fast_forward.csv
(its summary.json still lists the intervals).
"""
from __future__ import annotations

import os

from ...records import CsvSink
from ...units import PS_PER_NS

#: columns of fast_forward.csv
SKIP_COLUMNS = ("start_ns", "end_ns", "links", "flows", "cycles")
#: its file name (in the run's output folder)
SKIP_FILE = "fast_forward.csv"


def skip_sink(sinks):
    """A :class:`~netsim.records.CsvSink` for fast_forward.csv next to the run's queues.csv, or ``None``."""
    path = sinks.queues.path if sinks.queues is not None else None     # a netsim.sinks.Sink
    if not path:
        return None
    return CsvSink(os.path.join(os.path.dirname(path), SKIP_FILE), SKIP_COLUMNS)


def write_skips(sink, intervals: list) -> None:
    """One row per jump ``[start_ps, end_ps, ports, fids, cycles]``; closes ``sink``."""
    for a, b, ports, fids, cycles in intervals:
        sink.add(((a + 500) // PS_PER_NS, (b + 500) // PS_PER_NS,
                  ";".join(f"{p.name}->{p.peer_name}" for p in ports), ";".join(str(f) for f in fids), cycles))
    sink.close()
