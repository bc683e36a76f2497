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


def _modules(package_dir: Path):
    import ast
    for path in sorted(package_dir.glob("*.py")):
        yield path, ast.parse(path.read_text())


#: module-level mutable objects that are registries or tables of parameters, not simulation state
_REGISTRIES = {("ccmodel.py", "MODEL_TABLES"), ("ccmodel.py", "UNMODELLED"), ("controllers.py", "RATE_CONTROLLERS")}


def test_no_module_global_holds_simulation_state():
    """Caches and state live in the objects of a run (solver, fluid network), not in modules:
    two backends in one process cannot see each other's memo, offers or link numbering."""
    import ast
    found = []
    for path, tree in _modules(ROOT / "netsim" / "backends" / "flow"):
        for node in tree.body:
            if isinstance(node, ast.Global):
                found.append((path.name, "global"))
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) and node.value is not None else []
            value = getattr(node, "value", None)
            mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp)) or (
                isinstance(value, ast.Call) and getattr(value.func, "attr", getattr(value.func, "id", ""))
                in {"dict", "list", "set", "count", "defaultdict", "OrderedDict"})
            for t in targets:
                if mutable and isinstance(t, ast.Name) and (path.name, t.id) not in _REGISTRIES:
                    found.append((path.name, t.id))
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.append((path.name, "global " + ",".join(node.names)))
    assert found == []


def test_solver_caches_are_per_solver():
    from netsim.backends.flow.solver import ComponentSolver
    a = ComponentSolver([1.0], [dict()], port_max=8, hol=True)
    b = ComponentSolver([1.0], [dict()], port_max=8, hol=True)
    assert a._offers is not b._offers and a._index is not b._index and a._memo is not b._memo


def test_module_and_function_sizes_and_docstrings():
    """Modules of the flow backend and the network layer: at most ~300 lines, functions at most
    ~80, and a module docstring that says what is left out."""
    import ast
    too_long, no_doc = [], []
    for pkg in (ROOT / "netsim" / "backends" / "flow", ROOT / "netsim" / "network"):
        for path, tree in _modules(pkg):
            n = len(path.read_text().splitlines())
            if n > 305:
                too_long.append((path.name, n))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    if length > 80:
                        too_long.append((f"{path.name}:{node.name}", length))
            doc = ast.get_docstring(tree) or ""
            if "left out" not in doc.lower() and "leaves out" not in doc.lower() and path.name != "__init__.py":
                no_doc.append(path.name)
    assert too_long == [] and no_doc == []
