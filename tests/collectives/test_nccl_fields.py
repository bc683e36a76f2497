"""Workload ``collectives.<kind>`` fields of the NCCL model: protocol, sw_latency, algorithm auto (one-line errors)."""
import pytest

from netsim.collectives import SwLatency
from netsim.errors import WorkloadError
from netsim.workloads import load_workload

BASE = {"model": "gpt-1.5b", "training": {"global_batch": 16, "micro_batch": 2},
        "parallelism": {"dp": 2, "tp": 2, "pp": 4}}


def _spec(dp: dict):
    return load_workload(dict(BASE, collectives={"dp": dp})).collectives["dp"]


def test_defaults_follow_the_algorithm():
    assert (_spec({}).protocol, _spec({}).sw_latency) == ("simple", "off")
    auto = _spec({"algorithm": "auto"})
    assert (auto.algorithm, auto.protocol, auto.sw_latency) == ("auto", "auto", "nccl")
    assert _spec({"algorithm": "auto", "sw_latency": "off", "protocol": "ll"}).sw_latency == "off"


def test_explicit_latency_with_units():
    got = _spec({"sw_latency": {"launch_ns": "8.4us", "step_ns": 3400}}).sw_latency
    assert got == SwLatency(8400, 3400, 3400)


@pytest.mark.parametrize("dp, words", [
    ({"protocol": "LL"}, ["collectives.dp.protocol", "'LL'", "auto, ll, ll128, simple"]),
    ({"sw_latency": "fast"}, ["collectives.dp.sw_latency", "off, nccl or a mapping"]),
    ({"sw_latency": {"step": 1}}, ["collectives.dp.sw_latency.step", "unknown field"]),
    ({"sw_latency": {"step_ns": "3 parsecs"}}, ["collectives.dp.sw_latency.step_ns", "bad duration"]),
    ({"sw_latency": {"launch_ns": "2 days"}}, ["collectives.dp.sw_latency.launch_ns"]),
    ({"algorithm": "sharp"}, ["collectives.dp.algorithm", "auto, nvls, collnet"]),
])
def test_bad_fields_are_one_line_errors(dp, words):
    with pytest.raises(WorkloadError) as exc:
        _spec(dp)
    msg = str(exc.value)
    assert "\n" not in msg and all(w in msg for w in words), msg
