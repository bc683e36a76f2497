"""GPU memory model: Korthikanti et al.'s activation formulas, ZeRO's 16Ψ accounting, fit checks."""
import subprocess
import sys

import pytest

from netsim.errors import InputError
from netsim.runtime import run_training
from netsim.workloads.memory import (activation_bytes_per_layer, micro_batches_in_flight, model_state_bytes)

S, B, H, A = 2048, 1, 2560, 32      # GPT-3B: l=32, h=2560, s=2048


@pytest.mark.parametrize("t", [1, 2, 4, 8])
def test_activation_bytes_match_korthikanti_table_2(t):
    sbh = S * B * H
    act = lambda **kw: activation_bytes_per_layer(seq=S, micro_batch=B, hidden=H, heads=A, tp=t, **kw)  # noqa: E731
    if t == 1:
        assert act(recompute="none") == pytest.approx(sbh * (34 + 5 * A * S / H))
    else:
        assert act(recompute="none") == pytest.approx(sbh * (10 + 24 / t + 5 * A * S / (H * t)))
    assert act(recompute="none", sp=True) == pytest.approx(sbh * (34 + 5 * A * S / H) / t)
    assert act(recompute="selective", sp=True) == pytest.approx(34 * sbh / t)
    assert act(recompute="selective") == pytest.approx(sbh * (34 if t == 1 else 10 + 24 / t))
    assert act(recompute="full") == pytest.approx(2 * sbh)
    # flash attention keeps no s×s scores: "none" then equals "selective"
    assert act(recompute="none", flash_attention=True) == act(recompute="selective")


def test_zero_stages_partition_16_psi():
    psi, nd = 2_700_000_000, 8
    assert model_state_bytes(psi).total == 16 * psi
    assert model_state_bytes(psi, zero_stage=1, dp=nd).total == pytest.approx(4 * psi + 12 * psi / nd)
    assert model_state_bytes(psi, zero_stage=2, dp=nd).total == pytest.approx(2 * psi + 14 * psi / nd)
    assert model_state_bytes(psi, zero_stage=3, dp=nd).total == pytest.approx(16 * psi / nd)
    assert model_state_bytes(psi, accounting="megatron_fp32_grad").total == 18 * psi


def test_1f1b_first_stage_holds_p_micro_batches():
    assert [micro_batches_in_flight("1f1b", s, 4, 8) for s in range(4)] == [4, 3, 2, 1]
    assert micro_batches_in_flight("1f1b", 0, 4, 2) == 2
    assert micro_batches_in_flight("gpipe", 3, 4, 8) == 8


def gpt3b_dp8(zero_stage: int) -> dict:
    return {"name": "gpt-3b-t1p1d8", "model": {"preset": "gpt-3b"},
            "training": {"global_batch": 8, "micro_batch": 1, "precision": "fp16", "recompute": True},
            "parallelism": {"dp": 8, "zero_stage": zero_stage}, "compute": {"gpu": "v100-sxm2"},
            "memory": {"capacity_bytes": "16GB"}}


def test_gpt3b_on_16gb_gpus_needs_zero():
    # 16Ψ ≈ 43 GB of model states do not fit a 16 GB GPU ...
    with pytest.raises(InputError, match=r"stage 0 does not fit in GPU memory: needs 4\d\.\d GiB"):
        run_training("gpu_cluster:servers=1,gpus_per_server=8", gpt3b_dp8(0), backend="analytic")
    # ... partitioned over 8 data-parallel ranks by ZeRO-3 they do
    s = run_training("gpu_cluster:servers=1,gpus_per_server=8", gpt3b_dp8(3), backend="analytic")
    st = s["memory"]["stages"][0]
    assert st["fits"] and st["capacity_bytes"] == 16 * 10**9
    psi = st["params"]
    assert st["weights_bytes"] + st["gradients_bytes"] + st["optimizer_bytes"] == pytest.approx(16 * psi / 8)
    sbh = 2048 * 2560
    assert st["activation_bytes"] == pytest.approx(32 * 2 * sbh + sbh * (34 + 5 * 32 * 2048 / 2560))


def test_cli_names_gpu_need_and_capacity_and_allow_oom_runs(tmp_path):
    cmd = [sys.executable, "-m", "netsim", "run", "topologies/leaf_spine_64gpu.yaml", "workloads/bert-large-small.yaml",
           "--backend", "analytic", "--workload-set", "memory.capacity_bytes=16MB", "--out", str(tmp_path / "o"),
           "--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    # 16 MB = 15.3 MiB: the capacity is named in a unit it reaches (it used to read "of 0.0 GiB")
    assert "GPU s0.gpu0" in r.stderr and "of 15.3 MiB" in r.stderr and "--allow-oom" in r.stderr
    assert "0.0 GiB" not in r.stderr
    from netsim.cli import main
    assert main(cmd[3:] + ["--allow-oom"]) == 0
    import json
    mem = json.loads((tmp_path / "o" / "summary.json").read_text())["memory"]
    assert mem["stages"][0]["fits"] is False and mem["peak_bytes"] > 16e6


@pytest.mark.parametrize("section,needle", [({"recompute": "some"}, "memory.recompute"),
                                            ({"capacity_bytes": -1}, "memory.capacity_bytes"),
                                            ({"flash_attention": "yes"}, "memory.flash_attention"),
                                            ({"accounting": "x"}, "memory.accounting"), ({"bogus": 1}, "memory.bogus")])
def test_bad_memory_section_is_one_line_error(section, needle):
    wl = gpt3b_dp8(3) | {"memory": section}
    with pytest.raises(InputError, match=needle.replace(".", r"\.")):
        run_training("gpu_cluster:servers=1,gpus_per_server=8", wl, backend="analytic")


def test_fp32_accounting_follows_precision_and_a_mismatch_is_refused():
    from netsim.workloads.memory import memory_settings
    # fp32 training: 4 + 4 + 8 (Adam m, v) = 16 B/param, ZeRO-1 over 4: 4 + 4 + 2 = 10 B/param
    assert model_state_bytes(1000, zero_stage=1, dp=4, accounting="fp32_adam").total == 10_000
    assert memory_settings({}, False, "w.yaml", "fp32").accounting == "fp32_adam"
    assert memory_settings({}, False, "w.yaml", "bf16").accounting == "zero_mixed_precision"
    with pytest.raises(InputError, match="memory.accounting.*fp32_adam"):
        memory_settings({"memory": {"accounting": "zero_mixed_precision"}}, False, "w.yaml", "fp32")
    with pytest.raises(InputError, match="memory.accounting"):
        memory_settings({"memory": {"accounting": "fp32_adam"}}, False, "w.yaml", "fp16")


def test_zero_shards_expert_states_over_the_expert_dp_group():
    # 1000 params of which 600 expert; ZeRO-3 over dp 8, expert-DP group of 2: 16·400/8 + 16·600/2
    st = model_state_bytes(1000, zero_stage=3, dp=8, expert_params=600, expert_dp=2)
    assert st.total == pytest.approx(16 * 400 / 8 + 16 * 600 / 2)


def test_fp32_activations_scale_by_element_bytes():
    kw = dict(seq=S, micro_batch=B, hidden=H, heads=A, tp=2, recompute="none")
    assert activation_bytes_per_layer(element_bytes=4, **kw) == 2 * activation_bytes_per_layer(**kw)
