"""Run the docstring examples of the topology and flow-file modules (testpaths only collects tests/)."""
import doctest
import importlib

import pytest

MODULES = ["netsim.topology.schema", "netsim.topology.builders", "netsim.topology.routing", "netsim.topology.io",
           "netsim.topology.query", "netsim.topology.summary", "netsim.flowfile"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0
