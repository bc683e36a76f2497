"""The shipped example sweeps validate, and a one-point version of each runs to completion."""
import glob
import os

import pytest
import yaml

from netsim.sweep import expand, load_sweep, run_point
from netsim.sweep.table import make_row

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "workloads", "sweeps", "*.yaml")))


def test_examples_are_shipped():
    names = {os.path.basename(p) for p in EXAMPLES}
    assert {"dcqcn_kmin_kmax_incast.yaml", "gpt_placement_tpd.yaml"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_validates(path):
    points = expand(load_sweep(path))
    assert len(points) >= 4 and all(os.path.isabs(p.argv[2]) and os.path.exists(p.argv[2]) for p in points)


def _one_point_copy(path, folder):
    """The example with each axis cut to its first value and one repetition, paths made absolute."""
    with open(path) as fh:
        doc = yaml.safe_load(fh)
    spec = load_sweep(path)
    here = os.path.dirname(path)
    for key in ("topology", "flows", "workload"):
        if isinstance(doc.get(key), str) and os.path.exists(os.path.join(here, doc[key])):
            doc[key] = os.path.abspath(os.path.join(here, doc[key]))
    doc["grid"] = {axis: [values[0]] for axis, values in spec.grid.items()}
    doc["zip"] = [{axis: [values[0]] for axis, values in group.items()} for group in spec.zips]
    doc["repetitions"] = 1
    out = os.path.join(folder, os.path.basename(path))
    with open(out, "w") as fh:
        yaml.safe_dump(doc, fh)
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_first_point_runs(path, tmp_path):
    """In this process (the Dask path is tested in test_sweep_dask.py): the example's first point."""
    (point,) = expand(load_sweep(_one_point_copy(path, str(tmp_path))))
    outcome = run_point(point.to_json(), str(tmp_path / "point"))
    assert outcome["status"] == "ok", outcome["error"]
    row = make_row(point.to_json(), outcome)
    if point.argv[0] == "flows":
        assert row["completed"] == row["flows"] == row["fct.count"] > 0
        assert row["bytes_delivered"] == 8 * 2_000_000 and row["drops"] == 0  # PFC on: lossless
    else:
        assert row["iteration_time_s"] > 0 and row["status"] == "ok"
