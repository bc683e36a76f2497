"""The flow backend's speed shortcuts give the same answers as the plain computation.

* :func:`is_flat` (prefix trees built once, only at links two flows enter
  from one previous link) against the original per-link grouping;
* prefix trees with single-child chains collapsed: offers equal the
  water-filling on the uncollapsed tree;
* a flow started alone on all its links is its own component without a
  search, and the components come in the same order as with the search;
* a whole run with these shortcuts (and lone flows started at their solo
  rate in ``send``, with no settle) gives the same records as without them;
* a departure from links that hold none of their other flows back, and
  an arrival that fits beside the flows on its links, skip the solve and
  give the same records as solving every change.
"""
import random

import pytest
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.backends.flow.fluid import FluidNetwork
from netsim.backends.flow import completions as completions_mod
from netsim.backends.flow import solver as solver_mod
from netsim.backends.flow.portfair import INF, PortProblem, is_flat, port_fair
from netsim.backends.flow.porttree import split_one_link
from netsim.records import ListSink
from netsim.topology import load_topology


def _is_flat_reference(paths) -> bool:
    """The original test: group each link's flows by previous link, level by level."""
    users = {}
    for f, p in enumerate(paths):
        for i, l in enumerate(p):
            users.setdefault(l, []).append((f, i))
    for u in users.values():
        if len(u) < 2:
            continue
        depth, members = 1, u
        while True:
            groups = {}
            for f, pos in members:
                key = paths[f][pos - depth] if pos - depth >= 0 else ("leaf", f)
                groups.setdefault(key, []).append((f, pos))
            if len(groups) == 1:
                members = next(iter(groups.values()))
                if len(members) < 2 or all(pos - depth < 0 for _, pos in members):
                    break
                depth += 1
                continue
            if any(len(g) > 1 for g in groups.values()):
                return False
            break
    return True


def _random_paths(rng, n_links=(5, 10), n_flows=(1, 14), hops=(1, 5)):
    nl = rng.randint(*n_links)
    return [rng.sample(range(nl), rng.randint(hops[0], min(hops[1], nl))) for _ in range(rng.randint(*n_flows))]


def test_is_flat_matches_reference():
    rng = random.Random(11)
    flat = 0
    for _ in range(5000):
        paths = _random_paths(rng)
        assert is_flat(paths) == _is_flat_reference(paths), paths
        flat += is_flat(paths)
    assert 0 < flat < 5000


def _uncollapsed_offer(paths, users, budget, dem, f):
    """Offer of link to ``f`` by water-filling level by level on the full prefix tree."""
    members, depth = users, 0
    while True:
        groups = {}
        for g, pos in members:
            key = ("f", g) if pos - depth - 1 < 0 else ("n", paths[g][pos - depth - 1])
            groups.setdefault(key, []).append((g, pos))
        keys = sorted(groups, key=repr)
        ds = []
        for k in keys:
            grp = groups[k]
            ds.append(INF if any(g == f for g, _ in grp) else sum(dem[g] for g, _ in grp))
        mine = next(i for i, k in enumerate(keys) if any(g == f for g, _ in groups[k]))
        budget = split_one_link(budget, ds)[mine]
        members = groups[keys[mine]]
        if len(members) == 1:
            return budget
        depth += 1


def test_collapsed_tree_offers_equal_fullsplit_one_linking():
    from netsim.backends.flow.porttree import tree_offer_list
    rng = random.Random(3)
    for _ in range(300):
        paths = _random_paths(rng, n_flows=(2, 20))
        prob = PortProblem(paths)
        for l, u in prob.users.items():
            if len(u) < 2:
                continue
            dem = {f: rng.choice([rng.random(), 0.25, 0.25, 2.0]) for f, _ in u}
            tree = prob.tree(l)
            o = dict(zip(tree.flows, tree_offer_list(tree, 1.0, [dem[f] for f in tree.flows])))
            for f, _ in u:
                if o[f] >= dem[f] * (1 - 1e-12):
                    assert o[f] == pytest.approx(_uncollapsed_offer(paths, u, 1.0, dem, f), rel=1e-12)


def test_port_fair_with_shared_problem_is_identical():
    rng = random.Random(8)
    for _ in range(100):
        paths = _random_paths(rng, n_flows=(2, 20))
        caps = [rng.choice([1.0, 2.0, 0.5]) for _ in range(10)]
        fcap = [rng.choice([INF, 0.3]) for _ in paths]
        prob = PortProblem(paths)
        assert port_fair(paths, caps, fcap) == port_fair(paths, caps, fcap, problem=prob)
        assert port_fair(paths, caps, fcap, damping=1.0, max_rounds=50) == \
            port_fair(paths, caps, fcap, damping=1.0, max_rounds=50, problem=prob)


class _Flow:
    # solo rate above any link: never fits beside other flows, so only the alone shortcut applies
    def __init__(self, fid, links):
        self.fid, self.links = fid, tuple(links)
        self.rp, self.solo, self.eta, self.ver, self.rate, self.held = None, float("inf"), 1.0, 1, 1.0, False


def test_fresh_flows_found_without_search_in_search_order():
    rng = random.Random(4)
    for _ in range(300):
        n_links = 40
        users = [dict() for _ in range(n_links)]
        flows = [_Flow(i, rng.sample(range(n_links), rng.randint(1, 4))) for i in range(rng.randint(1, 25))]
        for f in flows:
            for l in f.links:
                users[l][f.fid] = f
        fresh = [f for f in flows if rng.random() < 0.6]
        dirty = {rng.randrange(n_links) for _ in range(rng.randint(0, 5))}
        s = solver_mod.ComponentSolver([1.0] * n_links, users, port_max=64, hol=True)
        plain = s.components(dirty | {l for f in fresh for l in f.links})
        quick = s.components(set(dirty), fresh)
        assert [[f.fid for f in c] for c in quick] == [[f.fid for f in c] for c in plain]


def _no_eager_start(monkeypatch):
    """A flow alone on its links waits for the settle and its solve, like any other."""
    monkeypatch.setattr(FluidNetwork, "eager_start", False)


def _run(no_shortcut: bool, monkeypatch, cc: str = "none"):
    if no_shortcut:
        orig = solver_mod.ComponentSolver.components

        def components(self, dirty, fresh=()):
            return orig(self, dirty | {l for f in fresh for l in f.links})
        monkeypatch.setattr(solver_mod.ComponentSolver, "components", components)
        _no_eager_start(monkeypatch)
    def flows(rng, hosts):
        for _ in range(300):
            s, d = rng.sample(hosts, 2)
            yield s, d, rng.choice([4096, 65536, 1_000_000]), rng.choice([0, 0, 10**6, 10**7]) * 1000

    out = _play("leaf_spine:leaves=4,spines=2,hosts_per_leaf=4", "host", 3, 9, flows, cc=cc)
    monkeypatch.undo()
    return out


def _play(topology: str, kind: str, seed: int, rng_seed: int, flows, cc: str = "none"):
    """Run the flows ``flows(rng, nodes of kind)`` yields as ``(src, dst, size_bytes, start_ps)``
    on the flow backend; return (records, recomputations)."""
    g = load_topology(topology)
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, sinks=TraceSinks(fct=sink), seed=seed, cc=cc)
    nodes = sorted(n for n, d in g.nodes(data=True) if d["kind"] == kind)

    def starter(s, d, size, t):
        yield env.timeout(t)
        yield b.send(s, d, size)

    for s, d, size, t in flows(random.Random(rng_seed), nodes):
        env.process(starter(s, d, size, t))
    env.run()
    return sink.rows, b.net.recomputations


@pytest.mark.parametrize("cc", ["none", "cubic"])   # cubic: slow start charged at the start instant's rate
def test_run_identical_with_and_without_shortcut(monkeypatch, cc):
    rows_a, rec_a = _run(False, monkeypatch, cc)
    rows_b, rec_b = _run(True, monkeypatch, cc)
    assert rec_a <= rec_b
    assert rows_a == rows_b


def _run_cluster(rules: bool, monkeypatch, fired: dict | None = None):
    """Rounds of random permutations between GPUs of a leaf-spine cluster whose fabric is faster
    than its NICs: flows often share links without filling them, and PFC head-of-line
    blocking happens on the leaf uplinks."""
    if not rules:
        monkeypatch.setattr(completions_mod, "may_gain", lambda users, cap, gone: bool(users))
        monkeypatch.setattr(solver_mod.ComponentSolver, "fits_beside", lambda self, f: False)
        _no_eager_start(monkeypatch)
    elif fired is not None:
        may, fits = completions_mod.may_gain, solver_mod.ComponentSolver.fits_beside

        def may_gain(users, cap, gone):
            r = may(users, cap, gone)
            fired["departures"] += not r
            return r

        def fits_beside(self, f):
            r = fits(self, f)
            fired["arrivals"] += r
            return r
        monkeypatch.setattr(completions_mod, "may_gain", may_gain)
        monkeypatch.setattr(solver_mod.ComponentSolver, "fits_beside", fits_beside)
    def flows(rng, gpus):
        for rnd in range(12):      # rounds of permutations: flows meet mostly on the fabric
            dst = gpus[:]
            rng.shuffle(dst)
            for s, d in zip(gpus, dst):
                if s != d:
                    yield s, d, rng.choice([1_000_000, 4_000_000]), (rnd * 200 + rng.randrange(0, 100)) * 10**6

    out = _play("gpu_cluster:servers=8,gpus_per_server=4,servers_per_leaf=2", "gpu", 5, 11, flows)
    monkeypatch.undo()
    return out


def test_no_resolve_rules_are_exact(monkeypatch):
    """A departure from links that hold none of their other flows back, and an arrival that
    fits beside the flows already on its links, skip the solve, and a flow alone on its links
    starts at once: the FCTs are the same as with every change solved, and the rules do fire."""
    fired = {"departures": 0, "arrivals": 0}
    rows_a, rec_a = _run_cluster(True, monkeypatch, fired)
    rows_b, rec_b = _run_cluster(False, monkeypatch)
    assert fired["departures"] > 20 and fired["arrivals"] > 20
    assert rec_a < rec_b
    assert rows_a == rows_b
