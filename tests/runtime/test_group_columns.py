"""``group`` means the group instance in every table; ``group_kind`` is its kind (was: kind in fct.csv only)."""
import csv

import pytest

from netsim.analysis import load_run
from netsim.analysis.traffic import group_kinds, message_sizes, moe_nonuniformity
from netsim.records import FCT_COLUMNS
from netsim.runtime import run_training

TOPO = "gpu_cluster:servers=2,gpus_per_server=4,nic_rates_bps=100Gbps"
WL = {"name": "g", "model": {"preset": "gpt-1.5b", "layers": 2, "hidden": 64, "heads": 4, "seq_len": 32,
                             "vocab": 256},
      "training": {"global_batch": 4, "micro_batch": 1}, "parallelism": {"dp": 2, "tp": 2, "pp": 2}}


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("backend", ["analytic", "flow", "packet"])
def test_fct_group_is_the_ops_instance_and_group_kind_its_kind(tmp_path, backend):
    run_training(TOPO, WL, backend=backend, out_dir=str(tmp_path))
    op_group = {(r["iteration"], r["op"]): (r["group"], r["kind"]) for r in _rows(tmp_path / "ops.csv")}
    fct = _rows(tmp_path / "fct.csv")
    assert fct and list(fct[0]) == list(FCT_COLUMNS)
    for r in fct:
        assert (r["group"], r["group_kind"]) == op_group[(r["iteration"], r["op"])]
    assert {r["group_kind"] for r in fct} == {"tp", "pp", "dp"}
    assert len({r["group"] for r in fct if r["group_kind"] == "tp"}) == 4        # 4 TP groups, each its own name
    sizes = message_sizes(load_run(str(tmp_path)))
    assert list(sizes.columns) == ["group_kind", "size_bytes", "count"]
    assert set(sizes["group_kind"]) == {"tp", "pp", "dp"}


def test_runs_written_before_group_kind_are_read_as_kinds():
    import pandas as pd
    old = pd.DataFrame({"group": ["ep", "ep", "dp", ""], "op": ["a", "a", "b", ""], "iteration": [0, 0, 0, -1],
                        "src": ["g0", "g1", "g0", "h0"], "dst": ["g1", "g0", "g1", "h1"],
                        "size_bytes": [100, 300, 5, 7]})
    assert list(group_kinds(old)) == ["ep", "ep", "dp", ""]
    new = old.assign(group=["ep0", "ep0", "dp1", ""], group_kind=["ep", "ep", "dp", ""])
    assert list(group_kinds(new)) == ["ep", "ep", "dp", ""]
    assert moe_nonuniformity(old)["cv"].tolist() == moe_nonuniformity(new)["cv"].tolist() == [0.5]
