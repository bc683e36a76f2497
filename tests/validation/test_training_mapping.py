"""APNet'24's mapping finding: where the TP group sits matters.

With NVLink at 16x the NIC rate, a TP group spread across two servers (DP-first
placement) exposes at least 3x the TP time of the same group inside one server
(Megatron placement).
"""
from netsim.runtime import run_training
from netsim.topology import gpu_cluster

WL = {"name": "tp-mapping", "model": {"preset": "gpt-1.5b", "layers": 4, "hidden": 512, "heads": 8,
                                      "seq_len": 256, "vocab": 1024},
      "training": {"global_batch": 8, "micro_batch": 2},
      "parallelism": {"dp": 2, "tp": 4, "pp": 1},
      "compute": {"optimizer": "none"}}


import pytest


def _tp_time(order, backend):
    g = gpu_cluster(servers=2, gpus_per_server=4, nic_rates_bps=100e9, nvlink_rate_bps=1.6e12)
    wl = {**WL, "placement": {"order": order}}
    s = run_training(g, wl, backend=backend)
    return s["breakdown_s"]["tp"], s


@pytest.mark.parametrize("backend", ["analytic", "flow", pytest.param("packet", marks=pytest.mark.slow)])
def test_tp_across_servers_exposes_3x_more_tp_time(backend):
    inside, s_in = _tp_time("megatron", backend)
    across, s_out = _tp_time("dp_first", backend)
    assert s_in["effective_bandwidth_bps"]["C_TP"] >= 10 * s_out["effective_bandwidth_bps"]["C_TP"]
    assert inside > 0
    assert across >= 3 * inside, (inside, across)
    assert s_out["iteration_time_s"] > s_in["iteration_time_s"]
