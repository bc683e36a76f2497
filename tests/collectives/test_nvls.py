"""NVLS simulated: reduce in the NVSwitch, multicast out of it (issue 20), on analytic and flow
(packet: test_innetwork_packet.py).

Checked against hand-computed link loads (each GPU's link carries S up and S
down in an all-reduce, against the ring's 2S(n-1)/n), the link-bound closed
form, the other fluid backend, and NCCL's tuning model's choice.
"""
from collections import defaultdict

import pytest

from netsim.backends.base import TraceSinks, create_backend
from netsim.collectives import nvls, run_collective
from netsim.errors import InputError
from netsim.records import ListSink
from netsim.topology import gpu_server

from tests.collectives.coll_helpers import NoInNetwork

N = 8
NODES = [f"s0.gpu{i}" for i in range(N)]
SW = "s0.nvs0"
RATE_BPS = 3.6e12                       # gpu_server's NVLink per GPU
S = 8 << 20


@pytest.fixture(scope="module")
def nvls_server():
    g = gpu_server("s0", gpus=N)
    g.nodes[SW]["nvls"] = True
    return g


def _run(graph, backend, kind, size, **kw):
    sink = ListSink()
    be = create_backend(backend, graph, seed=0, sinks=TraceSinks(fct=sink))
    p = run_collective(be, kind, NODES, size, **kw)
    be.env.run()
    return p.value, sink.rows


@pytest.mark.parametrize("kind", nvls.NVLS_KINDS)
def test_each_gpu_link_carries_the_hand_computed_bytes(nvls_server, kind):
    res, rows = _run(nvls_server, "analytic", kind, S, algorithm="nvls")
    up, down = defaultdict(int), defaultdict(int)
    for r in rows:
        assert SW in (r.src, r.dst)                      # every transfer ends or starts at the switch
        if r.dst == SW:
            up[r.src] += r.size_bytes
        else:
            down[r.dst] += r.size_bytes
    shard = S // N
    want = {"allreduce": (S, S), "reducescatter": ((N - 1) * shard, shard),
            "allgather": (shard, (N - 1) * shard)}[kind]
    assert want == nvls.link_bytes(kind, N, S)
    assert all((up[x], down[x]) == want for x in NODES)
    assert res.algorithm == "nvls" and res.bytes_sent == N * sum(want)


@pytest.mark.parametrize("backend", ["analytic", "flow"])
def test_nvls_allreduce_beats_ring_and_is_link_bound(nvls_server, backend):
    ring, _ = _run(nvls_server, backend, "allreduce", S, algorithm="ring")
    fast, _ = _run(nvls_server, backend, "allreduce", S, algorithm="nvls")
    bound = nvls.closed_form_time_s("allreduce", N, S, RATE_BPS)
    ring_bound = 2 * (N - 1) / N * S * 8 / RATE_BPS
    assert ring.time_s >= ring_bound and fast.time_s >= bound
    assert fast.time_s < 1.35 * bound                    # chunk pipeline near the link-bound S/B (1.29 at 8 MiB)
    assert ring.time_s / fast.time_s > 1.4               # 2(n-1)/n = 1.75 in the limit


def test_flow_and_analytic_agree(nvls_server):
    a, _ = _run(nvls_server, "analytic", "allreduce", S, algorithm="nvls")
    f, _ = _run(nvls_server, "flow", "allreduce", S, algorithm="nvls")
    assert f.time_s == pytest.approx(a.time_s, rel=0.02)


def test_auto_picks_nvls_at_large_sizes_and_runs_it(nvls_server):
    small, _ = _run(nvls_server, "analytic", "allreduce", 8192, algorithm="auto", protocol="auto")
    big, _ = _run(nvls_server, "analytic", "allreduce", 4 << 20, algorithm="auto", protocol="auto",
                  sw_latency="nccl")
    assert small.algorithm == "ring"
    assert (big.algorithm, big.protocol) == ("nvls", "simple")
    plain, _ = _run(nvls_server, "analytic", "allreduce", 4 << 20, algorithm="nvls")
    assert big.time_s * 1e6 == pytest.approx(plain.time_s * 1e6 + 23.0, abs=1e-3)   # NCCL hwLat once per call


@pytest.mark.parametrize("kw, match", [
    ({"algorithm": "nvls", "protocol": "ll"}, "collective protocol: nvls runs the Simple protocol only"),
    ({"kind": "broadcast", "algorithm": "nvls"}, "nvls does not run broadcast"),
    ({"backend": "stub", "algorithm": "nvls"}, "nvls reduces in the switch, which the stub backend cannot"),
    ({"graph": "plain", "algorithm": "nvls"}, "nvls needs every rank linked to one NVSwitch with nvls: true"),
])
def test_nvls_refusals_are_one_line_errors(nvls_server, kw, match):
    graph = gpu_server("s0", gpus=N) if kw.pop("graph", None) else nvls_server
    name = kw.pop("backend", "analytic")
    be = NoInNetwork(graph) if name == "stub" else create_backend(name, graph, seed=0)
    with pytest.raises(InputError, match=match) as exc:
        run_collective(be, kw.pop("kind", "allreduce"), NODES, S, **kw)
        be.env.run()
    assert "\n" not in str(exc.value)


def test_send_still_rejects_switch_endpoints(nvls_server):
    be = create_backend("analytic", nvls_server, seed=0)
    with pytest.raises(InputError, match="not a nvswitch"):
        be.send(NODES[0], SW, 100)
    be.send_in_network(NODES[0], SW, 100)              # admitted only inside send_in_network
    with pytest.raises(InputError, match="not a nvswitch"):
        be.send(SW, NODES[0], 100)
    plain = create_backend("flow", gpu_server("s0", gpus=2), seed=0)
    with pytest.raises(InputError, match="in-network flow: an in-network transfer ends at a switch"):
        plain.send_in_network("s0.gpu0", SW, 100)
    with pytest.raises(InputError, match="stub backend cannot terminate flows at a switch"):
        NoInNetwork(nvls_server).send_in_network(NODES[0], SW, 100)


def test_shipped_nvls_workload_runs_nvls_and_reports_it_in_ops_csv(tmp_path):
    import csv
    import os
    from netsim.runtime import run_training
    from netsim.topology import load_topology
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    topo = load_topology(os.path.join(root, "topologies", "h100_nvls_server.yaml"))
    run_training(topo, os.path.join(root, "workloads", "gpt-1.5b-d8-innetwork-small.yaml"), backend="analytic",
                 iterations=1, out_dir=str(tmp_path))
    with open(tmp_path / "ops.csv") as fh:
        dp = [r for r in csv.DictReader(fh) if r["kind"] == "dp"]
    assert dp and all((r["algorithm"], r["protocol"]) == ("nvls", "simple") for r in dp)


@pytest.mark.slow
def test_cli_runs_the_shipped_nvls_workload_on_packet(tmp_path, capsys):
    import csv
    from netsim.cli import main
    code = main(["run", "topologies/h100_nvls_server.yaml", "workloads/gpt-1.5b-d8-innetwork-small.yaml", "--backend",
                 "packet", "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 0 and capsys.readouterr().err.strip() == ""
    with open(tmp_path / "o" / "ops.csv") as fh:
        dp = [r for r in csv.DictReader(fh) if r["kind"] == "dp"]
    assert dp and all((r["algorithm"], r["protocol"]) == ("nvls", "simple") for r in dp)


@pytest.mark.parametrize("size, channels, chunk", [(1_000_003, 1, None), (777_777, 3, 50_000), (8, 2, 1)])
def test_uneven_buffers_channels_and_chunks_conserve_bytes(nvls_server, size, channels, chunk):
    """Shards differ by a byte, channels split them, chunks cut them: each GPU still sends S up and
    receives S down, and the same call twice gives the same time (deterministic)."""
    res, rows = _run(nvls_server, "flow", "allreduce", size, algorithm="nvls", channels=channels, chunk_bytes=chunk)
    up, down = defaultdict(int), defaultdict(int)
    for r in rows:
        (up if r.dst == SW else down)[r.src if r.dst == SW else r.dst] += r.size_bytes
    assert all(up[x] == down[x] == size for x in NODES)
    again, _ = _run(nvls_server, "flow", "allreduce", size, algorithm="nvls", channels=channels, chunk_bytes=chunk)
    assert again.end_ps == res.end_ps and again.flows == res.flows
