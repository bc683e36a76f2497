"""LazyExecutor on rank classes gives the explicit executor's runs row for row (runtime/lazy.py)."""
import os
import re

import pytest

from netsim.bench.simai import run_classes
from netsim.records import ListSink
from netsim.runtime.api import run_training
from netsim.runtime.executor import OPS_COLUMNS
from netsim.topology import gpu_cluster

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "importers", "data")


@pytest.mark.parametrize("name,gpus,backend", [
    ("simai_workload_analytical.txt", 32, "flow"),     # pipeline (interleaved 1F1B), EP and DP_EP collectives
    ("simai_workload_ep_test.txt", 64, "flow"),
    ("simai_workload_analytical.txt", 64, "analytic"),
])
def test_lazy_run_equals_explicit_run_flow_for_flow(tmp_path, name, gpus, backend):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        text = re.sub(r"all_gpus: \d+", f"all_gpus: {gpus}", f.read(), count=1)
    path = tmp_path / "w.txt"
    path.write_text(text)
    explicit = run_training(gpu_cluster(servers=gpus // 8, gpus_per_server=8), str(path), backend=backend,
                            progress=False, keep_records=True, iterations=2)
    fct, ops = ListSink(), ListSink(OPS_COLUMNS)
    lazy = run_classes(str(path), gpu_cluster(servers=gpus // 8, gpus_per_server=8), backend=backend,
                       iterations=2, fct_sink=fct, ops_sink=ops)
    assert lazy["finished"] and lazy["blocks"] >= 2
    ex = explicit["_executor"]
    assert lazy["iteration_time_s"] == [(ex.iteration_end_ps[0]) / 1e12,
                                        (ex.iteration_end_ps[1] - ex.iteration_end_ps[0]) / 1e12]
    assert fct.rows == explicit["records"]["fct"]       # every flow: same order, times, tags
    assert ops.rows == explicit["records"]["ops"]
    assert lazy["ops_done"] == 2 * lazy["ops_per_iteration"] == len(ex.iteration_ops[0]) * 2
    assert lazy["peak_running"] < lazy["ops_per_iteration"]    # built when ready, dropped when finished
