"""distribution.csv: a sweep point's spread over its repetitions (pure table code, no Dask)."""
import csv

import pytest

from netsim.sweep.repeats import distribution_rows, write_distribution


def _rows():
    rows, i = [], 0
    for cc in ("dcqcn", "none"):
        for rep, t in enumerate((1.0, 2.0, 3.0, 4.0, 10.0) if cc == "none" else (5.0, 5.0, 5.0, 5.0, 5.0)):
            rows.append({"point": i, "cc": cc, "repetition": rep, "seed": rep, "iteration_time_s": t,
                         "status": "ok"})
            i += 1
    rows.append({"point": i, "cc": "none", "repetition": 5, "seed": 5, "iteration_time_s": None, "status": "failed"})
    return rows


def test_groups_by_point_without_repetition_and_seed():
    out = distribution_rows(_rows(), ["cc", "repetition", "seed"])
    assert [r["cc"] for r in out] == ["dcqcn", "none"]
    assert out[0]["std"] == 0 and out[0]["p99"] == 5.0 and out[0]["n"] == 5
    assert out[1]["n"] == 5 and out[1]["mean"] == 4.0 and out[1]["p50"] == 3.0           # the failed point is left out
    assert out[1]["p95"] == pytest.approx(8.8) and out[1]["max"] == 10.0


def test_written_only_with_repetitions(tmp_path):
    assert write_distribution(str(tmp_path), _rows(), ["cc", "repetition", "seed"], 1) is None
    path = write_distribution(str(tmp_path), _rows(), ["cc", "repetition", "seed"], 5)
    with open(path) as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0])[:3] == ["cc", "metric", "n"] and table[1]["mean"] == "4.0"
