"""Interleaved 1F1B, ZB-H1 and user-written pipeline schedules.

With point-to-point time made negligible (one switch, 1e18 bit/s links, no
delay, tiny activations), every stage's bubble equals the schedule's closed
form, computed here from the per-micro-batch compute times the builder gives
each stage: 1F1B (p−1)·(T_F+T_B), interleaved (p−1)·(T_F+T_B)/v, ZB-H1
(p−1)·(T_F+T_B−T_W), where for ZB-H1 the backward T_B + T_W splits into the
input-gradient T_B and the weight-gradient T_W.  The iteration then takes
m·(T_F + whole backward) + bubble.
"""
import networkx as nx
import pytest

from netsim.errors import WorkloadError
from netsim.runtime import run_training
from netsim.workloads import load_workload
from netsim.workloads.chunks import split_ps
from netsim.workloads.memory import micro_batches_in_flight
from netsim.workloads.schedule_check import check_orders, parse_actions, ScheduleError
from netsim.workloads.schedules import activations_in_flight, schedule, stage_orders

PS = 1e-12


def star(n_gpus: int, rate_bps: float = 1e18) -> nx.Graph:
    g = nx.Graph(name=f"star{n_gpus}")
    g.add_node("sw", kind="switch")
    for i in range(n_gpus):
        g.add_node(f"s{i}.gpu0", kind="gpu", server=f"s{i}", index=0)
        g.add_edge(f"s{i}.gpu0", "sw", rate_bps=rate_bps, delay_ns=0.0, kind="ethernet")
    return g


def pipeline(p, m, schedule, v=1, dp=1, **par):
    """p·v equal layers, T_F = 1 ms and T_B = 2 ms per device and micro-batch (layer_times_ms)."""
    n = p * v
    return {"name": "pipe", "model": {"layer_list": [{"params": 1000, "fwd_flops": 1e9, "out_elems": 10}] * n},
            "training": {"global_batch": m * dp, "micro_batch": 1},
            "parallelism": {"pp": p, "dp": dp, "schedule": schedule, "virtual_stages": v, **par},
            "compute": {"layer_times_ms": {"default": [1.0 / v, 2.0 / v]}, "optimizer": "none"}}


def stage_times_s(builder, s):
    """(T_F, T_B, T_W) of one micro-batch on device s, from the builder's per-block times."""
    f = b = w = 0
    for li, layer in enumerate(builder.stage_layers[s]):
        for bi, blk in enumerate(layer.blocks):
            tf, tb, _ = builder.times[s][li][bi]
            f, b, w = f + tf, b + tb, w + split_ps(tb, bool(blk.tensors))[1]
    return f * PS, b * PS, w * PS


def closed_form(schedule, p, v, tf, tb, tw):
    if schedule == "zb_h1":
        return (p - 1) * (tf + (tb - tw) - tw)          # tb: whole backward = input gradient + tw
    return (p - 1) * (tf + tb) / v


CASES = [("1f1b", 4, 8, 1), ("interleaved_1f1b", 4, 8, 2), ("interleaved_1f1b", 2, 4, 3),
         ("interleaved_1f1b", 4, 4, 2), ("zb_h1", 4, 8, 1), ("zb_h1", 3, 6, 1)]


@pytest.mark.parametrize("times_ms", [(1.0, 2.0), (1.0, 3.0)], ids=["b=2f", "b=3f"])
@pytest.mark.parametrize("schedule,p,m,v", CASES)
def test_bubble_per_stage_equals_closed_form(schedule, p, m, v, times_ms):
    doc = pipeline(p, m, schedule, v)
    doc["compute"]["layer_times_ms"]["default"] = [t / v for t in times_ms]
    s = run_training(star(p), doc, backend="analytic", keep_records=True)
    builder = s["_builder"]
    bubbles = s["pipeline_bubble_s_per_stage"]
    assert len(bubbles) == p
    for st in range(p):
        tf, tb, tw = stage_times_s(builder, st)
        assert tw > 0 and tf > 0
        want = closed_form(schedule, p, v, tf, tb, tw)
        if schedule == "zb_h1" and times_ms[1] != 2 * times_ms[0]:
            # the closed form assumes T_F = T_B = T_W (Qi et al.); otherwise it is only a lower bound
            assert want * 0.99 < bubbles[st] < closed_form("1f1b", p, 1, tf, tb, tw), st
            continue
        assert bubbles[st] == pytest.approx(want, rel=0.01), st
        assert s["iteration_time_s"] == pytest.approx(m * (tf + tb) + want, rel=0.01)
    assert sum(s["breakdown_s"].values()) == pytest.approx(s["iteration_time_s"], rel=1e-9)


def test_interleaving_and_zero_bubble_beat_1f1b():
    t = {name: run_training(star(4), pipeline(4, 8, name, v), backend="analytic")["iteration_time_s"]
         for name, v in (("1f1b", 1), ("interleaved_1f1b", 2), ("zb_h1", 1))}
    assert t["interleaved_1f1b"] < t["1f1b"] and t["zb_h1"] < t["1f1b"]


def test_interleaved_sends_wrap_from_last_device_to_first():
    s = run_training(star(2), pipeline(2, 2, "interleaved_1f1b", 2), backend="analytic", keep_records=True)
    names = {op.name: op for op in s["_executor"].iteration_ops[0] if op.kind == "pp"}
    wrap = [op for n, op in names.items() if n.endswith("F0.s1-s2")]
    assert len(wrap) == 1 and wrap[0].ranks == (1, 0)          # virtual stage 1 (device 1) -> 2 (device 0)
    assert any(n.endswith("B0.s2-s1") for n in names)


def test_zb_h1_dp_buckets_wait_for_w_passes():
    s = run_training(star(4), pipeline(2, 4, "zb_h1", dp=2), backend="analytic", keep_records=True)
    buckets = [op for op in s["_executor"].iteration_ops[0] if op.kind == "dp"]
    assert buckets
    for op in buckets:
        assert any(d.name.startswith("W3.") for d in op.deps), op.name


def test_in_flight_matches_memory_model():
    p, m, v = 4, 8, 2
    inter = stage_orders("interleaved_1f1b", p, m, v)
    assert activations_in_flight(inter[0], v) == pytest.approx(p + (p - 1) / v)     # Narayanan et al. SC'21
    zb = stage_orders("zb_h1", p, m)
    assert [activations_in_flight(o) for o in zb] == [activations_in_flight(o) for o in
                                                      stage_orders("1f1b", p, m)] == [4, 3, 2, 1]
    for s in range(p):
        assert micro_batches_in_flight("interleaved_1f1b", s, p, m, virtual_stages=v) == \
            pytest.approx(activations_in_flight(inter[s], v))
        assert micro_batches_in_flight("zb_h1", s, p, m) == activations_in_flight(zb[s])


def test_builtin_orders_pass_the_custom_checks():
    for name, p, m, v in CASES:
        check_orders(stage_orders(name, p, m, v), p, m, v)


def test_custom_schedule_written_as_1f1b_gives_the_same_ops():
    text = [" ".join(f"{k}{j}" for k, j in schedule("1f1b", s, 3, 5)) for s in range(3)]
    a = run_training(star(6), pipeline(3, 5, "1f1b", dp=2), backend="analytic", keep_records=True)
    b = run_training(star(6), pipeline(3, 5, "custom", dp=2, schedule_actions=text), backend="analytic",
                     keep_records=True)
    assert a["records"]["ops"] == b["records"]["ops"]


def test_custom_schedule_equal_to_zb_h1_gives_the_same_time():
    orders = stage_orders("zb_h1", 3, 6)
    text = [" ".join(a.label() for a in o) for o in orders]
    a = run_training(star(3), pipeline(3, 6, "zb_h1"), backend="analytic")
    b = run_training(star(3), pipeline(3, 6, "custom", schedule_actions=text), backend="analytic")
    assert a["iteration_time_s"] == b["iteration_time_s"]
    assert a["pipeline_bubble_s_per_stage"] == b["pipeline_bubble_s_per_stage"]


BAD = [
    ({"schedule": "interleaved_1f1b", "virtual_stages": 2}, 6, "divisible by pp = 4"),
    ({"schedule": "1f1b", "virtual_stages": 2}, 8, "parallelism.virtual_stages"),
    ({"schedule": "interleaved_1f1b", "virtual_stages": 1}, 8, "at least 2 model chunks"),
    ({"schedule": "custom"}, 8, "needs the per-stage action lists"),
    ({"schedule": "1f1b", "schedule_actions": ["F0 B0"] * 4}, 8, "only read with schedule: custom"),
    ({"schedule": "custom", "schedule_actions": ["F0 B0"] * 3}, 1, "list of 4 per-stage"),
    ({"schedule": "custom", "schedule_actions": ["F0 X0", "F0 B0", "F0 B0", "F0 B0"]}, 1, "bad action 'X0'"),
    ({"schedule": "custom", "schedule_actions": ["F0", "F0 B0", "F0 B0", "F0 B0"]}, 1, "B0 is missing"),
    ({"schedule": "custom", "schedule_actions": ["B0 F0", "F0 B0", "F0 B0", "F0 B0"]}, 1, "B0 comes before F0"),
    ({"schedule": "custom", "schedule_actions": ["F0 B0 W0", "F0 B0", "F0 B0", "F0 B0"]}, 1,
     "stage 1: W0 is missing"),
    ({"schedule": "custom", "schedule_actions": ["F0 B0 F1 B1", "F1 B1 F0 B0", "F0 B0 F1 B1", "F0 B0 F1 B1"]}, 2,
     "deadlock: stage 0 waits at B0"),
    ({"schedule": "custom", "schedule_actions": ["F5 B5"] * 4}, 1, "out of range"),
]


@pytest.mark.parametrize("par,m,msg", BAD, ids=[b[2][:24] for b in BAD])
def test_invalid_schedule_fields_are_one_line_errors(par, m, msg):
    doc = pipeline(4, m, "1f1b")
    doc["parallelism"].update(par)
    with pytest.raises(WorkloadError, match=msg) as err:
        load_workload(doc)
    assert "\n" not in str(err.value)


def test_parse_actions_accepts_lists_and_chunk_suffixes():
    orders = parse_actions([["F0", "F0c1", "B0c1", "B0"], "F0 F0c1 B0c1 B0"], 2, 1, 2)
    assert [a.label() for a in orders[0]] == ["F0", "F0c1", "B0c1", "B0"]
    with pytest.raises(ScheduleError, match="deadlock"):
        check_orders(parse_actions(["F0 F0c1 B0c1 B0", "F0c1 F0 B0c1 B0"], 2, 1, 2), 2, 1, 2)


@pytest.mark.parametrize("backend", ["packet", "flow"])
@pytest.mark.parametrize("schedule,v", [("interleaved_1f1b", 2), ("zb_h1", 1)])
def test_packet_and_flow_bubbles_within_5_percent_of_analytic(backend, schedule, v):
    g = star(4, rate_bps=100e9)
    doc = pipeline(4, 4, schedule, v)
    for layer in doc["model"]["layer_list"]:
        layer["out_elems"] = 256 * 1024        # 512 KiB activations: ≈ 42 µs per send at 100 Gbit/s
    ref = run_training(g, doc, backend="analytic")
    got = run_training(g, doc, backend=backend)
    assert got["iteration_time_s"] == pytest.approx(ref["iteration_time_s"], rel=0.05)
    for a, b in zip(got["pipeline_bubble_s_per_stage"], ref["pipeline_bubble_s_per_stage"]):
        assert a == pytest.approx(b, rel=0.05)
