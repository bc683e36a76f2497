"""overlap.comm_slowdown g charged at the op's end equals the network seeing the slower injection (issue 20).

The overlap model lets the backend run a collective at full speed and defers its end by the progress lost
beside compute (netsim.runtime.overlap). Here the slower injection is made real instead: the same
all-reduce, alone on its links, runs on links slowed to B/(1+g) for as long as compute would run beside it
(``set_link_rate``, so the network itself sees the lower rate) — and its extra time equals the end-charged
one, on analytic and flow, for a collective beside compute throughout and for one outlasting the compute.
"""
import pytest

from netsim.backends.base import create_backend
from netsim.collectives import run_collective
from netsim.runtime import run_training

from tests.runtime.conftest import layer_workload, star

P = 6_250_000              # parameters per layer: a 12.5 MB fp16 bucket, ~1 ms at 100 Gb/s
T_B = 2e-3                 # per-layer backward (s): bucket0 runs beside the backward of layers 1 and 0
RATE_BPS = 100e9
GPUS = ["s0.gpu0", "s1.gpu0"]


def _bucket0_s(g: float, params: int, backend: str) -> float:
    """bucket0's duration in a DP-only step with comm_slowdown g (f = 0), seconds."""
    wl = layer_workload(2, params=params, first_bucket_bytes=2 * params, overlap={"comm_slowdown": g})
    s = run_training(star(2, rate_bps=RATE_BPS), wl, backend=backend, keep_records=True)
    row = next(r for r in s["records"]["ops"] if r[0] == 0 and r[2] == "dp0.bucket0")
    return (row[7] - row[6]) * 1e-9


def _capped_s(size_bytes: int, g: float, slow_s: float | None, backend: str) -> float:
    """The same all-reduce run directly, its links at B/(1+g) for its first ``slow_s`` (None: throughout)."""
    graph = star(2, rate_bps=RATE_BPS)
    be = create_backend(backend, graph, seed=0)
    links = [(x, "sw") for x in GPUS]
    if g:
        for a, b in links:
            be.set_link_rate(a, b, RATE_BPS / (1 + g))

    def restore():
        yield be.env.timeout(round(slow_s * 1e12))
        for a, b in links:
            be.set_link_rate(a, b, RATE_BPS)
    if g and slow_s is not None:
        be.env.process(restore())
    p = run_collective(be, "allreduce", GPUS, size_bytes)
    be.env.run()
    return p.value.time_s


@pytest.mark.parametrize("backend", ["analytic", "flow"])
@pytest.mark.parametrize("g", [0.3, 1.0])
def test_beside_compute_throughout_equals_a_network_slowed_by_1_plus_g(backend, g):
    """bucket0 (P fp16 parameters, 2·P bytes, ~1 ms) ends inside the 4 ms backward: end-charged D·(1+g) equals the
    all-reduce on links at B/(1+g) throughout (bandwidth-bound: its latency terms are < 0.1 %)."""
    d0, d = _bucket0_s(0.0, P, backend), _bucket0_s(g, P, backend)
    c0, c = _capped_s(2 * P, 0.0, None, backend), _capped_s(2 * P, g, None, backend)
    assert d0 == pytest.approx(c0, rel=1e-3)                         # the same collective either way
    assert d == pytest.approx(d0 * (1 + g), rel=1e-6)                # the closed form of end-charging
    assert d - d0 == pytest.approx(c - c0, rel=2e-3)                 # = what the slower network gives


@pytest.mark.parametrize("backend", ["analytic", "flow"])
def test_outlasting_the_compute_equals_a_network_slowed_only_while_compute_runs(backend):
    """bucket0 of 8·P parameters (~8 ms) outlasts the 4 ms backward W: end-charging adds W·g/(1+g);
    so does running it on links at B/(1+g) for W and at B after."""
    g, w = 1.0, 2 * T_B
    d0, d = _bucket0_s(0.0, 8 * P, backend), _bucket0_s(g, 8 * P, backend)
    c0, c = _capped_s(16 * P, 0.0, None, backend), _capped_s(16 * P, g, w, backend)
    assert d0 > w and d - d0 == pytest.approx(w * g / (1 + g), rel=1e-6)
    assert d - d0 == pytest.approx(c - c0, rel=5e-3)
