"""Batched sends (issue 22): ``Backend.send_batch`` and the collectives' batches change no result.

The flow backend starts a batch as ``send`` would one flow after the other and
delivers the arrivals of one delivery time with one SimPy event; the packet
and analytic backends unroll a batch into ``send`` calls. Checked here: the
records and their order against one ``send`` per transfer, the grouping of
arrivals, and whole training steps with ``Run.batch_sends`` on and off —
``fct.csv`` byte for byte and the iteration time — on the shipped ``-small``
workloads, with every congestion control on the flow backend.
"""
import glob
import math
import os

import networkx as nx
import pytest
import simpy

from netsim.backends.base import TraceSinks, Transfer, create_backend
from netsim.backends.flow.ccmodel import MODEL_TABLES
from netsim.collectives.engine import Run
from netsim.records import ListSink
from netsim.runtime import run_training
from netsim.topology import load_topology
from netsim.workloads import load_workload

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
WL = os.path.join(ROOT, "workloads")
TOPO = os.path.join(ROOT, "topologies")
SMALL = sorted(glob.glob(os.path.join(WL, "*-small.yaml")))
#: every congestion control the flow backend models (timely has none: an InputError there)
CCS = tuple(sorted(MODEL_TABLES))


def _fan() -> nx.Graph:
    """Hosts h0..h8 on one switch, link delays 1, 2, 3 us (h0, h3, h6 at 1 us): flows of one
    instant deliver at different times, flows of one size and delay together."""
    g = nx.Graph()
    g.add_node("s", kind="switch")
    for i in range(9):
        g.add_node(f"h{i}", kind="host")
        g.add_edge(f"h{i}", "s", kind="ethernet", rate_bps=100e9, delay_ns=1000 * (i % 3 + 1))
    return g


#: (src, dst, bytes) on disjoint links: the first three deliver together, then the last, then the 4th and 5th
_FAN = [("h0", "h3", 125_000), ("h3", "h6", 125_000), ("h6", "h0", 125_000), ("h1", "h4", 250_000),
        ("h4", "h7", 250_000), ("h2", "h5", 125_000)]


def _one_by_one(graph):
    """Records of the fan transfers sent by ``send``, in the order their events are processed."""
    env, sink = simpy.Environment(), ListSink()
    be = create_backend("flow", graph, env=env, sinks=TraceSinks(fct=sink))
    seen = []
    for src, dst, n in _FAN:
        be.send(src, dst, n).callbacks.append(lambda ev: seen.append(ev.value))
    env.run()
    return seen, sink.rows


def test_flow_batch_same_records_in_same_order_one_event_per_delivery():
    graph = _fan()
    seen_one, rows_one = _one_by_one(graph)
    env, sink = simpy.Environment(), ListSink()
    be = create_backend("flow", graph, env=env, sinks=TraceSinks(fct=sink))
    calls = []
    be.send_batch([Transfer(s, d, n) for s, d, n in _FAN], lambda keys, recs: calls.append((keys, recs)))
    env.run()
    seen = [r for _, recs in calls for r in recs]
    assert seen == seen_one and sink.rows == rows_one              # records, order of arrival and of fct.csv
    ends = [[r.end_ns for r in recs] for _, recs in calls]
    assert all(len(set(e)) == 1 for e in ends)                     # one call per delivery time ...
    assert [len(keys) for keys, _ in calls] == [3, 1, 2]          # ... sharing one event (h2-h5 ends second)
    assert [k for keys, _ in calls for k in keys] == [r.flow_id for r in seen]   # keys = positions = flow ids here


def test_flow_batch_keys_and_a_plain_send_between_keep_the_order():
    """A flow sent by ``send`` between two batches, delivered at the same time as batch flows
    before and after it, keeps its place: the batch flows after it are reported after its event."""
    graph = _fan()
    seen_one, _ = _one_by_one(graph)
    env = simpy.Environment()
    be = create_backend("flow", graph, env=env)
    seen = []
    on_done = lambda keys, recs: seen.extend(zip(keys, recs))    # noqa: E731
    be.send_batch([Transfer(*_FAN[0])], on_done, keys=["a"])
    be.send(*_FAN[1]).callbacks.append(lambda ev: seen.append(("plain", ev.value)))
    be.send_batch([Transfer(*t) for t in _FAN[2:]], on_done, keys=["c", "d", "e", "f"])
    env.run()
    assert [r for _, r in seen] == seen_one
    assert [(r.flow_id, k) for k, r in seen] == [(0, "a"), (1, "plain"), (2, "c"), (5, "f"), (3, "d"), (4, "e")]
    assert seen[0][1].end_ns == seen[1][1].end_ns == seen[2][1].end_ns


def test_flow_batch_checks_like_send():
    """A transfer the contract has not seen goes through ``send``'s checks: a bad node is the
    same one-line error, a self-send a local copy."""
    from netsim.errors import InputError
    be = create_backend("flow", _fan(), env=simpy.Environment())
    with pytest.raises(InputError, match="nowhere"):
        be.send_batch([Transfer("h0", "nowhere", 10)], lambda k, r: None)
    got = []
    be.send_batch([Transfer("h0", "h0", 10), Transfer("h0", "h1", 10)], lambda k, r: got.extend(zip(k, r)))
    be.env.run()
    assert [(k, r.fct_ns) for k, r in got] == [(0, 0), (1, got[1][1].fct_ns)] and got[1][1].fct_ns > 0


def test_default_send_batch_unrolls_into_sends():
    """The analytic backend has no batch of its own: one ``send`` per transfer, one call per arrival."""
    def run(batched):
        env, sink = simpy.Environment(), ListSink()
        be = create_backend("analytic", _fan(), env=env, sinks=TraceSinks(fct=sink))
        calls = []
        if batched:
            be.send_batch([Transfer(*t) for t in _FAN], lambda keys, recs: calls.append((keys, recs)))
        else:
            for i, t in enumerate(_FAN):
                be.send(*t).callbacks.append(lambda ev, i=i: calls.append(([i], [ev.value])))
        env.run()
        return calls, sink.rows
    assert run(True) == run(False)
    assert all(len(keys) == 1 for keys, _ in run(True)[0])


def _topology_for(workload: str) -> str:
    """The smallest shipped topology with enough GPUs for ``workload``."""
    from netsim.topology.query import gpus
    need = load_workload(workload).world_size
    fits = []
    for p in sorted(glob.glob(os.path.join(TOPO, "*.yaml"))):
        n = len(gpus(load_topology(p)))
        if n >= need:
            fits.append((n, p))
    return min(fits)[1]


def _step(topo, workload, backend, cc, batched, tmp_path, monkeypatch) -> tuple:
    monkeypatch.setattr(Run, "batch_sends", batched)
    out = tmp_path / ("batched" if batched else "single")
    s = run_training(topo, workload, backend=backend, cc=cc, out_dir=str(out), progress=False)
    return s["iteration_time_s"], s["flows"], (out / "fct.csv").read_bytes()


def _same(topo, workload, backend, cc, tmp_path, monkeypatch):
    a = _step(topo, workload, backend, cc, True, tmp_path, monkeypatch)
    b = _step(topo, workload, backend, cc, False, tmp_path, monkeypatch)
    assert a[1] == b[1] > 0
    assert a[0] == b[0]
    assert a[2] == b[2]                           # fct.csv byte for byte


@pytest.mark.parametrize("cc", CCS)
def test_batched_step_identical_every_cc(cc, tmp_path, monkeypatch):
    _same("gpu_cluster:servers=4,gpus_per_server=8", os.path.join(WL, "gpt-3b-t2p2d8-small.yaml"), "flow", cc,
          tmp_path, monkeypatch)


@pytest.mark.parametrize("backend", ["analytic", "flow"])
def test_batched_step_identical_moe(backend, tmp_path, monkeypatch):
    wl = os.path.join(WL, "gpt-moe-350m-small.yaml")
    _same(_topology_for(wl), wl, backend, "none", tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("workload", SMALL, ids=os.path.basename)
def test_batched_step_identical_shipped_small(workload, tmp_path, monkeypatch):
    topo = _topology_for(workload)
    for cc in CCS:
        _same(topo, workload, "flow", cc, tmp_path, monkeypatch)


@pytest.mark.slow
def test_batched_step_identical_packet(tmp_path, monkeypatch):
    wl = os.path.join(WL, "gpt-1.5b-t2p2d2-small.yaml")
    _same("gpu_cluster:servers=2,gpus_per_server=4", wl, "packet", "dcqcn", tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("servers", [8, 32])
def test_batched_gpt_bench_identical(servers, tmp_path, monkeypatch):
    """The 64- and 256-GPU GPT-3B weak-scaling steps (t8 p4, global batch 16·d) of ``flow_gpt_weak_scaling``."""
    dp = servers * 8 // 32
    over = {"parallelism.tp": 8, "parallelism.pp": 4, "parallelism.dp": dp, "training.global_batch": 16 * dp}
    runs = []
    for batched in (True, False):
        monkeypatch.setattr(Run, "batch_sends", batched)
        s = run_training(f"gpu_cluster:servers={servers},gpus_per_server=8", os.path.join(WL, "gpt-3b-t2p2d8.yaml"),
                         backend="flow", out_dir=str(tmp_path / str(batched)), progress=False,
                         workload_overrides=over)
        runs.append((s["iteration_time_s"], s["flows"], (tmp_path / str(batched) / "fct.csv").read_bytes()))
    assert runs[0] == runs[1] and math.isfinite(runs[0][0])
