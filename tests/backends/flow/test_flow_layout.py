"""The flow backend's layout: every module named in the package docstring, tooling not installed,
and the golden-output tool (tools/flow_golden.py) that checks results stay byte-identical."""
import importlib.util
import pkgutil
from pathlib import Path

import netsim.backends.flow as flow

ROOT = Path(__file__).resolve().parents[3]


def test_package_docstring_names_every_module():
    modules = sorted(m.name for m in pkgutil.iter_modules(flow.__path__))
    assert len(modules) >= 15
    missing = [m for m in modules if f":mod:`.{m}`" not in flow.__doc__]
    assert missing == []


def test_calibration_and_scenarios_not_in_the_package():
    modules = {m.name for m in pkgutil.iter_modules(flow.__path__)}
    assert not modules & {"calibrate", "scenarios"}
    assert (ROOT / "tools" / "flow_calibrate.py").exists()
    assert (ROOT / "tests" / "validation" / "flow_scenarios.py").exists()


def _golden():
    spec = importlib.util.spec_from_file_location("flow_golden", ROOT / "tools" / "flow_golden.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_golden_cases_cover_every_cc_and_the_flow_files():
    cases = dict(_golden().cases(ROOT))
    smalls = sorted(p.stem for p in (ROOT / "workloads").glob("*-small.yaml"))
    for wl in smalls:
        for cc in ("none", "dcqcn", "cubic", "dctcp"):
            assert f"run-{wl}-{cc}" in cases
    assert any(args[0] == "flows" and "hpcc_small" in args[2] for args in cases.values())


def test_golden_compare_finds_one_changed_byte(tmp_path, capsys):
    g = _golden()
    assert g._strip_wall({"a": 1, "wall_s": 2.0, "x": {"recompute_wall_s": 1, "b": [{"wall": 0, "c": 3}]}}) == \
        {"a": 1, "x": {"b": [{"c": 3}]}}
    for side in ("a", "b"):
        d = tmp_path / side / "case"
        d.mkdir(parents=True)
        (d / "fct.csv").write_text("id,fct_ns\n0,1000\n")
        (d / "summary.json").write_text("{}")
    assert g.compare(tmp_path / "a", tmp_path / "b") == 0
    (tmp_path / "b" / "case" / "fct.csv").write_text("id,fct_ns\n0,1001\n")
    assert g.compare(tmp_path / "a", tmp_path / "b") == 1
    assert "DIFF case/fct.csv" in capsys.readouterr().out
