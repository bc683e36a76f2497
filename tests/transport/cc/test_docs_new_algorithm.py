"""The worked example of docs/congestion-control.md ("Writing a new algorithm") runs as documented."""
import re
from pathlib import Path

import pytest

from netsim.transport.cc import REGISTRY, resolve_cc_params

DOC = Path(__file__).resolve().parents[3] / "docs" / "congestion-control.md"


@pytest.fixture
def reno_code():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Writing a new algorithm"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    yield code
    REGISTRY.pop("reno", None)


def test_worked_example_registers_and_behaves(reno_code):
    ns: dict = {}
    exec(compile(reno_code, str(DOC), "exec"), ns)
    cls = REGISTRY["reno"]
    assert cls is ns["Reno"] and cls.transport == "tcp"
    params = resolve_cc_params("reno", ["min_rto_ns=5ms"])["reno"]
    assert params["min_rto_ns"] == 5_000_000
    cc = cls(params, mss_bytes=1000, line_rate_bps=10e9, base_rtt_ns=10_000)
    assert cc.cwnd_bytes == 10_000
    cc.on_ack(0, 1000, 10_000, False, 9000)          # slow start: + min(acked, 2 MSS)
    assert cc.cwnd_bytes == 11_000
    cc.on_loss(0, 11_000)                             # halve the flight, then avoidance
    assert cc.cwnd_bytes == cc.ssthresh == 5_500
    cc.on_ack(0, 1000, 10_000, False, 4500)
    assert cc.cwnd_bytes == pytest.approx(5_500 + 1000 * 1000 / 5_500)


def test_worked_example_runs_on_the_packet_backend(reno_code):
    exec(compile(reno_code, str(DOC), "exec"), {})
    from netsim.bench.cc import incast_graph, simulate
    res = simulate(incast_graph(1, rate_bps=10e9), [("s0", "r0", 200_000, 0)], cc="reno",
                   params={"pfc": False}, watch=("sw0", "r0"))
    assert len(res.records) == 1 and res.records[0].fct_ns > 0
