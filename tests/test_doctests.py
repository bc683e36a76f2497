"""Run every docstring example in the netsim package (pytest collects only tests/)."""
import doctest
import importlib
import pkgutil

import pytest

import netsim

MODULES = sorted(m.name for m in pkgutil.walk_packages(netsim.__path__, "netsim.")
                 if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0, f"{res.failed} doctest(s) failed in {name}"
