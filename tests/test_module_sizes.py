"""Issue #16: modules of netsim/ stay under ~300 lines and functions within ~80 (checked at 330 and 90).

A module is counted in physical lines (docstring and comments included); a function from its ``def``
line (decorators excluded) to its last line, docstring included, nested functions counted in the one
that holds them as well as on their own.
"""
from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "netsim")
MAX_MODULE_LINES = 330
MAX_FUNCTION_LINES = 90

#: modules allowed over the bounds, each asserted still over them (empty: every module is within them)
ALLOWED: set[str] = set()


def _modules() -> list[str]:
    out = []
    for d, _, files in os.walk(ROOT):
        out += [os.path.relpath(os.path.join(d, f), ROOT).replace(os.sep, "/") for f in files if f.endswith(".py")]
    return sorted(out)


def _sizes(text: str) -> tuple[int, list[tuple[str, int, int]]]:
    """(lines, [(function, first line, length)]) of one module's source."""
    funcs = [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(text))
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return len(text.splitlines()), funcs


def _too_long(rel: str) -> list[str]:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        lines, funcs = _sizes(fh.read())
    out = [f"{rel}: {lines} lines > {MAX_MODULE_LINES}"] if lines > MAX_MODULE_LINES else []
    return out + [f"{rel}:{at} {name}(): {n} lines > {MAX_FUNCTION_LINES}"
                  for name, at, n in funcs if n > MAX_FUNCTION_LINES]


def test_the_measure_counts_what_it_says():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))     # def + 90 lines = 91
    lines, funcs = _sizes(f'"""doc"""\n\n\ndef f():\n{body}\n\n\ndef g():\n    return 1\n')
    assert lines == 3 + 1 + MAX_FUNCTION_LINES + 2 + 2
    assert funcs == [("f", 4, MAX_FUNCTION_LINES + 1), ("g", 4 + MAX_FUNCTION_LINES + 3, 2)]


def test_the_allow_list_names_real_files():
    assert ALLOWED <= set(_modules())


@pytest.mark.parametrize("rel", _modules())
def test_module_and_function_sizes(rel):
    if rel in ALLOWED:       # still to split (issue #16, open): the entry goes once the module is in bounds
        assert _too_long(rel), f"{rel} is within bounds now: remove it from ALLOWED"
        return
    assert not _too_long(rel), "; ".join(_too_long(rel))
