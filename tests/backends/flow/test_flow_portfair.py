"""Ingress-port fairness (PFC/credit-backpressure sharing) against hand cases and max-min."""
import math

import numpy as np
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.backends.base import TraceSinks, create_backend
from netsim.backends.flow.maxmin import maxmin
from netsim.backends.flow.portfair import hol_capacities, is_flat, port_fair
from netsim.records import ListSink
from netsim.topology import Router, load_topology

INF = math.inf


def test_two_ingress_ports_split_evenly():
    # links 0 and 1 feed link 2: the lone flow on port 0 gets half, the two on port 1 a quarter each
    r, rounds = port_fair([[0, 2], [1, 2], [1, 2]], [10.0, 10.0, 10.0], [INF] * 3)
    assert rounds > 0
    assert np.allclose(r, [5.0, 2.5, 2.5], rtol=1e-8)


def test_three_level_tree():
    # 4 senders: a, b on link 0 -> link 2, c on link 1 -> link 2; d enters link 3 directly.
    # link 3 (bottleneck, cap 12) splits between port "link 2" and d: 6 / 6;
    # link 2's share 6 splits between ports link 0 (a, b) and link 1 (c): 3 / 3.
    paths = [[4, 0, 2, 3], [5, 0, 2, 3], [6, 1, 2, 3], [7, 3]]
    caps = {0: 100.0, 1: 100.0, 2: 100.0, 3: 12.0, 4: 100.0, 5: 100.0, 6: 100.0, 7: 100.0}
    r, _ = port_fair(paths, caps, [INF] * 4)
    assert np.allclose(r, [1.5, 1.5, 3.0, 6.0], rtol=1e-8)


def test_demand_limited_port_gives_back():
    # port 0's only flow is capped at 1: port 1's two flows share the remaining 9
    r, _ = port_fair([[0, 2], [1, 2], [1, 2]], [10.0, 10.0, 10.0], [1.0, INF, INF])
    assert np.allclose(r, [1.0, 4.5, 4.5], rtol=1e-8)


@st.composite
def problems(draw):
    n_links = draw(st.integers(2, 8))
    n_flows = draw(st.integers(2, 10))
    caps = draw(st.lists(st.sampled_from([1.0, 2.0, 4.0, 2.5]), min_size=n_links, max_size=n_links))
    paths = [draw(st.lists(st.integers(0, n_links - 1), min_size=1, max_size=4, unique=True))
             for _ in range(n_flows)]
    fcap = [draw(st.one_of(st.just(INF), st.floats(0.1, 3.0))) for _ in range(n_flows)]
    return paths, caps, fcap


@settings(max_examples=120, deadline=None)
@given(problems())
def test_feasible_and_flat_equals_maxmin(problem):
    paths, caps, fcap = problem
    rates, rounds = port_fair(paths, caps, fcap)
    load = np.zeros(len(caps))
    for p, r in zip(paths, rates):
        for l in p:
            load[l] += r
    assert np.all(load <= np.asarray(caps) * (1 + 1e-9))
    assert all(r <= c * (1 + 1e-9) for r, c in zip(rates, fcap))
    if is_flat(paths) and rounds > 0:
        assert np.allclose(rates, maxmin(paths, caps, fcap), rtol=1e-5)


def _incast_fcts(fairness):
    g = load_topology("leaf_spine:leaves=3,spines=2,hosts_per_leaf=4")
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, params={"flow_fairness": fairness}, sinks=TraceSinks(fct=sink))
    evs = [b.send(f"h{i}", "h0", 1_000_000) for i in range(4, 12)]
    env.run()
    r = Router(g)
    ports = [r.path(e.value.src, "h0", e.value.path_key)[1:3] for e in evs]  # (leaf, spine) of its ECMP key
    return [e.value.fct_ns for e in evs], ports


def test_backend_port_fairness_vs_maxmin():
    fct_mm, _ = _incast_fcts("maxmin")
    assert max(fct_mm) - min(fct_mm) <= 2          # per-flow fairness: all finish together
    fct_pf, ports = _incast_fcts("port")
    # port fairness: a flow alone on its (leaf -> spine) port gets as much at the spine as the
    # whole group on the other leaf's port, so it finishes before every flow that shares its port
    alone = [t for t, p in zip(fct_pf, ports) if ports.count(p) == 1]
    crowded = [t for t, p in zip(fct_pf, ports) if ports.count(p) > 1]
    assert alone and crowded
    assert max(alone) < min(crowded)
    assert max(fct_pf) == pytest.approx(max(fct_mm), rel=1e-6)  # work conserving: same last finish


def test_head_of_line_blocking_slows_a_victim():
    # A: a->s1->s2->c, held at s2->c (3 ingress ports share it: 10/3 each);
    # B: b->s1->s2->x shares only the ingress s1->s2 with A. PFC pauses s1->s2 for A, so B
    # gets what the paused link lets through: A's share ratio (10/3)/5 of its own share 5.
    paths = [[0, 2, 3], [1, 2, 4], [5, 3], [6, 3]]
    caps = {l: 10.0 for l in range(7)}
    state = []
    rates, _ = port_fair(paths, caps, [INF] * 4, state=state)
    assert np.allclose(rates, [10 / 3, 20 / 3, 10 / 3, 10 / 3], rtol=1e-6)  # no HoL: B takes the rest
    paused = hol_capacities(paths, caps, rates, state)
    assert set(paused) == {2}
    assert paused[2] == pytest.approx(10 * (10 / 3) / 5, rel=1e-6)
    caps.update(paused)
    rates, _ = port_fair(paths, caps, [INF] * 4)
    assert np.allclose(rates, [10 / 3, 10 / 3, 10 / 3, 10 / 3], rtol=1e-6)


def test_no_victim_no_pause():
    # two flows held at the same congested output through one ingress: nobody else to block
    paths = [[0, 2, 3], [1, 2, 3], [5, 3]]
    caps = {l: 10.0 for l in range(6)}
    state = []
    rates, _ = port_fair(paths, caps, [INF] * 3, state=state)
    assert hol_capacities(paths, caps, rates, state) == {}


def _brute_split(tree, budget, dem, node=0, out=None):
    """Reference: the hierarchical split, node by node, with plain water-filling."""
    from netsim.backends.flow.portfair import split_one_link
    out = {} if out is None else out

    def demand(kind, x):
        return dem[x] if kind == "f" else sum(demand(*k) for k in tree.kids[x])
    kids = tree.kids[node]
    for (kind, x), a in zip(kids, split_one_link(budget, [demand(*k) for k in kids])):
        if kind == "f":
            out[x] = a
        else:
            _brute_split(tree, a, dem, x, out)
    return out


def _brute_offered(tree, budget, dem, f):
    """Reference: re-run the water-filling at every node with f's child asking for everything."""
    from netsim.backends.flow.portfair import split_one_link

    def demand(kind, x):
        return dem[x] if kind == "f" else sum(demand(*k) for k in tree.kids[x])
    for node, pos in tree.route[f]:
        ds = [demand(*k) for k in tree.kids[node]]
        ds[pos] = INF
        budget = split_one_link(budget, ds)[pos]
    return budget


def test_tree_offers_equalsplit_one_linking():
    """A flow's offer is its split of the budget, or, when its demand holds it, what plain
    water-filling gives it at every node of its route when it asks for everything."""
    import random
    from netsim.backends.flow import portfair as pf
    from netsim.backends.flow.porttree import tree_allocation, tree_offer_list
    rng = random.Random(5)
    held = 0
    for _ in range(200):
        paths = [rng.sample(range(8), rng.randint(1, 4)) for _ in range(rng.randint(2, 30))]
        users = {}
        for f, p in enumerate(paths):
            for i, l in enumerate(p):
                users.setdefault(l, []).append((f, i))
        for l, u in users.items():
            if len(u) < 2:
                continue
            tree = pf._Tree(u, paths)
            dem = {f: rng.choice([INF, rng.random(), 0.25, 0.25]) for f in tree.flows}
            ds = [dem[f] for f in tree.flows]
            split = _brute_split(tree, 1.0, dem)
            assert tree_allocation(tree, 1.0, ds) == pytest.approx([split[f] for f in tree.flows], rel=1e-12)
            offers = tree_offer_list(tree, 1.0, ds)
            for f, o in zip(tree.flows, offers):
                if split[f] >= dem[f] * (1 - 1e-12):
                    held += 1
                    assert o == pytest.approx(_brute_offered(tree, 1.0, dem, f), rel=1e-12, abs=1e-15)
                else:
                    assert o == pytest.approx(split[f], rel=1e-12, abs=1e-15)
    assert held > 100


def test_undamped_first_same_fixed_point():
    """port_fair_auto (undamped, damped fallback) reaches port_fair's fixed point."""
    import random
    from netsim.backends.flow.portfair import port_fair_auto
    rng = random.Random(2)
    fallbacks = 0
    for _ in range(120):
        nl = rng.randint(4, 14)
        paths = [rng.sample(range(nl), rng.randint(1, 4)) for _ in range(rng.randint(2, 40))]
        capv = [rng.choice([1.0, 2.0, 0.5]) for _ in range(nl)]
        fcap = [rng.choice([INF, INF, 0.3, 0.1]) for _ in paths]
        a, ra = port_fair(paths, capv, fcap)
        b, rb = port_fair_auto(paths, capv, fcap)
        fallbacks += port_fair(paths, capv, fcap, damping=1.0, max_rounds=50)[1] < 0
        if ra < 0 or rb < 0:
            continue
        assert np.allclose(a, b, rtol=1e-5, atol=1e-12)
    assert fallbacks > 0     # the fallback path is exercised
