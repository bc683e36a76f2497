"""Memory benchmarks of a run's output step (``netsim bench outputs_...``).

Each measurement runs in a fresh child process that reports its own peak RSS
(``getrusage(RUSAGE_SELF).ru_maxrss``), so one benchmark's memory never
shows up in another's:

* ``outputs_parquet_3m`` — Parquet conversion of a synthetic 3 M-row
  ``fct.csv`` (seeded; flows between the GPUs of 128 x 8-GPU servers);
* ``outputs_trace_3m`` — ``trace.json`` of the same flows on the
  ``gpu_cluster:servers=128,gpus_per_server=8`` fabric (aggregated: far over
  :data:`netsim.analysis.trace.MAX_TRACE_EVENTS`);
* ``flow_gpt_1024gpu_outputs`` — the 1,024-GPU GPT step of
  ``flow_gpt_1024gpu`` through ``netsim run`` with default outputs (Parquet
  and trace included): target peak <= 4 GiB (issue 15).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from . import benchmark

SYNTH_ROWS = 3_000_000
SYNTH_SEED = 0
FABRIC_1024 = "gpu_cluster:servers=128,gpus_per_server=8"
_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _child(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints a JSON dict; add its peak RSS and wall seconds."""
    tail = ("\nimport json, resource, sys\n"
            "out['peak_rss_mib'] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)\n"
            "print(json.dumps(out))\n")
    env = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code + tail, *args], env=env, capture_output=True, text=True,
                         check=False)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["exit %d" % res.returncode])[-1]}
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    return out


def synthetic_fct(path: str, rows: int | None = None, seed: int = SYNTH_SEED, chunk: int = 250_000) -> str:
    """Write a seeded ``fct.csv`` of ``rows`` (default :data:`SYNTH_ROWS`) flows between the 1,024 GPUs of :data:`FABRIC_1024`."""
    import numpy as np
    import pandas as pd

    from ..records import FCT_COLUMNS
    rows = SYNTH_ROWS if rows is None else int(rows)
    rng = np.random.default_rng(seed)
    gpus = np.array([f"s{s}.gpu{g}" for s in range(128) for g in range(8)])
    with open(path, "w", newline="") as fh:
        fh.write(",".join(FCT_COLUMNS) + "\n")
        for lo in range(0, rows, chunk):
            n = min(chunk, rows - lo)
            src = rng.integers(0, 1024, n)
            dst = (src + rng.integers(1, 1024, n)) % 1024
            start = np.sort(rng.integers(0, 10**9, n))
            fct = rng.integers(1_000, 2_000_000, n)
            size = rng.integers(1_000, 16 << 20, n)
            ideal = np.maximum(1, fct // 2)
            d = {c: "" for c in FCT_COLUMNS}
            d.update(flow_id=np.arange(lo, lo + n), src=gpus[src], dst=gpus[dst], size_bytes=size, start_ns=start,
                     end_ns=start + fct, fct_ns=fct, ideal_fct_ns=ideal, slowdown=np.round(fct / ideal, 6),
                     tag="gpt", cc="none", priority=0, retransmitted_bytes=0, ecn_marked_packets=0, retransmits=0,
                     timeouts=0, cnps_received=0, iteration=0, op=np.char.add("dp_b", (src % 7).astype(str)),
                     group="dp", collective="allreduce", step=rng.integers(0, 62, n))
            pd.DataFrame(d, columns=list(FCT_COLUMNS)).to_csv(fh, header=False, index=False, lineterminator="\n")
    return path


def _synthetic_dir() -> str:
    d = os.path.join(tempfile.gettempdir(), f"netsim-bench-fct-{SYNTH_ROWS}-{SYNTH_SEED}")
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "fct.csv")):
        synthetic_fct(os.path.join(d, "fct.csv.tmp"))
        os.replace(os.path.join(d, "fct.csv.tmp"), os.path.join(d, "fct.csv"))
    return d


@benchmark("outputs_parquet_3m")
def bench_parquet_3m() -> dict:
    """Streaming Parquet conversion of a synthetic 3 M-row fct.csv: wall and peak RSS of a fresh process."""
    d = _synthetic_dir()
    out = _child("import sys\nfrom netsim.analysis.io import write_parquet_counts\n"
                 "out = {'rows': dict((p.rsplit('/', 1)[-1], n) for p, n in write_parquet_counts(sys.argv[1]))}", d)
    out["fct_csv_mib"] = round(os.path.getsize(os.path.join(d, "fct.csv")) / 2**20, 1)
    return out


@benchmark("outputs_trace_3m")
def bench_trace_3m() -> dict:
    """trace.json of the synthetic 3 M flows on the 1,024-GPU fabric (aggregated): wall, peak RSS, events."""
    d = _synthetic_dir()
    out = _child("import sys\nfrom netsim.topology import load_topology\nfrom netsim.analysis.trace import write_trace\n"
                 "info = {}\nwrite_trace(sys.argv[1], out=sys.argv[1] + '/trace.json', "
                 "graph=load_topology(sys.argv[2]), info=info)\n"
                 "out = {'events': info['events'], 'flows': info['flows']}", d, FABRIC_1024)
    p = os.path.join(d, "trace.json")
    if os.path.exists(p):
        out["trace_mib"] = round(os.path.getsize(p) / 2**20, 1)
    return out


@benchmark("flow_gpt_1024gpu_outputs")
def bench_gpt_1024gpu_outputs() -> dict:
    """`netsim run` of the 1,024-GPU GPT step on flow with default outputs: target peak <= 4 GiB, traces included."""
    with tempfile.TemporaryDirectory() as d:
        wl = os.path.join(_ROOT, "workloads", "gpt-3b-t2p2d8.yaml")
        out = _child("import json, sys\nfrom netsim.cli import main\n"
                     "rc = main(['run', sys.argv[1], sys.argv[2], '--backend', 'flow', '--quiet', '--out', sys.argv[3],"
                     " '--workload-set', 'parallelism.tp=8', '--workload-set', 'parallelism.pp=4',"
                     " '--workload-set', 'parallelism.dp=32'])\n"
                     "s = json.load(open(sys.argv[3] + '/summary.json'))\n"
                     "out = {'rc': rc, 'status': s['status'], 'outputs': s['outputs'], 'trace': s.get('trace', {})}",
                     FABRIC_1024, wl, d)
    out["target_peak_mib"] = 4096
    return out
