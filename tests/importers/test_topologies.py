"""SimAI and ASTRA-sim topologies, GPU forwarding, ASTRA-sim system JSON."""
import json

import pytest

from netsim.collectives import run_collective
from netsim.backends.base import create_backend
from netsim.errors import InputError, NetsimError, RoutingError
from netsim.importers.astra import astra_rate_bps, load_system
from netsim.topology import Router, gpus, load_topology


def _simai_topo(path, eol="\n"):
    # 2 servers x 2 GPUs, 1 NVSwitch per server, 2 ToRs (one rail each) and 1 spine: 4 + 2 + 3 = 9 nodes
    lines = ["9 2 2 3 10 H100", "4 5 6 7 8 "]
    for gpu in range(4):
        lines.append(f"{gpu} {4 + gpu // 2} 2880Gbps 0.000025ms 0")
        lines.append(f"{gpu}\t{6 + gpu % 2}\t400Gbps\t0.0005ms\t0")
    lines += ["6 8 800Gbps 0.0005ms 0", "7 8 800Gbps 0.0005ms 0"]
    path.write_text(eol.join(lines) + eol, newline="")
    return str(path)


def test_simai_topology_inserts_the_nic_folded_into_the_gpu(tmp_path):
    g = load_topology(_simai_topo(tmp_path / "Rail_4g", eol="\r\n"))
    assert gpus(g) == ["s0.gpu0", "s0.gpu1", "s1.gpu0", "s1.gpu1"] and g.graph["gpu_type"] == "H100"
    assert g.nodes["s1.nic1"]["kind"] == "nic" and g.edges["s1.gpu1", "s1.nic1"]["kind"] == "pcie"
    assert g.edges["s1.nic1", "sw7"]["rate_bps"] == 400e9 and g.edges["s1.nic1", "sw7"]["delay_ns"] == 500
    assert g.edges["s0.gpu0", "nvs4"]["kind"] == "nvlink" and not g.has_edge("s0.gpu0", "sw6")
    r = Router(g)
    assert r.path("s0.gpu0", "s0.gpu1") == ("s0.gpu0", "nvs4", "s0.gpu1")
    assert r.path("s0.gpu0", "s1.gpu0") == ("s0.gpu0", "s0.nic0", "sw6", "s1.nic0", "s1.gpu0")


def test_simai_topology_errors_name_line_and_field(tmp_path):
    p = tmp_path / "t"
    p.write_text("9 2 2 3 1 H100\n4 5 6 7 8\n0 4 fast 0.000025ms 0\n")
    with pytest.raises(InputError, match=r"t: line 3, field rate: bad rate \(got 'fast'\)"):
        load_topology(str(p))


def test_astra_bandwidth_is_binary_gigabytes():
    # ASTRA-sim: bytes per ns = bw * 2**30 / 1e9; 50 GB/s -> 53.687 bytes/ns, 7.37 % above SI
    assert astra_rate_bps(50) == 50 * 2**30 * 8
    assert astra_rate_bps(50) / 400e9 == pytest.approx(1.073741824)


def _astra_yaml(tmp_path, body):
    p = tmp_path / "network.yml"
    p.write_text(body)
    return str(p)


def test_astra_ring_routes_through_gpus_and_alltoall_runs(tmp_path):
    g = load_topology(_astra_yaml(tmp_path, "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]  # GB/s\n"
                                            "latency: [ 500.0 ]  # ns\n"))
    assert g.graph["gpu_forwarding"] is True and len(gpus(g)) == 8
    assert g.edges["s0.gpu0", "s0.gpu1"]["rate_bps"] == astra_rate_bps(50)
    assert len(Router(g).path("s0.gpu0", "s0.gpu4")) == 5            # 4 hops, 3 GPUs relay
    be = create_backend("flow", g)
    proc = run_collective(be, "alltoall", gpus(g), 8 << 20)
    be.env.run(proc)
    assert be.env.now > 0
    off = g.copy()
    off.graph["gpu_forwarding"] = False
    with pytest.raises(RoutingError, match="gpu_forwarding"):
        Router(off).path("s0.gpu0", "s0.gpu4")
    be = create_backend("packet", g)             # relay GPUs (backends/packet/node.RelayEndpoint)
    be.env.run(run_collective(be, "sendrecv", [gpus(g)[0], gpus(g)[4]], 1 << 16))
    assert be.env.now > 0


def test_astra_multi_dim_and_errors(tmp_path):
    g = load_topology(_astra_yaml(tmp_path, "topology: [ FullyConnected, Switch ]\nnpus_count: [ 4, 2 ]\n"
                                            "bandwidth: [ 200, 25 ]\nlatency: [ 100, 1000 ]\n"))
    assert len(gpus(g)) == 8 and g.has_edge("s0.gpu0", "s0.gpu3") and g.has_edge("s0.gpu0.nic1", "d1.g0.sw")
    assert Router(g).path("s0.gpu1", "s1.gpu1") == ("s0.gpu1", "s0.gpu1.nic1", "d1.g1.sw", "s1.gpu1.nic1", "s1.gpu1")
    with pytest.raises(InputError, match=r"network\.yml: topology\[0\].*'Torus2D'"):
        load_topology(_astra_yaml(tmp_path, "topology: [ Torus2D ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\n"
                                            "latency: [ 1 ]\n"))
    with pytest.raises(InputError, match=r"bandwidth\[1\]: bad value \(got -3\)"):
        load_topology(_astra_yaml(tmp_path, "topology: [ Ring, Ring ]\nnpus_count: [ 4, 2 ]\n"
                                            "bandwidth: [ 1, -3 ]\nlatency: [ 1, 1 ]\n"))


def test_torus_and_yaml_gpu_forwarding_flag(tmp_path):
    t = load_topology("gpu_torus:dims=4|4")
    assert len(gpus(t)) == 16 and t.degree("s0.gpu0") == 4 and t.graph["gpu_forwarding"]
    p = tmp_path / "pair.yaml"
    p.write_text("gpu_forwarding: true\nnodes: {a: {kind: gpu}, b: {kind: gpu}, c: {kind: gpu}}\n"
                 "links:\n - {src: a, dst: b, rate_bps: 1Gbps, delay_ns: 0, kind: nvlink}\n"
                 " - {src: b, dst: c, rate_bps: 1Gbps, delay_ns: 0, kind: nvlink}\n")
    assert Router(load_topology(str(p))).path("a", "c") == ("a", "b", "c")


def test_system_json_maps_and_reports(tmp_path):
    p = tmp_path / "system.json"
    p.write_text(json.dumps({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
                             "preferred-dataset-splits": 4, "all-reduce-implementation": ["doubleBinaryTree"],
                             "all-gather-implementation": ["direct"], "roofline-enabled": 1, "peak-perf": 900}))
    s, notes = load_system(str(p))
    assert s == {"algorithm": "tree", "channels": 2, "splits": 4, "peak_flops": 900e12}
    assert any("all-gather-implementation" in n for n in notes) and any("scheduling-policy" in n for n in notes)


def test_system_json_applies_to_an_imported_job(tmp_path):
    from netsim.importers import detect_job
    wl = tmp_path / "micro.txt"
    wl.write_text("MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1\n")
    p = tmp_path / "system.json"
    p.write_text(json.dumps({"all-reduce-implementation": ["halvingDoubling"], "preferred-dataset-splits": 8,
                             "active-chunks-per-dimension": 2, "endpoint-delay": 10}))
    job = detect_job(str(wl), overrides={"system": str(p)}, graph=load_topology("gpu_server:gpus=4"))
    (op,) = [t for t in job.templates if t.collective]
    assert (op.spec.algorithm, op.spec.channels, op.spec.chunk_bytes) == ("halving_doubling", 2, 131072)
    assert any("endpoint-delay" in n for n in job.notes)
    with pytest.raises(InputError, match=r"--workload-set: not an option of the SimAI importer \(got 'bogus'\)"):
        detect_job(str(wl), overrides={"bogus": 1})


def test_simai_nvlink_only_file_runs_a_simai_micro_allreduce(tmp_path):
    # gen_Topo_Template.py's NVLink_Only layout: 8 GPUs, one NVSwitch, switch count 0, trailing space on line 2
    lines = ["9 8 1 0 8 A100", "8 "] + [f"{i} 8 2400Gbps 0.000025ms 0" for i in range(8)]
    topo = tmp_path / "A100_8g_nvlink_only.topo"
    topo.write_text("\n".join(lines) + "\n")
    wl = tmp_path / "micro.txt"
    wl.write_text("MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1\n")
    from netsim.runtime.api import run_training
    s = run_training(str(topo), str(wl), backend="analytic", progress=False)
    n, size = 8, 1 << 20
    chunk = size // n
    wire = chunk + -(-chunk // (1500 - 62)) * 62
    step_s = wire * 8 / 2.4e12 + 1500 * 8 / 2.4e12 + 2 * 25e-9
    assert s["flow_bytes_per_iteration"]["dp"] == [2 * (n - 1) * size]
    assert s["iteration_time_s"] == pytest.approx(2 * (n - 1) * step_s, rel=0.01)


def test_imported_fabrics_are_rdma_so_no_tcp_host_stack_applies(tmp_path):
    # the NICs a SimAI topology or an ASTRA-sim Switch dimension gets used to be ethernet, so `netsim run`
    # applied the TCP host-stack cap (~42 Gb/s per flow): a 400 Gb/s DP job ran 9.5x slower, silently
    simai = load_topology(_simai_topo(tmp_path / "Rail_4g"))
    astra = load_topology(_astra_yaml(tmp_path, "topology: [ FullyConnected, Switch ]\nnpus_count: [ 4, 2 ]\n"
                                                "bandwidth: [ 100, 50 ]\nlatency: [ 100, 500 ]\n"))
    for g in (simai, astra):
        kinds = {k for n, k in g.nodes(data="nic_kind") if g.nodes[n].get("kind") == "nic"}
        assert kinds == {"roce"}


def test_flow_files_route_through_gpus_on_a_gpu_forwarding_topology(tmp_path):
    # netsim flows rejected every multi-hop flow on a GPU ring ("routes never transit a GPU"), netsim run did not
    from netsim.cli import main
    f = tmp_path / "r4.csv"
    f.write_text("src,dst,size_bytes,start_ns\ns0.gpu0,s0.gpu2,100000,0\n")
    for backend in ("flow", "analytic"):
        assert main(["flows", "gpu_ring:gpus=4", str(f), "--backend", backend, "--out", str(tmp_path / backend),
                     "--quiet", "--no-trace"]) == 0
