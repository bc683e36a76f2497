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


# -- start-up: what a process imports before it does any work --------------------------------------------------
# Asserted on the module set, not on time (a loaded machine cannot make these fail). Each of these
# packages costs tens to hundreds of ms of start-up; the processes below do not use them.

_MODULES = """
import json, sys
{code}
print(json.dumps(sorted(sys.modules)))
"""


def _imported(code: str, *argv: str) -> set:
    """Every module ``sys.modules`` holds after ``code`` runs in a fresh interpreter (``argv``: its sys.argv[1:])."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _MODULES.format(code=code), *argv], capture_output=True, text=True,
                         env=env, check=True, cwd=ROOT)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _under(mods: set, *packages: str) -> list:
    return sorted(m for m in mods if any(m == p or m.startswith(p + ".") for p in packages))


def test_import_runtime_imports_no_graph_table_or_plot_library():
    """``import netsim.runtime`` (the Python API's entry) loads no networkx, pandas, pyarrow or matplotlib,
    no backend, no topology builder or reader, no cluster, sweep, what-if, importer or analysis module."""
    mods = _imported("import netsim.runtime")
    assert "netsim.runtime.api" in mods and "netsim.workloads.generate" in mods     # the probe did import
    assert not _under(mods, "networkx", "pandas", "pyarrow", "matplotlib", "scipy"), \
        _under(mods, "networkx", "pandas", "pyarrow", "matplotlib", "scipy")
    unused = _under(mods, "netsim.backends.packet", "netsim.backends.flow", "netsim.backends.analytic",
                    "netsim.cluster", "netsim.sweep", "netsim.importers", "netsim.analysis", "netsim.bench",
                    "netsim.cli", "netsim.transport.cc", "netsim.whatif", "netsim.topology.builders",
                    "netsim.topology.io", "netsim.topology.hpcc", "netsim.topology.graphml")
    assert not unused, unused


_CLI = """
import sys
from netsim.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
"""


def test_run_help_imports_only_the_run_command():
    """``netsim run --help`` registers the run subcommand only: no other subcommand module, and none of
    networkx, numpy, pandas, pyarrow, simpy or the simulation layers (its help text needs none)."""
    mods = _imported(_CLI.replace("main(sys.argv[1:])", "import contextlib, io\n"
                                  "    with contextlib.redirect_stdout(io.StringIO()):\n"
                                  "        main(sys.argv[1:])"), "run", "--help")
    assert "netsim.cli.run" in mods
    others = {f"netsim.cli.{c}" for c in ("topo", "flows", "traffic", "defaults", "compare", "bench", "report",
                                          "sweep", "export", "cluster")}
    assert not mods & others, sorted(mods & others)
    heavy = _under(mods, "networkx", "numpy", "pandas", "pyarrow", "simpy", "yaml", "netsim.runtime",
                   "netsim.workloads", "netsim.backends.flow", "netsim.backends.packet", "netsim.analysis")
    assert not heavy, heavy


def test_netsim_help_still_lists_every_subcommand(capsys):
    """Registering one subcommand is an optimisation of ``main``: ``netsim --help`` and an unknown
    command still see them all."""
    from netsim.cli import SUBCOMMANDS, build_parser, main
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in SUBCOMMANDS)
    with pytest.raises(SystemExit) as exc:
        main(["bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'bogus'" in err and all(f"'{name}'" in err for name in SUBCOMMANDS)
    assert sorted(build_parser(only="run")._subparsers._group_actions[0].choices) == ["run"]


def test_flow_run_imports_no_cluster_runner_or_importer_body(tmp_path):
    """A ``netsim run`` of a netsim workload on the flow backend asks whether the workload is a cluster
    file or another tool's format, and imports only the sniffers for that: no cluster runner, no
    importer, no packet backend, no HPCC reader, no other subcommand."""
    out = tmp_path / "out"
    mods = _imported(_CLI, "run", "gpu_cluster:servers=1,gpus_per_server=2", "workloads/gpt-1.5b-t2p2d2-small.yaml",
                     "--backend", "flow", "--workload-set", "parallelism.pp=1", "--workload-set", "parallelism.dp=1",
                     "--out", str(out), "--quiet", "--no-trace")
    assert (out / "summary.json").is_file(), "the run did not complete"
    assert {"netsim.backends.flow.backend", "netsim.cluster.spec", "netsim.importers.sniff"} <= mods
    unused = _under(mods, "netsim.cluster.api", "netsim.cluster.runner", "netsim.cluster.jobs",
                    "netsim.cluster.background", "netsim.importers.job", "netsim.importers.chakra",
                    "netsim.importers.simai", "netsim.importers.aicb_csv", "netsim.importers.load",
                    "netsim.importers.simai_build", "netsim.simulate", "netsim.topology.hpcc", "netsim.backends.packet", "netsim.topology.graphml", "netsim.sweep", "netsim.bench", "netsim.cli.compare",
                    "netsim.cli.bench", "netsim.cli.report", "matplotlib")
    assert not unused, unused


def test_cc_none_run_imports_no_other_algorithm(tmp_path):
    """``--cc none`` (checked up front with ``--cc-param``) imports no other algorithm's module: the
    parameters of algorithms a run does not name are resolved only when read."""
    out = tmp_path / "out"
    mods = _imported(_CLI, "run", "gpu_cluster:servers=1,gpus_per_server=2", "workloads/gpt-1.5b-t2p2d2-small.yaml",
                     "--backend", "flow", "--cc", "none", "--cc-param", "window_bytes=0",
                     "--workload-set", "parallelism.pp=1", "--workload-set", "parallelism.dp=1",
                     "--out", str(out), "--quiet", "--no-trace")
    assert (out / "summary.json").is_file(), "the run did not complete"
    assert "netsim.transport.cc.base" in mods
    others = {f"netsim.transport.cc.{m}" for m in ("cubic", "dcqcn", "dctcp", "hpcc", "swift", "timely")}
    assert not mods & others, sorted(mods & others)
