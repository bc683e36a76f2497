"""``netsim defaults`` and ``netsim compare``."""
import os

import pytest

from netsim.cli import main
from netsim.cli.compare import step_percentiles


def test_defaults_one_algorithm(capsys):
    assert main(["defaults", "--cc", "dcqcn"]) == 0
    out = capsys.readouterr().out
    for word in ("rate_timer_ns", "byte_counter_bytes", "fast_recovery_steps", "rai_bps", "min_rate_bps",
                 "cnp_interval_ns", "SIGCOMM 2015", "HPCC ns-3", "NVIDIA", "bit/s"):
        assert word in out
    assert "cubic" not in out.split("\n", 1)[0]


def test_defaults_dcqcn_names_the_default_preset_and_its_values(capsys):
    assert main(["defaults", "--cc", "dcqcn"]) == 0
    rows = {}
    for line in capsys.readouterr().out.splitlines():
        if line.strip():
            rows.setdefault(line.split()[0], line)                    # the parameter table comes first
    assert rows["preset"].split()[1] == "hpcc"                       # the default, not the 2015 law
    assert "preset hpcc: 300000" in rows["rate_timer_ns"]            # each key shows the default's value
    assert "preset hpcc: 5e+06 x link rate / 25 Gb/s" in rows["rai_bps"]
    assert "preset hpcc: 100000 x link rate / 25 Gb/s" in rows["kmin_bytes"]
    why = rows["default"]
    assert why.startswith("default preset: hpcc (") and "HPCC's run.py" in why and "preset=paper" in why


def test_defaults_all(capsys):
    assert main(["defaults"]) == 0
    out = capsys.readouterr().out
    for name in ("# cc none", "# cc cubic", "# cc dcqcn", "# cc dctcp", "RFC 9438", "RFC 8257", "RFC 6928"):
        assert name in out


def test_defaults_unknown_algorithm_one_line(capsys):
    assert main(["defaults", "--cc", "bbr"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cubic, dcqcn, dctcp, hpcc, none, swift, timely" in err


def _run(tmp, name, fct_rows, summary, queues):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    from netsim.records import FCT_COLUMNS
    with open(os.path.join(d, "fct.csv"), "w") as fh:
        fh.write(",".join(FCT_COLUMNS) + "\n")
        for i, (size, fct) in enumerate(fct_rows):
            row = {c: "" for c in FCT_COLUMNS}
            row.update(flow_id=i, src="a", dst="b", size_bytes=size, start_ns=0, end_ns=fct, fct_ns=fct,
                       ideal_fct_ns=fct // 2, slowdown=2.0)
            fh.write(",".join(str(row[c]) for c in FCT_COLUMNS) + "\n")
    import json
    with open(os.path.join(d, "summary.json"), "w") as fh:
        json.dump(summary, fh)
    with open(os.path.join(d, "queues.csv"), "w") as fh:
        fh.write("time_ns,node,port,priority,queue_bytes\n")
        for r in queues:
            fh.write(",".join(map(str, r)) + "\n")
    return d


def test_compare_table(tmp_path, capsys):
    a = _run(tmp_path, "A", [(1000, 10_000), (200_000, 50_000), (20_000_000, 900_000)],
             {"cc": "dcqcn", "drops": 0, "pfc_pauses": 3, "cnps": 7, "ecn_marks": 9,
              "retransmitted_bytes": 0, "pfc_pause_time_ns": {"sw->h": 2000}, "sim_time_ns": 100},
             [(0, "sw", "h", 3, 1000), (50, "sw", "h", 3, 0), (0, "sw", "g", 3, 10)])
    b = _run(tmp_path, "B", [(1000, 30_000)], {"cc": "cubic", "drops": 5, "retransmitted_bytes": 7000},
             [])
    assert main(["compare", a, b]) == 0
    out = capsys.readouterr().out
    lines = {ln.split("  ")[0].strip(): ln.split() for ln in out.splitlines()[1:]}
    assert lines["cc"][-2:] == ["dcqcn", "cubic"]
    assert lines["FCT <100KB p50 (us)"][-2:] == ["10", "30"]
    assert lines["FCT >=10MB p99 (us)"][-2:] == ["900", "-"]
    assert lines["drops"][-2:] == ["0", "5"]
    assert lines["PFC pause time (us)"][-2:] == ["2", "-"]
    assert lines["busiest queue"][-2:] == ["sw->h/p3", "-"]
    # sw->h holds 1000 B for 50 of 100 ns, then 0: p50 = 0 or 1000, p99 = 1000
    assert lines["queue p99 (B)"][-2] == "1,000"
    assert main(["compare", a, b, "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("metric,A,B")


def test_compare_missing_dir(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "nope")]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_step_percentiles_time_weighted():
    # value 5 for 90 ns, 100 for 10 ns: p50 = 5, p95 = 100 (a plain sample percentile would say 52.5)
    assert step_percentiles([0, 90], [5, 100], 100, qs=(50, 95)) == [5.0, 100.0]
    assert step_percentiles([], [], 10) == [pytest.approx(float("nan"), nan_ok=True)] * 2
