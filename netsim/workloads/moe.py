"""Mixture-of-Experts (expert parallelism): configuration, data-dependent routing, all-to-all bytes.

What is modelled
----------------
* An MoE layer replaces a transformer layer's MLP by ``num_experts`` expert
  MLPs; a router sends each token to ``top_k`` of them.  Experts are sharded
  over an *expert-parallel* (EP) group of ``ep`` ranks (``num_experts / ep``
  experts per rank, expert ``e`` on group rank ``e // (num_experts / ep)``);
  EP groups are consecutive slices of a DP group (DeepSpeed-MoE's layout).
* Per MoE layer per micro-batch: an all-to-all *dispatch* before the experts
  (token rank → expert rank, byte matrix ``M``) and a *combine* after them
  (``Mᵀ``), forward and again backward (the backward of combine moves ``M``,
  of dispatch ``Mᵀ``): 4 all-to-alls, plus 2 more when the forward is
  recomputed.  Without drops, ``sum(M) = tokens · top_k · h · bytes``.
* Routing is data dependent and **semi-predictable** (APNet'24): the expert
  load's coefficient of variation follows a decay law in the iteration number
  ``i``::

      cv(i) = cv_final + (cv_initial − cv_final) · exp(−i / tau_iterations)

  with ``cv_initial`` = 0.4 and the law crossing 0.1 before iteration 100 by
  default (APNet'24's observation; the exponential form is our assumption).
  For each (iteration, MoE layer) a seeded standard-normal vector ``z`` over
  experts gives log-normal expert weights ``exp(σ z)`` whose CV is solved to
  equal ``cv(i)`` exactly; each rank's tokens then pick experts as
  ``tokens · top_k`` independent draws from those weights (multinomial,
  seeded per micro-batch).
* Capacity: with ``capacity_factor`` c > 0 an expert accepts at most
  ``ceil(c · tokens · top_k / num_experts)`` tokens *from each source rank*
  (GShard/Switch's per-group capacity); the overflow is dropped (not sent).
  The default c = 0 means dropless (variable-size all-to-all, as in FastMoE /
  MegaBlocks): a padded fixed-capacity dispatch would send the same bytes for
  any routing, so it could not show the non-uniform traffic APNet'24 measured.
* The *non-uniformity factor* of one all-to-all is the CV (std/mean) of the
  bytes each rank receives from the other ranks (the flows; what stays on a
  rank is not traffic): :func:`nonuniformity`.

Left out: the distinct-experts constraint of top-k (k draws may repeat an
expert), auxiliary load-balancing losses (their effect is the decay law),
expert compute imbalance (an expert rank's compute does not depend on its
load), token re-routing of dropped tokens.

>>> cfg = MoEConfig(num_experts=8, top_k=2, ep=8)
>>> r = RoutingModel(cfg, seed=1)
>>> round(r.target_cv(0), 3), r.target_cv(100) < 0.1
(0.4, True)
>>> m = r.dispatch_matrix(iteration=0, layer=1, micro_batch=0, tokens_per_rank=1024, hidden=16, bytes_per_value=2)
>>> sum(map(sum, m)) == 8 * 1024 * 2 * 16 * 2     # dropless: tokens·top_k·h·2 bytes per rank
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import WorkloadError
from ..params import Param, ParamTable

_APNET = "APNet'24 (Li et al., 'Understanding Communication Characteristics of Distributed Training')"

MOE_PARAMS = ParamTable("moe routing", [
    Param("cv_initial", 0.4, "float", "expert-load coefficient of variation at iteration 0",
          _APNET + ": non-uniformity factor ~0.4 early in training", minimum=0.0),
    Param("cv_final", 0.05, "float", "expert-load CV the decay tends to (after load balancing has converged)",
          "assumption: below APNet'24's < 0.1 after ~100 iterations", minimum=0.0),
    Param("tau_iterations", 30.0, "float", "e-folding time of the CV decay, iterations",
          "chosen so cv(100) = 0.05 + 0.35·e^(-100/30) = 0.062 < 0.1 as APNet'24 observed", minimum=1e-9),
    Param("capacity_factor", 0.0, "float",
          "expert capacity per source rank = ceil(c·tokens·top_k/experts); 0 = dropless",
          "GShard (Lepikhin et al. 2020) / Switch (Fedus et al. 2021) capacity; 0 (dropless) as FastMoE/"
          "MegaBlocks (Gale et al. 2022), needed for the non-uniform bytes APNet'24 measured", minimum=0.0),
])

#: keys accepted under ``moe:`` in a workload file
MOE_KEYS = ("num_experts", "top_k", "capacity_factor", "layers", "ep", "cv_initial", "cv_final", "tau_iterations")


@dataclass(frozen=True)
class MoEConfig:
    """An MoE configuration.

    Attributes
    ----------
    num_experts : int
        Experts per MoE layer (E).
    top_k : int
        Experts each token is routed to.
    ep : int
        Expert-parallel degree (ranks an MoE layer's experts are spread over).
    capacity_factor : float
        0 = dropless, else per-source-rank expert capacity factor.
    every : int
        Every ``every``-th transformer layer is MoE (1-based: layers every-1,
        2·every-1, …, i.e. DeepSpeed's ``expert_interval``), unless ``layers``.
    layers : tuple of int or None
        Explicit 0-based indices of the MoE layers.
    cv_initial, cv_final, tau_iterations : float
        The skew decay law (see the module docstring).
    """

    num_experts: int
    top_k: int = 1
    ep: int = 1
    capacity_factor: float = MOE_PARAMS["capacity_factor"].default
    every: int = 2
    layers: tuple | None = None
    cv_initial: float = MOE_PARAMS["cv_initial"].default
    cv_final: float = MOE_PARAMS["cv_final"].default
    tau_iterations: float = MOE_PARAMS["tau_iterations"].default

    @property
    def experts_per_rank(self) -> int:
        return self.num_experts // self.ep

    def moe_layer_indices(self, n_layers: int) -> tuple:
        """0-based indices of the MoE layers among ``n_layers`` transformer layers.

        >>> MoEConfig(8, every=2).moe_layer_indices(6)
        (1, 3, 5)
        """
        if self.layers is not None:
            return tuple(sorted(self.layers))
        return tuple(i for i in range(n_layers) if (i + 1) % self.every == 0)


def parse_moe(section, *, n_layers: int, dp: int, source: str | None = None, where=None) -> MoEConfig | None:
    """Validate a workload's ``moe:`` mapping (or None) into a :class:`MoEConfig`.

    ``where(path)`` formats a location (e.g. ``"line 12, field moe.ep"``).
    Errors: unknown key, ep not dividing the experts or the DP degree, top_k
    out of range, a layer index out of range — one-line :class:`WorkloadError`.
    """
    if section is None:
        return None
    loc = where or (lambda p: f"field {p}")

    def fail(path, msg, value, accepted):
        raise WorkloadError(msg, source=source, where=loc(path), value=value, accepted=accepted)

    if not isinstance(section, dict):
        fail("moe", "must be a mapping", section, "keys " + ", ".join(MOE_KEYS))
    for k in section:
        if k not in MOE_KEYS:
            import difflib
            close = difflib.get_close_matches(str(k), MOE_KEYS, n=2)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            fail(f"moe.{k}", "unknown key", k, hint + "one of " + ", ".join(MOE_KEYS))

    def pos_int(key, default):
        v = section.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            fail(f"moe.{key}", "must be an integer >= 1", v, "an integer >= 1")
        return v

    def number(key, minimum=0.0):
        v = section.get(key, MOE_PARAMS[key].default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < minimum:
            fail(f"moe.{key}", f"must be a number >= {minimum}", v, f"a number >= {minimum}")
        return float(v)

    if "num_experts" not in section:
        fail("moe.num_experts", "missing required field", None, "the number of experts per MoE layer")
    e = pos_int("num_experts", None)
    k = pos_int("top_k", 1)
    if k > e:
        fail("moe.top_k", f"top_k exceeds num_experts = {e}", k, f"1..{e}")
    ep = pos_int("ep", min(e, dp))
    if e % ep:
        fail("moe.ep", f"ep does not divide num_experts = {e}", ep, f"a divisor of {e}")
    if dp % ep:
        fail("moe.ep", f"ep does not divide the data-parallel degree dp = {dp} (EP groups are slices of a DP group)",
             ep, f"a divisor of {dp}")
    every, layers = 2, None
    spec = section.get("layers", "every 2")
    if isinstance(spec, int) and not isinstance(spec, bool):
        spec = f"every {spec}"
    if isinstance(spec, str):
        parts = spec.split()
        if spec.strip() == "all":
            every = 1
        elif len(parts) == 2 and parts[0] == "every" and parts[1].isdigit() and int(parts[1]) >= 1:
            every = int(parts[1])
        else:
            fail("moe.layers", "bad MoE layer selection", spec, "'all', 'every K', K, or a list of layer indices")
    elif isinstance(spec, list) and spec and all(isinstance(x, int) and not isinstance(x, bool) for x in spec):
        bad = [x for x in spec if not 0 <= x < n_layers]
        if bad:
            fail("moe.layers", f"layer index out of range 0..{n_layers - 1}", bad[0], f"indices in 0..{n_layers - 1}")
        if len(set(spec)) != len(spec):
            fail("moe.layers", "a layer is listed twice", spec, "distinct layer indices")
        layers = tuple(sorted(spec))
    else:
        fail("moe.layers", "bad MoE layer selection", spec, "'all', 'every K', K, or a list of layer indices")
    cfg = MoEConfig(num_experts=e, top_k=k, ep=ep, capacity_factor=number("capacity_factor"), every=every,
                    layers=layers, cv_initial=number("cv_initial"), cv_final=number("cv_final"),
                    tau_iterations=number("tau_iterations", 1e-9))
    if not cfg.moe_layer_indices(n_layers):
        fail("moe.layers", f"selects no layer of the {n_layers}", spec, "a selection that includes some layer")
    return cfg


def _cv(x: np.ndarray) -> float:
    m = float(x.mean())
    return float(x.std()) / m if m > 0 else 0.0


def lognormal_weights(z: np.ndarray, cv: float) -> np.ndarray:
    """Weights ``exp(σ z)`` (normalized to sum 1) whose CV equals ``cv`` (σ found by bisection).

    >>> w = lognormal_weights(np.array([-1.0, 0.0, 1.0, 0.5]), 0.3)
    >>> round(float(w.std() / w.mean()), 6), round(float(w.sum()), 6)
    (0.3, 1.0)
    """
    n = len(z)
    if cv <= 0 or n < 2 or float(np.ptp(z)) == 0.0:
        return np.full(n, 1.0 / n)
    lo, hi = 0.0, 1.0
    while _cv(np.exp(hi * z)) < cv:
        hi *= 2.0
        if hi > 1e3:  # cv beyond what these n experts can express: take the largest
            break
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if _cv(np.exp(mid * z)) < cv:
            lo = mid
        else:
            hi = mid
    w = np.exp(0.5 * (lo + hi) * z)
    return w / w.sum()


class RoutingModel:
    """Seeded per-iteration expert loads and the all-to-all byte matrices they imply.

    Parameters
    ----------
    config : MoEConfig
    seed : int
        The simulation seed; every draw is a function of (seed, iteration,
        layer[, micro-batch]) only, so results do not depend on call order.
    """

    def __init__(self, config: MoEConfig, seed: int = 0):
        self.cfg = config
        self.seed = int(seed) & 0xFFFFFFFF

    def target_cv(self, iteration: int) -> float:
        """The decay law cv(i) of the expert load (see the module docstring)."""
        c = self.cfg
        return c.cv_final + (c.cv_initial - c.cv_final) * math.exp(-iteration / c.tau_iterations)

    def expert_weights(self, iteration: int, layer: int) -> np.ndarray:
        """Routing probabilities over experts for (iteration, layer); CV = :meth:`target_cv`."""
        rng = np.random.default_rng([self.seed, 0x4D6F45, int(layer), int(iteration)])
        z = rng.standard_normal(self.cfg.num_experts)
        return lognormal_weights(z, self.target_cv(iteration))

    def token_counts(self, iteration: int, layer: int, micro_batch: int, tokens_per_rank: int,
                     group: int = 0) -> np.ndarray:
        """``[ep, E]`` tokens each rank of EP group ``group`` routes to each expert (after capacity drops).

        The expert popularity is shared by all EP groups (one router per
        layer); the tokens, hence the multinomial draw, differ per group.
        """
        c = self.cfg
        p = self.expert_weights(iteration, layer)
        rng = np.random.default_rng([self.seed, 0x526F75, int(layer), int(iteration), int(micro_batch), int(group)])
        counts = rng.multinomial(tokens_per_rank * c.top_k, p, size=c.ep)
        if c.capacity_factor > 0:
            cap = math.ceil(c.capacity_factor * tokens_per_rank * c.top_k / c.num_experts)
            counts = np.minimum(counts, cap)
        return counts

    def dispatch_matrix(self, iteration: int, layer: int, micro_batch: int, tokens_per_rank: int, hidden: int,
                        bytes_per_value: int = 2, group: int = 0) -> list[list[int]]:
        """``M[i][j]``: bytes EP-group rank i sends to rank j in the dispatch all-to-all.

        The diagonal holds what a rank routes to its own experts (not traffic;
        collectives skip it).  Combine is ``Mᵀ``.
        """
        c = self.cfg
        counts = self.token_counts(iteration, layer, micro_batch, tokens_per_rank, group)
        per_rank = counts.reshape(c.ep, c.ep, c.experts_per_rank).sum(axis=2)
        unit = hidden * bytes_per_value
        return [[int(v) * unit for v in row] for row in per_rank]


def transpose(m: list[list[int]]) -> list[list[int]]:
    """``mᵀ`` of a square byte matrix."""
    return [list(col) for col in zip(*m)]


def layer_alltoalls(m: list[list[int]], recompute: bool = False) -> list[tuple[str, str, list[list[int]]]]:
    """The all-to-alls of one MoE layer for one micro-batch, in execution order.

    Returns ``(phase, name, matrix)`` with phase ``F`` (forward), ``R``
    (recomputed forward, only when ``recompute``) or ``B`` (backward).

    >>> [(p, n) for p, n, _ in layer_alltoalls([[0, 1], [2, 0]])]
    [('F', 'dispatch'), ('F', 'combine'), ('B', 'combine_grad'), ('B', 'dispatch_grad')]
    """
    mt = transpose(m)
    out = [("F", "dispatch", m), ("F", "combine", mt)]
    if recompute:
        out += [("R", "dispatch", m), ("R", "combine", mt)]
    out += [("B", "combine_grad", m), ("B", "dispatch_grad", mt)]
    return out


def received_bytes(m: list[list[int]]) -> list[int]:
    """Bytes each rank receives from the *other* ranks (column sums without the diagonal)."""
    n = len(m)
    return [sum(m[i][j] for i in range(n) if i != j) for j in range(n)]


def nonuniformity(m: list[list[int]]) -> float:
    """APNet'24's non-uniformity factor of one all-to-all: CV of the bytes each rank receives.

    >>> nonuniformity([[0, 5, 5], [5, 0, 5], [5, 5, 0]])
    0.0
    """
    return _cv(np.asarray(received_bytes(m), dtype=float))


def nonuniformity_from_flows(rows) -> float:
    """The same from flow records of one all-to-all: ``rows`` of (src, dst, size_bytes)."""
    recv: dict = {}
    for src, dst, size in rows:
        recv[dst] = recv.get(dst, 0) + size
        recv.setdefault(src, recv.get(src, 0))
    return _cv(np.asarray([recv[k] for k in sorted(recv)], dtype=float)) if recv else 0.0


def moe_mlp_flops_factor(top_k: int) -> int:
    """Expert MLP FLOPs per token relative to the dense MLP: each token runs ``top_k`` experts."""
    return top_k


def expert_params(hidden: int, ffn: int, experts_per_rank: int) -> int:
    """Parameters of the experts one rank holds: ``experts_per_rank`` MLPs (h→ffn→h, with biases)."""
    return experts_per_rank * (2 * hidden * ffn + ffn + hidden)
