"""Small hand-made run directories with known answers (shared by the analysis tests)."""
from __future__ import annotations

import json
import os

from netsim.records import FCT_COLUMNS


def _write(path, header, rows):
    with open(path, "w") as fh:
        fh.write(",".join(header) + "\n")
        for r in rows:
            fh.write(",".join("" if v is None else str(v) for v in r) + "\n")


def fct_row(flow_id, src, dst, size, start, end, ideal, *, tag="", cc="", priority=0,
            iteration=-1, op="", group="", collective="", step=-1, group_kind="", path_key=-1):
    d = dict(flow_id=flow_id, src=src, dst=dst, size_bytes=size, start_ns=start, end_ns=end,
             fct_ns=end - start, ideal_fct_ns=ideal, slowdown=round((end - start) / ideal, 6),
             tag=tag, cc=cc, priority=priority, retransmitted_bytes=0, ecn_marked_packets=0,
             retransmits=0, timeouts=0, cnps_received=0, iteration=iteration, op=op, group=group,
             collective=collective, step=step, group_kind=group_kind, path_key=path_key)
    return [d[c] for c in FCT_COLUMNS]


# --- a "netsim flows" run -------------------------------------------------------
# 10 small flows (10 KB) with fct 1000..10000 ns (ideal 1000 => slowdown 1..10),
# 2 medium flows (1 MB) with fct 100 us and 300 us (ideal 100 us), 1 large (20 MB).
FLOWS = ([fct_row(i, "h0", "h9", 10_000, 0, 1000 * (i + 1), 1000, tag="small", cc="dcqcn")
          for i in range(10)]
         + [fct_row(10, "h1", "h9", 1_000_000, 0, 100_000, 100_000, tag="mid", cc="dcqcn"),
            fct_row(11, "h2", "h9", 1_000_000, 0, 300_000, 100_000, tag="mid", cc="dcqcn"),
            fct_row(12, "h3", "h9", 20_000_000, 0, 2_000_000, 1_600_000, tag="big", cc="dcqcn")])

QUEUES = [(t, "sw0", "h9", 3, q) for t, q in zip(range(0, 1000, 100), range(0, 10_000, 1000))] + \
         [(t, "sw0", "h1", 3, 0) for t in range(0, 1000, 100)]
# sw0->h0 prio 3: pause 100..300 (200), pause again at 250 (ignored: already paused),
# pause 500 .. end (open, closed at end_ns). sw1->sw0: pause 0..50 then stray resume.
PFC = [(100, "sw0", "h0", 3, "pause"), (250, "sw0", "h0", 3, "pause"), (300, "sw0", "h0", 3, "resume"),
       (500, "sw0", "h0", 3, "pause"), (0, "sw1", "sw0", 3, "pause"), (50, "sw1", "sw0", 3, "resume"),
       (60, "sw1", "sw0", 3, "resume")]
CC = [(t, f, "dcqcn", "", r, 0.5, "") for t in range(0, 1000, 100) for f, r in ((0, 40e9), (1, 40e9), (2, 20e9))]


def make_flows_run(d) -> str:
    os.makedirs(d, exist_ok=True)
    _write(os.path.join(d, "fct.csv"), FCT_COLUMNS, FLOWS)
    _write(os.path.join(d, "queues.csv"), ["time_ns", "node", "port", "priority", "queue_bytes"], QUEUES)
    _write(os.path.join(d, "pfc.csv"), ["time_ns", "node", "port", "priority", "event"], PFC)
    _write(os.path.join(d, "cc.csv"), ["time_ns", "flow_id", "cc", "cwnd_bytes", "rate_bps", "alpha", "srtt_ns"], CC)
    with open(os.path.join(d, "summary.json"), "w") as fh:
        json.dump({"flows": 13, "completed": 13, "drops": 0, "simulated_time_ns": 2_000_000}, fh)
    return d


# --- a "netsim run" training run: 2 ranks, 2 iterations ----------------------------
# Per iteration (offset 1000*it): rank r does compute fwd [0,100), tp allreduce [100,150),
# compute bwd [150,300), dp bucket0 [250,350) and dp bucket1 [260,340) (overlapping => 2 lanes).
# Busy: compute 250, tp 50, dp 100 (union); exposed comm = tp 50 + dp (300..350) 50 = 100.
def _ops(iterations=2, ranks=2):
    rows = []
    for it in range(iterations):
        o = 1000 * it
        for r in range(ranks):
            rows += [(r, it, "fwd", "compute", "", 0, o + 0, o + 100),
                     (r, it, "tp_ar0", "tp", "tp0", 4000, o + 100, o + 150),
                     (r, it, "bwd", "compute", "", 0, o + 150, o + 300),
                     (r, it, "dp_b0", "dp", "dp0", 8000, o + 250, o + 350),
                     (r, it, "dp_b1", "dp", "dp0", 2000, o + 260, o + 340)]
    return rows


OPS = _ops()
# MoE: iteration 0 all-to-all "a2a": ranks g0..g3 receive 100, 100, 300, 300 bytes
# (mean 200, std 100 => CV 0.5); iteration 1 uniform 200 each => CV 0.
TRAIN_FCT = []
_fid = 0
for _it, _recv in ((0, (100, 100, 300, 300)), (1, (200, 200, 200, 200))):
    for _dst, _b in enumerate(_recv):
        _src = (_dst + 1) % 4
        TRAIN_FCT.append(fct_row(_fid, f"g{_src}", f"g{_dst}", _b, 1000 * _it, 1000 * _it + 10, 10,
                                 iteration=_it, op="a2a", group="ep0", collective="alltoall", step=0,
                                 group_kind="ep"))
        _fid += 1
    for _r in range(2):  # dp ring flows, identical each iteration
        TRAIN_FCT.append(fct_row(_fid, f"g{_r}", f"g{1 - _r}", 5000, 1000 * _it + 250, 1000 * _it + 350, 50,
                                 iteration=_it, op="dp_b0", group="dp0", collective="allreduce", step=0,
                                 group_kind="dp"))
        _fid += 1
TM = [(it, "g0", "g1", 5000) for it in range(2)] + [(it, "g1", "g0", 5000) for it in range(2)]
SUMMARY = {"iteration_times_s": [1e-6, 1e-6], "iteration_time_s": 1e-6,
           "breakdown_s": {"compute": 6e-7, "tp": 1e-7, "pp": 0.0, "dp": 2e-7, "ep": 0.0, "bubble": 0.0, "other": 1e-7},
           "apnet_iteration_time_s": 1.1e-6}


def make_training_run(d, tm_rows=TM) -> str:
    os.makedirs(d, exist_ok=True)
    _write(os.path.join(d, "ops.csv"), ["rank", "iteration", "op", "kind", "group", "size_bytes", "start_ns", "end_ns"], OPS)
    _write(os.path.join(d, "fct.csv"), FCT_COLUMNS, TRAIN_FCT)
    _write(os.path.join(d, "traffic_matrix.csv"), ["iteration", "src", "dst", "bytes"], tm_rows)
    _write(os.path.join(d, "message_sizes.csv"), ["group_kind", "size_bytes", "count"],
           [("tp", 4000, 4), ("dp", 8000, 4), ("dp", 2000, 4)])
    with open(os.path.join(d, "summary.json"), "w") as fh:
        json.dump(SUMMARY, fh)
    return d
