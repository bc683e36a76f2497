"""A NIC written without ``nic_kind`` is an RDMA NIC (RoCE, or IB on an InfiniBand link), as docs/packet.md says.

Regression (issue #14, trial): it was taken as kernel TCP, so the host stack
capped every flow at ~42 Gb/s and a DP ring on 100 Gb/s NICs took 2.4x its time.
"""
import networkx as nx

from netsim.runtime import run_training
from netsim.topology.summary import summary as summarize

WL = {"model": {"preset": "bert-large", "layers": 2, "hidden": 256, "heads": 4, "seq_len": 128, "vocab": 8192},
      "training": {"global_batch": 16, "micro_batch": 4}, "parallelism": {"dp": 4}}


def _hand(nic_kind=None, link="ethernet") -> nx.Graph:
    g = nx.Graph()
    g.add_node("sw", kind="switch")
    for i in range(4):
        extra = {} if nic_kind is None else {"nic_kind": nic_kind}
        g.add_node(f"g{i}", kind="gpu")
        g.add_node(f"n{i}", kind="nic", **extra)
        g.add_edge(f"g{i}", f"n{i}", kind="pcie", rate_bps=256e9, delay_ns=100)
        g.add_edge(f"n{i}", "sw", kind=link, rate_bps=100e9, delay_ns=500)
    return g


def test_unset_nic_kind_runs_as_roce_not_tcp():
    t = {k: run_training(_hand(k), WL, backend="analytic")["iteration_time_s"] for k in (None, "roce", "ethernet")}
    assert t[None] == t["roce"] < t["ethernet"]
    ib = run_training(_hand(None, link="infiniband"), WL, backend="analytic")["iteration_time_s"]
    assert ib == run_training(_hand("infiniband", link="infiniband"), WL, backend="analytic")["iteration_time_s"]


def test_topo_show_says_the_kind_was_not_written():
    assert summarize(_hand())["nic_kinds"] == {"roce (unset)": 4}
    assert summarize(_hand("roce"))["nic_kinds"] == {"roce": 4}


def test_validate_refuses_gpus_joined_only_through_another_gpu(tmp_path, capsys):
    """Regression (trial): a 4-GPU NVLink ring without gpu_forwarding passed `topo validate` and failed in `run`."""
    from netsim.cli import main
    ring = ("name: gr\nlink_defaults: {kind: nvlink, delay_ns: 100, rate_bps: 100Gbps}\n"
            "nodes: {a: {kind: gpu}, b: {kind: gpu}, c: {kind: gpu}, d: {kind: gpu}}\n"
            "links: [{src: a, dst: b}, {src: b, dst: c}, {src: c, dst: d}, {src: d, dst: a}]\n")
    p = tmp_path / "ring.yaml"
    p.write_text(ring)
    assert main(["topo", "validate", str(p)]) == 2
    assert "c cannot reach a" in capsys.readouterr().err
    p.write_text(ring + "gpu_forwarding: true\n")
    assert main(["topo", "validate", str(p)]) == 0
