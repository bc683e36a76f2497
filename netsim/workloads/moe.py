"""Mixture-of-experts routing: how many tokens each rank sends to each rank.

Each MoE layer has ``experts`` experts spread evenly over the ``ep`` ranks of
an expert-parallel group (E/ep consecutive experts per rank).  Every rank
routes its b·s tokens to ``top_k`` experts each.  The routing is data
dependent and follows a seeded skew that decays with training (APNet'24's
"semi-predictable" MoE traffic): in iteration i the experts' popularity is
``w_e = max(0.01, 1 + c·z_e)`` with z_e standard normal (seeded by
seed, iteration, layer, micro-batch, group) and
``c = cv(i)·sqrt(E/ep)·sqrt(ep/(ep−1))``,
``cv(i) = skew_end + (skew_start − skew_end)·exp(−i/τ)``, so the bytes each
rank receives in a dispatch all-to-all have a coefficient of variation
(population std / mean over the ep ranks) of about cv(i) (0.4 at the start,
< 0.1 after 100 iterations by default).  A source rank sends expert e its
share of the T·k token copies (largest-remainder rounding, so exactly T·k in
all), capped at the expert's
capacity ``ceil(capacity_factor·T·k/E)`` per source (GShard/Switch: the
overflow is dropped).  Left out: per-source routing differences, auxiliary
load-balancing loss dynamics (the decay stands for them), token padding.

>>> spec = MoeSpec(experts=8, top_k=2)
>>> tok, recv = route(spec, ep=4, tokens=1024, iteration=0, key=(0, 0, 0, 0))
>>> sum(map(sum, tok)) <= 4 * 1024 * 2
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MoeSpec:
    """MoE layer settings (see docs/workloads.md, ``model.moe``)."""

    experts: int
    top_k: int = 1
    capacity_factor: float | None = 1.25
    every: int = 2                     # every n-th layer is an MoE layer (layer index % every == every - 1)
    skew_start: float = 0.4
    skew_end: float = 0.05
    skew_decay_iterations: float = 30.0

    def is_moe_layer(self, i: int) -> bool:
        return i % self.every == self.every - 1

    def cv(self, iteration: int) -> float:
        return self.skew_end + (self.skew_start - self.skew_end) * math.exp(-iteration / self.skew_decay_iterations)


def route(spec: MoeSpec, ep: int, tokens: int, iteration: int, key: tuple) -> tuple[list, list]:
    """Token counts ``tok[i][j]`` sent from EP rank i to EP rank j and tokens received per rank.

    ``key`` = (seed, layer, micro-batch, group) makes each all-to-all's routing
    distinct and reproducible.
    """
    e = spec.experts
    rng = np.random.default_rng([int(iteration)] + [int(k) & 0xFFFFFFFF for k in key])
    c = spec.cv(iteration) * math.sqrt(e / ep) * (math.sqrt(ep / (ep - 1)) if ep > 1 else 1.0)
    w = np.maximum(0.01, 1.0 + c * rng.standard_normal(e))
    total = tokens * spec.top_k
    exact = total * w / w.sum()
    want = np.floor(exact).astype(np.int64)
    short = int(total - want.sum())
    if short > 0:   # largest remainders first, ties to the lower expert index
        order = np.lexsort((np.arange(e), -(exact - want)))
        want[order[:short]] += 1
    if spec.capacity_factor is not None:
        cap = math.ceil(spec.capacity_factor * tokens * spec.top_k / e)
        want = np.minimum(want, cap)
    per_rank = want.reshape(ep, e // ep).sum(axis=1)
    tok = [[int(per_rank[j]) for j in range(ep)] for _ in range(ep)]
    recv = [int(per_rank[j]) * ep for j in range(ep)]
    return tok, recv
