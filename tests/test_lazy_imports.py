"""Lazy imports: name registries that list without importing, and what a flow run imports.

The congestion-control names (``netsim.transport.cc.BUILTIN_CC``), the
topology package's names and the collective algorithms are listed without
importing their modules; each module is imported on first use. These tests
check the registries against the modules they stand for, that the error
messages still list every name, and that a flow ring all-reduce imports none
of the modules it does not use.
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys

import networkx as nx
import pytest

from netsim.errors import InputError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_builtin_cc_table_matches_the_classes():
    """Every module of the cc package registers exactly the built-in names, with the table's transport."""
    from netsim.transport import cc as ccpkg
    from netsim.transport.cc.base import REGISTRY
    for info in pkgutil.iter_modules(ccpkg.__path__):
        importlib.import_module(f"{ccpkg.__name__}.{info.name}")
    builtin = {name: cls for name, cls in REGISTRY.items() if cls.__module__.startswith(ccpkg.__name__ + ".")}
    assert sorted(builtin) == sorted(ccpkg.BUILTIN_CC)
    for name, cls in builtin.items():
        entry = ccpkg.BUILTIN_CC[name]
        assert cls.__module__ == f"{ccpkg.__name__}.{entry.module}", name
        assert cls.transport == entry.transport, name
    assert ccpkg.CLASSES["cubic"] is REGISTRY["cubic"] and "bogus" not in ccpkg.CLASSES
    with pytest.raises(KeyError):
        ccpkg.CLASSES["bogus"]


def test_unknown_cc_lists_every_name():
    from netsim.network.params import resolve_params
    from netsim.network.send import SendContract
    g = nx.Graph()
    g.add_node("a", kind="host")
    with pytest.raises(InputError) as exc:
        SendContract(g, resolve_params(), "bogus")
    msg = str(exc.value)                 # other tests may have registered algorithms of their own (_test_*)
    assert msg.startswith("--cc: unknown congestion control (got 'bogus'); expected one of ")
    named = msg.split("expected one of ", 1)[1].split(", ")
    assert [n for n in named if not n.startswith("_test")] == ["cubic", "dcqcn", "dctcp", "hpcc", "none", "swift",
                                                                 "timely"]
    c = SendContract(g, resolve_params(), "swift")
    assert (c.priority_of("swift"), c.priority_of("dcqcn")) == (0, 3)   # tcp_priority 0, roce_priority 3


def test_topology_names_resolve_to_their_modules():
    import netsim.topology as topo
    from netsim.topology import schema, summary as summary_fn
    assert topo.validate is schema.validate
    assert callable(summary_fn) and summary_fn.__module__ == "netsim.topology.summary"
    import netsim.topology.summary  # noqa: F401  (the submodule import keeps the function bound)
    assert topo.summary is summary_fn
    assert sorted(topo.__all__) == sorted(set(topo._WHERE) | {"builders"})
    for name in topo.__all__:
        assert getattr(topo, name) is not None
    with pytest.raises(AttributeError):
        topo.no_such_name


_PROBE = """
import json, sys
from netsim.bench.flow import ring_allreduce_star
ring_allreduce_star(8, 10**6)
from netsim.bench import load
assert "flow_ring_allreduce_256" in load(["flow_ring_allreduce_256"])
print(json.dumps(sorted(m for m in sys.modules if m.startswith("netsim."))))
"""


def test_flow_ring_imports_only_what_it_uses():
    """A flow ring all-reduce (cc none) imports no cc algorithm module, no topology builder or reader,
    no collective algorithm but ring, and of the benchmark modules only the one that defines the
    benchmark asked for."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=True)
    mods = set(json.loads(out.stdout))
    assert "netsim.backends.flow.backend" in mods and "netsim.collectives.ring" in mods
    unused = {f"netsim.transport.cc.{m}" for m in ("cubic", "dcqcn", "dctcp", "hpcc", "swift", "timely")}
    unused |= {f"netsim.topology.{m}" for m in ("builders", "io", "hpcc", "buildspec", "summary")}
    unused |= {f"netsim.collectives.{m}" for m in ("tree", "alltoall", "halving_doubling", "hierarchical",
                                                    "nvls", "collnet")}
    unused |= {f"netsim.bench.{m}" for m in ("packet", "cc", "training", "flowgpt", "outputs", "routing")}
    assert not mods & unused, sorted(mods & unused)


def test_bench_area_names_match_the_registered_benchmarks():
    """The names read from the bench modules' source are the ones those modules register."""
    from netsim.bench import BENCHES, area_names, load, load_all
    where = area_names()
    registered = load_all()
    assert where and set(where) <= set(registered)
    for name, area in where.items():
        assert registered[name].__module__ == f"netsim.bench.{area}", name
    assert load(["incast16"]) is BENCHES and load([]) is BENCHES
