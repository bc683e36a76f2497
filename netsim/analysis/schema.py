"""Column contracts of the trace tables a run directory holds.

Each table a run writes (``fct.csv``, ``ops.csv``, ``queues.csv``, ``pfc.csv``,
``cc.csv``, ``traffic_matrix.csv``, ``message_sizes.csv``, and with ``--fct per-op``
``fct_ops.csv``: :data:`netsim.fctmodes.FCT_OPS_COLUMNS`) has a fixed set of
columns with a fixed kind: ``int`` (int64), ``float`` (float64, NaN where a
value does not apply) or ``str`` (object, ``""`` where a value does not apply).
:data:`TABLES` maps a table name to its ordered ``{column: kind}`` contract and
:data:`DEFAULTS` gives the value a missing integer takes (the same defaults as
:class:`netsim.records.FlowRecord`). The loaders coerce to these kinds; extra
columns a producer adds are kept as read.

``group`` is the parallel group instance (``tp3``) in ``ops.csv`` and
``fct.csv`` alike; ``group_kind`` (``tp``, ``pp``, ``dp``, ``ep``) is its kind
(``fct.csv``, ``message_sizes.csv``; ``ops.csv`` calls it ``kind``). Runs
written before ``group_kind`` existed held the kind in ``fct.csv``'s ``group``
and ``message_sizes.csv``'s ``group``: :func:`netsim.analysis.traffic.group_kinds`
reads both. ``message_sizes.csv``: ``group_kind,size_bytes,count``
(optionally ``iteration`` and ``collective``), whatever else is there kept.
"""
from __future__ import annotations

from ..fctmodes import FCT_OPS_COLUMNS
from ..records import FCT_COLUMNS, FlowRecord

_FCT_KINDS = {
    "flow_id": "int", "src": "str", "dst": "str", "size_bytes": "int", "start_ns": "int",
    "end_ns": "int", "fct_ns": "int", "ideal_fct_ns": "int", "slowdown": "float", "tag": "str",
    "cc": "str", "priority": "int", "retransmitted_bytes": "int", "ecn_marked_packets": "int",
    "retransmits": "int", "timeouts": "int", "cnps_received": "int", "iteration": "int",
    "op": "str", "group": "str", "collective": "str", "step": "int", "group_kind": "str",
    "path_key": "int",
}

TABLES: dict[str, dict[str, str]] = {
    "fct": {c: _FCT_KINDS.get(c, "str") for c in FCT_COLUMNS},
    "ops": {"rank": "int", "iteration": "int", "op": "str", "kind": "str", "group": "str",
            "size_bytes": "int", "start_ns": "int", "end_ns": "int", "algorithm": "str", "protocol": "str"},
    "queues": {"time_ns": "int", "node": "str", "port": "str", "priority": "int",
               "queue_bytes": "int"},
    "pfc": {"time_ns": "int", "node": "str", "port": "str", "priority": "int", "event": "str"},
    "cc": {"time_ns": "int", "flow_id": "int", "cc": "str", "cwnd_bytes": "float",
           "rate_bps": "float", "alpha": "float", "srtt_ns": "float"},
    "traffic_matrix": {"iteration": "int", "src": "str", "dst": "str", "bytes": "int"},
    "message_sizes": {"group_kind": "str", "size_bytes": "int", "count": "int"},
    # --fct per-op: one row per (iteration, op, step, tag); every other column is a count, bytes or ns
    "fct_ops": {c: {"op": "str", "tag": "str", "group_kind": "str", "collective": "str",
                    "mean_fct_ns": "float"}.get(c, "int") for c in FCT_OPS_COLUMNS},
}

#: Value an integer column takes when the producer left it empty.
DEFAULTS: dict[str, int] = {"iteration": -1, "step": -1, "priority": 0}
for _f in FlowRecord.__dataclass_fields__.values():  # keep in step with the records
    if isinstance(_f.default, int) and not isinstance(_f.default, bool):
        DEFAULTS.setdefault(_f.name, _f.default)

#: Optional typed columns sometimes present (kind when they appear).
OPTIONAL_KINDS: dict[str, str] = {"iteration": "int", "collective": "str", "step": "int",
                                  "bytes": "int", "count": "int"}
