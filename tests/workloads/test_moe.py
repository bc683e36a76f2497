"""MoE routing model: byte conservation, capacity drops, the skew decay law, determinism, bad input."""
import numpy as np
import pytest

from netsim.errors import WorkloadError
from netsim.workloads.moe import (MoEConfig, RoutingModel, layer_alltoalls, lognormal_weights, nonuniformity,
                                  nonuniformity_from_flows, parse_moe, received_bytes, transpose)


def test_dropless_bytes_equal_tokens_topk_h_2():
    # workloads.md: each all-to-all moves tokens·top_k·h·2 bytes in total across the group
    cfg = MoEConfig(num_experts=16, top_k=2, ep=8)
    m = RoutingModel(cfg, seed=3).dispatch_matrix(5, 1, 0, tokens_per_rank=512, hidden=64, bytes_per_value=2)
    assert len(m) == 8 and all(len(r) == 8 for r in m)
    assert sum(map(sum, m)) == 8 * 512 * 2 * 64 * 2
    # each row (one source rank) carries exactly its own tokens·top_k·h·2
    assert all(sum(r) == 512 * 2 * 64 * 2 for r in m)


def test_capacity_drops_only_overflow():
    cfg = MoEConfig(num_experts=8, top_k=1, ep=8, capacity_factor=1.0)
    r = RoutingModel(cfg, seed=0)
    counts = r.token_counts(0, 1, 0, tokens_per_rank=800)
    cap = 100  # ceil(1.0 * 800 * 1 / 8)
    assert counts.max() <= cap
    free = RoutingModel(MoEConfig(num_experts=8, top_k=1, ep=8), seed=0).token_counts(0, 1, 0, 800)
    assert np.array_equal(counts, np.minimum(free, cap))
    assert counts.sum() < 8 * 800  # skew 0.4 overflows some expert


def test_lognormal_weights_hit_target_cv():
    z = np.random.default_rng(1).standard_normal(32)
    for cv in (0.05, 0.4, 1.0):
        w = lognormal_weights(z, cv)
        assert w.min() > 0 and abs(w.sum() - 1) < 1e-12
        assert abs(w.std() / w.mean() - cv) < 1e-6


def test_decay_law_and_measured_nonuniformity():
    cfg = MoEConfig(num_experts=8, top_k=2, ep=8)
    r = RoutingModel(cfg, seed=0)
    assert r.target_cv(0) == pytest.approx(0.4)
    assert r.target_cv(100) < 0.1
    assert all(r.target_cv(i) > r.target_cv(i + 1) for i in range(150))

    def measured(it):
        return np.mean([nonuniformity(r.dispatch_matrix(it, l, 0, 2048, 32)) for l in range(1, 12, 2)])
    assert 0.3 < measured(0) < 0.5
    assert measured(100) < 0.1


def test_determinism_and_seed_dependence():
    cfg = MoEConfig(num_experts=8, top_k=2, ep=4)
    a = RoutingModel(cfg, seed=7).dispatch_matrix(3, 5, 1, 256, 16)
    b = RoutingModel(cfg, seed=7).dispatch_matrix(3, 5, 1, 256, 16)
    c = RoutingModel(cfg, seed=8).dispatch_matrix(3, 5, 1, 256, 16)
    assert a == b and a != c


def test_layer_alltoalls_directions():
    m = [[0, 3], [5, 0]]
    ops = layer_alltoalls(m)
    assert [o[2] for o in ops] == [m, transpose(m), m, transpose(m)]
    assert len(layer_alltoalls(m, recompute=True)) == 6
    assert received_bytes(m) == [5, 3]


def test_nonuniformity_from_flows_matches_matrix():
    m = [[0, 10, 30], [20, 0, 0], [5, 5, 0]]
    rows = [(i, j, m[i][j]) for i in range(3) for j in range(3) if i != j and m[i][j]]
    assert nonuniformity_from_flows(rows) == pytest.approx(nonuniformity(m))


@pytest.mark.parametrize("sec, msg", [
    ({"num_experts": 8, "ep": 3}, "ep does not divide num_experts"),
    ({"num_experts": 8, "ep": 8}, "ep does not divide the data-parallel degree"),
    ({"num_experts": 8, "expert": 2}, "unknown key"),
    ({"num_experts": 8, "top_k": 9}, "top_k exceeds"),
    ({"num_experts": 8, "layers": [99]}, "out of range"),
    ({"top_k": 1}, "missing required field"),
])
def test_parse_moe_errors(sec, msg):
    with pytest.raises(WorkloadError, match=msg) as e:
        parse_moe(sec, n_layers=12, dp=4, source="w.yaml")
    assert "\n" not in str(e.value) and str(e.value).startswith("w.yaml")


def test_parse_moe_layers():
    assert parse_moe({"num_experts": 4, "ep": 4, "layers": "every 2"}, n_layers=6, dp=4).moe_layer_indices(6) == (1, 3, 5)
    assert parse_moe({"num_experts": 4, "layers": "all"}, n_layers=3, dp=4).moe_layer_indices(3) == (0, 1, 2)
    assert parse_moe({"num_experts": 4, "layers": [0, 4]}, n_layers=6, dp=2).moe_layer_indices(6) == (0, 4)
    assert parse_moe(None, n_layers=6, dp=4) is None
