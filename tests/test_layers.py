"""The layering is enforced: import-linter's contracts (pyproject.toml) hold, and the README draws them.

* every contract of ``[tool.importlinter]`` is kept (``lint-imports``, run in
  process without a cache: about two seconds);
* the runner does detect a broken contract (a layers contract that puts the
  command line below the units module must fail) — so a green run means something;
* the README's "Architecture" diagram lists exactly the layers of the
  ``layers`` contract, top to bottom, and every top-level module of netsim
  has its place in it.
"""
from __future__ import annotations

import os
import re
import sys

import pytest

importlinter_cli = pytest.importorskip("importlinter.cli")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(ROOT, "pyproject.toml")


def _contracts() -> dict:
    with open(PYPROJECT, "rb") as fh:
        cfg = tomllib.load(fh)["tool"]["importlinter"]
    return {c["id"]: c for c in cfg["contracts"]}


def _lint(config: str, capsys) -> int:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return importlinter_cli.lint_imports(config_filename=config, no_cache=True, no_logo=True)
    finally:
        os.chdir(cwd)
        capsys.readouterr()


def test_import_contracts_are_kept(capsys):
    assert {"layers", "backends", "no-simpy", "pandas"} <= set(_contracts())
    assert _lint(PYPROJECT, capsys) == 0


def test_a_broken_contract_is_reported(tmp_path, capsys):
    bad = tmp_path / "broken.toml"
    bad.write_text('[tool.importlinter]\nroot_package = "netsim"\n\n'
                   '[[tool.importlinter.contracts]]\nname = "upside down"\ntype = "layers"\n'
                   'layers = ["netsim.units", "netsim.cli"]\n', encoding="utf-8")
    assert _lint(str(bad), capsys) != 0


def _readme_layers() -> list[str]:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Architecture", 1)[1]
    block = section.split("```", 2)[1]
    out = []
    for line in block.splitlines()[1:]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        expr = re.split(r"\s{2,}", line.strip())[0]
        out.append(re.sub(r"([A-Za-z_][\w.]*)/?", lambda m: "netsim." + m.group(1).rstrip("/"), expr))
    return out


def test_readme_diagram_is_the_layers_contract():
    assert _readme_layers() == _contracts()["layers"]["layers"]


def test_every_top_level_module_has_a_layer():
    """A new package or module of netsim must be placed in the diagram (and so in the contract)."""
    import pkgutil

    import netsim
    placed = {m.strip() for layer in _contracts()["layers"]["layers"] for m in re.split(r"[|:]", layer)}
    names = {f"netsim.{m.name}" for m in pkgutil.iter_modules(netsim.__path__)}
    assert names - placed == set()
