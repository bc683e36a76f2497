"""Analysis of netsim runs: loaders, metrics, plots, reports and trace export.

>>> from netsim.analysis import load_run, fct_table          # doctest: +SKIP
>>> run = load_run("out/incast")                              # doctest: +SKIP
>>> fct_table(run.fct, by="size")                             # doctest: +SKIP

Modules: :mod:`.io` (load_run, Run, write_parquet), :mod:`.metrics`,
:mod:`.traffic`, :mod:`.links`, :mod:`.plots`, :mod:`.report`, :mod:`.trace`.
Only this package (with cli/ and sweep) imports pandas.
"""
from .io import Run, empty_frame, load_run, read_table, write_parquet
from .links import backlogged_fraction, link_utilization, spread_bytes, throughput
from .metrics import (DEFAULT_SIZE_EDGES, cc_rate_bps, fct_table, flow_rates_in_window, iteration_breakdown, jain_fairness,
                      jain_fairness_cc, jain_index, merge_intervals, pfc_pause_table, queue_table, rank_busy_time,
                      size_bucket_labels, size_buckets)
from .trace import build_trace, write_trace
from .traffic import (message_size_stats, message_sizes, moe_nonuniformity, moe_nonuniformity_by_iteration,
                      traffic_matrix, traffic_matrix_change, traffic_matrix_long)

__all__ = [
    "Run", "load_run", "read_table", "empty_frame", "write_parquet", "write_trace", "build_trace",
    "cc_rate_bps", "fct_table", "queue_table", "pfc_pause_table", "jain_index", "jain_fairness", "jain_fairness_cc",
    "flow_rates_in_window", "iteration_breakdown", "rank_busy_time", "merge_intervals", "size_buckets",
    "size_bucket_labels", "DEFAULT_SIZE_EDGES", "throughput", "link_utilization", "spread_bytes",
    "backlogged_fraction", "traffic_matrix", "traffic_matrix_long", "traffic_matrix_change",
    "moe_nonuniformity", "moe_nonuniformity_by_iteration", "message_sizes", "message_size_stats",
]
