"""Background traffic generator: exact offered load, the CDF's law, Poisson counts without edge bias."""
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from netsim.errors import InputError
from netsim.traffic import BackgroundSpec, generate_background, load_cdf, offered_load, parse_cdf_text
from netsim.traffic.generate import arrival_rate_per_s

HOSTS = tuple(f"h{i}" for i in range(8))
RATES = (100e9,) * 8


def spec(cdf="websearch", load=0.3, duration_ns=10_000_000, seed=0, hosts=HOSTS, rates=RATES):
    return BackgroundSpec(load_cdf(cdf), load=load, hosts=hosts, host_rate_bps=rates, duration_ns=duration_ns,
                          seed=seed)


def test_websearch_mean_is_the_tables_piecewise_uniform_mean():
    # by hand: sum of segment probability x segment midpoint, + 0.5 byte for ceil() of a continuous size
    pts = [(0, 0), (10e3, 15), (20e3, 20), (30e3, 30), (50e3, 40), (80e3, 53), (200e3, 60), (1e6, 70),
           (2e6, 80), (5e6, 90), (10e6, 97), (30e6, 100)]
    hand = sum((b - a) / 100 * (x0 + x1) / 2 for (x0, a), (x1, b) in zip(pts, pts[1:])) + 0.5
    assert hand == pytest.approx(1_711_250.5, abs=1e-6)
    assert load_cdf("websearch").mean_bytes == pytest.approx(hand, rel=1e-12)


@pytest.mark.parametrize("cdf", ["websearch", "fb_hadoop"])
def test_sampler_mean_matches_the_closed_form(cdf):
    c = load_cdf(cdf)
    x = c.sample(np.random.default_rng(7), 400_000).astype(float)
    se = x.std() / math.sqrt(len(x))
    assert abs(x.mean() - c.mean_bytes) < 3 * se


@pytest.mark.parametrize("load", [0.1, 0.3, 0.5, 0.95])
@pytest.mark.parametrize("cdf", ["websearch", "fb_hadoop"])
def test_expected_offered_load_equals_the_target(cdf, load):
    assert offered_load(spec(cdf, load)) == pytest.approx(load, rel=1e-12)
    mixed = spec(cdf, load, hosts=HOSTS[:3], rates=(400e9, 200e9, 100e9))
    lam = arrival_rate_per_s(mixed)
    assert lam * mixed.cdf.mean_bytes * 8 == pytest.approx(np.array([400e9, 200e9, 100e9]) * load, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measured_load_lies_within_three_sigma(seed):
    s = spec("fb_hadoop", 0.3, duration_ns=200_000_000, seed=seed)
    flows = generate_background(s)
    cap_bytes = sum(RATES) / 8 * s.duration_ns * 1e-9
    n_mean = float(arrival_rate_per_s(s).sum() * s.duration_ns * 1e-9)
    sigma = math.sqrt(n_mean * s.cdf.second_moment_bytes2) / cap_bytes  # compound Poisson: Var B = Λ E[S²]
    measured = flows.size_bytes.sum() / cap_bytes
    assert abs(measured - 0.3) < 3 * sigma and sigma < 0.01


def test_sizes_pass_a_ks_test_against_the_cdf():
    flows = generate_background(spec("websearch", 0.9, duration_ns=200_000_000))
    assert len(flows) > 10_000
    res = stats.kstest(flows.size_bytes, load_cdf("websearch").cdf_at)
    assert res.pvalue > 0.01


def test_short_windows_are_not_undershot():
    # 0.6 expected arrivals per host: HPCC's generator, which drops a host's last in-window arrival, would give ~0
    s = spec("websearch", 0.3, duration_ns=1)
    s = BackgroundSpec(s.cdf, 0.3, HOSTS, RATES, duration_ns=int(0.6 / arrival_rate_per_s(s)[0] * 1e9))
    counts = [len(generate_background(BackgroundSpec(s.cdf, 0.3, HOSTS, RATES, s.duration_ns, seed=k)))
              for k in range(300)]
    expected = float(arrival_rate_per_s(s).sum() * s.duration_ns * 1e-9)
    assert abs(np.mean(counts) - expected) < 3 * math.sqrt(expected / len(counts))
    assert np.var(counts) == pytest.approx(expected, rel=0.25)  # Poisson: variance = mean


def test_arrivals_are_uniform_over_the_window():
    s = spec("fb_hadoop", 0.5, duration_ns=5_000_000)
    t = generate_background(s).start_ns
    assert stats.kstest(t / s.duration_ns, "uniform").pvalue > 0.01


def test_seeded_and_each_host_has_its_own_stream():
    a, b = generate_background(spec(seed=3)), generate_background(spec(seed=3))
    assert all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("src", "dst", "size_bytes", "start_ns"))
    more = generate_background(spec(seed=3, hosts=HOSTS + ("h8",), rates=RATES + (100e9,)))
    h0 = lambda f: f.size_bytes[f.src == 0]  # noqa: E731 - host h0's flows
    assert np.array_equal(h0(a), h0(more))
    assert not np.array_equal(h0(a), h0(generate_background(spec(seed=4))))
    assert (a.src != a.dst).all() and np.all(np.diff(a.start_ns) >= 0)


@pytest.mark.parametrize("text,msg", [("0 0\n10 50\n", "at 100"), ("0 0\n10 60\n5 100\n", "non-decreasing"),
                                      ("0 0\n10 x\n", "not a number"), ("", "no CDF points")])
def test_bad_cdf_files_are_one_line_errors(text, msg):
    with pytest.raises(InputError, match=msg):
        parse_cdf_text(text, "my.cdf")


@pytest.mark.parametrize("load", [0.0, 1.5, float("nan"), float("inf")])
def test_load_must_be_a_fraction(load):
    with pytest.raises(InputError, match="load"):
        spec(load=load)


def test_cli_writes_a_flow_file_netsim_flows_reads(tmp_path):
    from netsim.cli import main
    from netsim.flowfile import load_flows
    from netsim.topology import load_topology
    out = tmp_path / "bg.csv"
    assert main(["traffic", "fb_hadoop", "--load", "0.3", "--duration", "200us", "--topology",
                 "topologies/leaf_spine_hosts.yaml", "--out", str(out)]) == 0
    flows = load_flows(str(out), load_topology("topologies/leaf_spine_hosts.yaml"))
    assert flows and all(f.tag == "background" for f in flows)
    assert not (tmp_path / "bg.csv.partial").exists()


@pytest.mark.parametrize("argv,needle", [
    (["--load", "1.5", "--duration", "1ms", "--rate", "100Gbps", "--hosts", "a,b"], "load"),
    (["--load", "0.3", "--duration", "1ms", "--hosts", "a,b"], "--rate"),
    (["--load", "0.3", "--duration", "1ms", "--topology", "topologies/leaf_spine_hosts.yaml", "--hosts", "zz,h1"],
     "--hosts"),
])
def test_cli_bad_arguments_exit_2_with_one_line(argv, needle, tmp_path):
    r = subprocess.run([sys.executable, "-m", "netsim", "traffic", "websearch", *argv, "--out", str(tmp_path / "x.csv")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
