"""Max-min solver against hand-computed allocations and the defining property."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.backends.flow.maxmin import maxmin

INF = math.inf


@pytest.mark.parametrize("paths,capacity,cap,expected", [
    # 3 flows on 2 links: the long flow and each short flow split every link
    ([[0, 1], [0], [1]], [1.0, 1.0], None, [0.5, 0.5, 0.5]),
    # the long flow is held to 0.5 by link 0; the short flow on link 1 takes the rest
    ([[0, 1], [0], [1]], [1.0, 2.0], None, [0.5, 0.5, 1.5]),
    # two levels: link 1 (4/2 = 2) saturates first, link 0 then splits 10 - 2 = 8 in two
    ([[0], [0], [0, 1], [1]], [10.0, 4.0], None, [4.0, 4.0, 2.0, 2.0]),
    # parking lot: one flow across 3 links, one local flow per link
    ([[0, 1, 2], [0], [1], [2]], [1.0, 1.0, 1.0], None, [0.5, 0.5, 0.5, 0.5]),
    # a per-flow cap below the fair share frees capacity for the others
    ([[0], [0], [0]], [10.0], [1.0, INF, INF], [1.0, 4.5, 4.5]),
    # a cap above the fair share does not bind
    ([[0], [0]], [10.0], [7.0, INF], [5.0, 5.0]),
    # two levels across 4 links: link 3 (2/3 over 2 flows) first at 1/3, then links 0
    # and 2 at 1/2; link 1 is left with 1/6 spare (not a bottleneck of anyone)
    ([[0, 1, 2], [0], [1, 3], [2], [3]], [1.0, 1.0, 1.0, 2.0 / 3.0],
     None, [1 / 2, 1 / 2, 1 / 3, 1 / 2, 1 / 3]),
])
def test_hand_computed(paths, capacity, cap, expected):
    got = maxmin(paths, capacity, cap)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_backend_component_rates_by_hand():
    """Through the backend: four flows on a 2-leaf fabric (host links of rate C), max-min.

    h0->h2, h1->h2 and h4->h2 (from the other leaf) share the last hop into h2: C/3 each;
    h1->h3 shares h1's access link with h1->h2 and takes the rest of it, 2C/3."""
    import simpy
    from netsim.backends.base import TraceSinks, create_backend
    from netsim.records import ListSink
    from netsim.topology import load_topology
    from netsim.units import PS_PER_S
    g = load_topology("leaf_spine:leaves=2,spines=1,hosts_per_leaf=4")
    env = simpy.Environment()
    b = create_backend("flow", g, env=env, params={"flow_fairness": "maxmin"}, sinks=TraceSinks(fct=ListSink()))
    for s, d in (("h0", "h2"), ("h1", "h2"), ("h1", "h3"), ("h4", "h2")):
        b.send(s, d, 10**8)
    env.run(until=1)
    flows = sorted({f.fid: f for u in b.net.users for f in u.values()}.items())
    gbps = [f.rate * 8 * PS_PER_S / 1e9 for _, f in flows]
    line = float(g.edges["h2", next(iter(g["h2"]))]["rate_bps"]) / 1e9    # h2's access link
    assert gbps == pytest.approx([line / 3, line / 3, 2 * line / 3, line / 3], rel=1e-12)


@st.composite
def problems(draw):
    n_links = draw(st.integers(1, 12))
    n_flows = draw(st.integers(1, 30))
    caps = draw(st.lists(st.floats(0.1, 100.0), min_size=n_links, max_size=n_links))
    paths = [draw(st.lists(st.integers(0, n_links - 1), min_size=1, max_size=min(5, n_links), unique=True))
             for _ in range(n_flows)]
    fcap = [draw(st.one_of(st.just(INF), st.floats(0.05, 50.0))) for _ in range(n_flows)]
    return paths, caps, fcap


@settings(max_examples=150, deadline=None)
@given(problems())
def test_maxmin_properties(problem):
    paths, capacity, fcap = problem
    rates = maxmin(paths, capacity, fcap)
    tol = 1e-9
    load = np.zeros(len(capacity))
    for p, r in zip(paths, rates):
        for l in p:
            load[l] += r
    # feasibility: no link over capacity, no flow over its cap
    assert np.all(load <= np.asarray(capacity) * (1 + tol))
    assert np.all(rates <= np.asarray(fcap) * (1 + tol))
    assert np.all(rates > 0)
    # every flow is bottlenecked: at its cap, or on a saturated link where nobody gets more
    for f, (p, r) in enumerate(zip(paths, rates)):
        if r >= fcap[f] * (1 - tol):
            continue
        ok = False
        for l in p:
            if load[l] >= capacity[l] * (1 - tol):
                biggest = max(rates[g] for g, q in enumerate(paths) if l in q)
                if r >= biggest * (1 - tol):
                    ok = True
                    break
        assert ok, f"flow {f} is not bottlenecked"


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 1e3), st.lists(st.one_of(st.floats(0.0, 1e3), st.just(INF)), min_size=1, max_size=9))
def test_split_one_link_is_maxmin_on_one_link(budget, demands):
    """The port-fair trees' per-node split is the one-link case of the one max-min solver:
    ``budget`` on one link, flows capped at their demands."""
    from netsim.backends.flow.porttree import split_one_link
    got = split_one_link(budget, demands)
    want = maxmin([[0]] * len(demands), [budget], demands).tolist()
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert sum(got) <= budget * (1 + 1e-12) + 1e-12          # never more than the link has
