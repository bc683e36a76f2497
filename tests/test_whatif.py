"""What-if: parsing (CLI/file), op matching, stragglers, delays, link events, and one-line errors."""
import networkx as nx
import pytest
import simpy

from netsim.backends.base import create_backend
from netsim.errors import InputError
from netsim.runtime.executor import Executor
from netsim.topology import gpu_cluster
from netsim.whatif import (DelaySpec, LinkEvent, WhatIf, parse_delay, parse_link_event, parse_straggler)
from netsim.workloads import OpGraphBuilder, load_workload, place


def test_parse_delay_forms():
    assert parse_delay("allreduce@dp=2ms") == DelaySpec("allreduce", "dp", 2_000_000)
    assert parse_delay("all-to-all=5us") == DelaySpec("alltoall", None, 5000)
    assert parse_delay("send@pp0=1us") == DelaySpec("send", "pp0", 1000)


@pytest.mark.parametrize("text, msg", [
    ("allreduce@dp", "expected COLLECTIVE"),
    ("allreduz@dp=1ms", "unknown collective"),
    ("allreduce@xx=1ms", "unknown group"),
    ("allreduce@dp=fast", "bad duration"),
])
def test_parse_delay_errors(text, msg):
    with pytest.raises(InputError, match=msg) as e:
        parse_delay(text)
    assert "\n" not in str(e.value)


def test_parse_straggler_and_links():
    assert parse_straggler("3=1.5").rank == 3
    with pytest.raises(InputError, match="bad slowdown factor"):
        parse_straggler("3=0")
    assert parse_link_event("a:b=0.25@1ms") == LinkEvent("a", "b", 1_000_000, 0.25)
    assert parse_link_event("a:b@2us", fail=True) == LinkEvent("a", "b", 2000, None)
    assert parse_link_event("a:b=0.5").time_ns == 0
    for bad, fail in (("ab=0.5@1ms", False), ("a:b@1ms", False), ("a:b=0.5@1ms", True), ("a:b=-1@1ms", False)):
        with pytest.raises(InputError):
            parse_link_event(bad, fail=fail)


def test_from_doc_equals_from_cli():
    doc = {"inject_delay": {"allreduce@dp": "2ms"}, "straggler": {3: 1.5},
           "degrade_link": ["x:y=0.5@1ms"], "fail_link": ["x:z@2ms"]}
    a = WhatIf.from_doc(doc)
    b = WhatIf.from_cli(["allreduce@dp=2ms"], ["3=1.5"], ["x:y=0.5@1ms"], ["x:z@2ms"])
    assert a == b
    with pytest.raises(InputError, match="unknown key"):
        WhatIf.from_doc({"inject": []})


def _bert(dp=4):
    return load_workload({"model": {"preset": "bert-large", "layers": 2, "hidden": 256, "heads": 4, "seq_len": 128,
                                    "vocab": 8192},
                          "training": {"global_batch": 16, "micro_batch": 4, "recompute": False},
                          "parallelism": {"dp": dp}})


def _run(whatif, graph=None, iterations=1):
    g = graph or gpu_cluster(2, 4)
    wl = _bert()
    pl = place(wl, g)
    be = create_backend("analytic", g)
    whatif.check_graph(g, world_size=pl.world_size)
    whatif.start(be, g)
    ex = Executor(be, whatif.wrap_builder(OpGraphBuilder(wl, pl)), pl.gpu_of)
    ex.run(iterations)
    return ex


def test_delay_applies_to_every_matching_op():
    base = _run(WhatIf())
    ex = _run(WhatIf.from_cli(inject_delay=["allreduce@dp=1ms"]))
    dp = [op for op in ex.iteration_ops[0] if op.kind == "dp"]
    assert dp and all(op.delay_ps == 10**9 for op in dp)
    assert all(op.delay_ps == 0 for op in ex.iteration_ops[0] if op.kind != "dp")
    # the last bucket's delay cannot hide behind backward: the iteration grows by at least one delay
    assert ex.iteration_end_ps[0] - base.iteration_end_ps[0] >= 10**9


def test_delay_on_missing_collective_is_an_error():
    with pytest.raises(InputError, match="matches no operation") as e:
        _run(WhatIf.from_cli(inject_delay=["alltoall@ep=1ms"]))
    assert "allreduce@dp" in str(e.value)


def test_straggler_stretches_compute():
    base = _run(WhatIf())
    ex = _run(WhatIf.from_cli(straggler=["2=2.0"]))
    for a, b in zip(base.iteration_ops[0], ex.iteration_ops[0]):
        if b.kind in ("compute", "optimizer"):
            assert b.duration_ps == (2 * a.duration_ps if b.ranks == (2,) else a.duration_ps)
    assert ex.iteration_end_ps[0] > base.iteration_end_ps[0]
    with pytest.raises(InputError, match="no such rank"):
        WhatIf.from_cli(straggler=["9=2"]).check_graph(gpu_cluster(2, 4), world_size=4)


def test_link_checks():
    g = gpu_cluster(2, 4)
    with pytest.raises(InputError, match="no such link"):
        WhatIf.from_cli(fail_link=["s0.nic0:s1.nic0@1ms"]).check_graph(g)
    with pytest.raises(InputError, match="no such node"):
        WhatIf.from_cli(degrade_link=["nowhere:s0.nic0=0.5"]).check_graph(g)


class _Recorder:
    """A backend stub implementing the link protocol."""

    name = "stub"
    capabilities = frozenset({"link_changes"})

    def __init__(self, graph):
        self.env, self.graph, self.calls = simpy.Environment(), graph, []

    def set_link_rate(self, a, b, rate):
        self.calls.append(("rate", a, b, rate, self.env.now))
        self.graph.edges[a, b]["rate_bps"] = rate

    def fail_link(self, a, b):
        self.calls.append(("fail", a, b, self.env.now))
        self.graph.remove_edge(a, b)


def test_link_events_fire_at_their_time_through_the_protocol():
    g = nx.Graph()
    g.add_edge("a", "b", rate_bps=100e9)
    g.add_edge("b", "c", rate_bps=100e9)
    be = _Recorder(g)
    w = WhatIf.from_cli(degrade_link=["a:b=0.5@2us"], fail_link=["b:c@3us"])
    w.start(be, g)
    be.env.run()
    assert be.calls == [("rate", "a", "b", 50e9, 2_000_000), ("fail", "b", "c", 3_000_000)]


def test_backend_without_protocol_is_refused():
    class Plain:                  # declares no capability (as Backend's default), so no link changes
        name = "plain"
        env = simpy.Environment()
        capabilities = frozenset()
    with pytest.raises(InputError, match="cannot change links"):
        WhatIf.from_cli(fail_link=["a:b@1ms"]).start(Plain(), nx.Graph())


# -- end to end on the analytic backend (run_training / netsim run) ---------------------------------
def _leaf_spine_run(whatif=None, dp=8):
    from netsim.runtime import run_training
    g = gpu_cluster(4, 2, nic_kinds="roce", nic_rates_bps="100Gbps", servers_per_leaf=2, spines=2)
    doc = dict(_bert().raw, parallelism={"dp": dp}, training={"global_batch": 4 * dp, "micro_batch": 4,
                                                              "recompute": False})
    return run_training(g, doc, backend="analytic", whatif=whatif)


def test_degrade_and_fail_links_end_to_end():
    from netsim.errors import NetsimError
    base = _leaf_spine_run()["iteration_time_s"]
    slow = _leaf_spine_run({"degrade_link": ["leaf0:spine0=0.01@0", "leaf0:spine1=0.01@0"]})["iteration_time_s"]
    assert slow > 2 * base                              # every cross-leaf flow crosses a degraded uplink
    rerouted = _leaf_spine_run({"fail_link": ["leaf0:spine0@0"]})["iteration_time_s"]
    assert rerouted == pytest.approx(base, rel=0.05)    # the other spine carries the traffic
    with pytest.raises(NetsimError, match="unreachable"):
        _leaf_spine_run({"fail_link": ["leaf0:spine0@0", "leaf0:spine1@0"]})


def test_cli_flags_exit_2_one_line(tmp_path):
    import subprocess
    import sys
    base = [sys.executable, "-m", "netsim", "run", "leaf_spine:leaves=2,spines=2,hosts_per_leaf=2"]
    topo = "gpu_cluster:servers=2,gpus_per_server=2"
    wl = tmp_path / "w.yaml"
    wl.write_text("model: {preset: bert-large, layers: 2, hidden: 256, heads: 4, seq_len: 128, vocab: 8192}\n"
                  "training: {global_batch: 8, micro_batch: 2, recompute: false}\nparallelism: {dp: 4}\n")
    for flag in (["--fail-link", "s0.nic0:nowhere@1ms"], ["--inject-delay", "alltoall@ep=1ms"],
                 ["--straggler", "7=2"], ["--degrade-link", "s0.nic0:leaf0=zero@1ms"]):
        p = subprocess.run(base[:4] + [topo, str(wl), "--out", str(tmp_path / "o"), "--backend", "analytic",
                                       "--quiet"] + flag, capture_output=True, text=True)
        assert p.returncode == 2, (flag, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = subprocess.run(base[:4] + [topo, str(wl), "--out", str(tmp_path / "ok"), "--backend", "analytic", "--quiet",
                                   "--inject-delay", "allreduce@dp=1ms", "--straggler", "1=1.5"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("factor", ["1e-300", "1e-7"])
def test_a_degrade_to_below_the_slowest_link_rate_is_refused(factor):
    """A factor of 1e-300 passed the (0, 10^3] bound and overflowed simulated time (a traceback)."""
    g = gpu_cluster(2, 4)
    link = next(f"{u}:{v}" for u, v, k in g.edges(data="kind") if k != "nvlink" and k != "pcie")
    with pytest.raises(InputError, match=r"--degrade-link.*would run at .*from 1e\+06 to 1e\+18 bit/s") as e:
        WhatIf.from_cli(degrade_link=[f"{link}={factor}@0"]).check_graph(g)
    assert "\n" not in str(e.value)
    WhatIf.from_cli(degrade_link=[f"{link}=1e-3@0"]).check_graph(g)
