"""Compute variability applied to the op graph: per-op jitter, per-GPU factors, rare stragglers.

The settings and their sources are in :mod:`netsim.workloads.variability`.
:class:`VariabilityBuilder` wraps an op-graph builder and multiplies each
compute/optimizer op's ``duration_ps`` by

    gpu_factor[rank] · jitter · (straggler_factor if a straggler else 1)

Random streams: every source draws from its own numpy Generator seeded by
``SeedSequence(seed, spawn_key=(STREAM, ...))`` with a distinct
:data:`STREAMS` key (and the iteration), so turning one source on never
shifts another's draws, and an iteration's draws do not depend on how many
iterations ran before.  The simulator's other random sources already draw
from their own streams keyed by the run seed and are left as they are (so
default runs stay byte-identical): the ECMP hash salt (CRC-32 of the flow and
the seed, :mod:`netsim.topology.routing`), the packet backend's RED/ECN marks
(``random.Random(seed)``) and MoE routing (``default_rng([iteration, seed,
layer, micro-batch, group])``, :mod:`netsim.workloads.moe`).

Left out: correlation between consecutive ops of a GPU (a thermal drift is
modelled only as the per-GPU factor) and jitter of communication.
"""
from __future__ import annotations

import math

import numpy as np

from ..workloads.variability import MIN_FACTOR

#: spawn keys of the compute-variability streams (distinct from each other; any fixed integers)
STREAMS = {"jitter": 0x6A17, "straggler": 0x5772, "gpu": 0x6770}


def _rng(seed: int, stream: str, *extra: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(STREAMS[stream], *extra)))


def lognormal_factors(rng: np.random.Generator, cv: float, n: int) -> np.ndarray:
    """``n`` lognormal draws with mean exactly 1 and coefficient of variation ``cv``."""
    if cv <= 0:
        return np.ones(n)
    sigma2 = math.log1p(cv * cv)
    return rng.lognormal(-sigma2 / 2.0, math.sqrt(sigma2), n)


def jitter_factors(rng: np.random.Generator, distribution: str, cv: float, n: int) -> np.ndarray:
    """Per-op duration factors of ``distribution`` (mean 1, CV ``cv``)."""
    if distribution == "none" or cv <= 0:
        return np.ones(n)
    if distribution == "lognormal":
        return lognormal_factors(rng, cv, n)
    return np.maximum(MIN_FACTOR, 1.0 + cv * rng.standard_normal(n))


class VariabilityBuilder:
    """Wraps an op-graph builder; its ``build(it)`` stretches compute ops by the variability model.

    Parameters
    ----------
    builder : object with ``build(iteration)``
    variability : netsim.workloads.variability.Variability
    seed : int
        The run seed (``--seed``).
    world_size : int
        Ranks of the job (one persistent GPU factor each).
    """

    def __init__(self, builder, variability, seed: int, world_size: int):
        self._b, self.v, self.seed = builder, variability, int(seed)
        self.gpu_factor = lognormal_factors(_rng(self.seed, "gpu"), variability.gpu_cv, int(world_size))
        self.stragglers = 0          # straggler draws that hit (ops, or rank-iterations)

    def __getattr__(self, name):
        return getattr(self._b, name)

    def build(self, it: int):
        ops = self._b.build(it)
        comp = [op for op in ops if op.kind in ("compute", "optimizer")]
        n = len(comp)
        if n == 0:
            return ops
        v = self.v
        factor = jitter_factors(_rng(self.seed, "jitter", it), v.jitter, v.jitter_cv, n)
        factor = factor * self.gpu_factor[[op.ranks[0] for op in comp]]
        if v.straggler_rate > 0:
            srng = _rng(self.seed, "straggler", it)
            if v.straggler_scope == "op":
                hit = srng.random(n) < v.straggler_rate
            else:
                slow_rank = srng.random(len(self.gpu_factor)) < v.straggler_rate
                hit = slow_rank[[op.ranks[0] for op in comp]]
                self.stragglers += int(slow_rank.sum())
            if v.straggler_scope == "op":
                self.stragglers += int(hit.sum())
            factor = np.where(hit, factor * v.straggler_factor, factor)
        for op, f in zip(comp, factor.tolist()):
            op.duration_ps = int(round(op.duration_ps * f))
        return ops

    def summary(self) -> dict:
        """What ``summary.json`` reports under ``variability``."""
        return {**self.v.as_dict(), "straggler_hits": self.stragglers,
                "gpu_factor": {"min": float(self.gpu_factor.min()), "max": float(self.gpu_factor.max())}}


def _flag_fail(flag: str, keyed: bool = True):
    from ..errors import InputError

    def fail(path, message, value, accepted):
        key = path.split(".", 1)[1] if "." in path else path
        raise InputError(message, where=f"{flag} {key}" if keyed else flag, value=value, accepted=accepted)
    return fail


def _scalar(value):
    """A CLI value as the YAML scalar it spells (``0.05`` → 0.05, ``lognormal`` → 'lognormal')."""
    if not isinstance(value, str):
        return value
    import yaml
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError:
        return value


def resolve_variability(wl, extra):
    """The workload's variability with the caller's settings on top (None when everything is off).

    ``extra``: a :class:`~netsim.workloads.variability.Variability`, a mapping or a list of
    ``(key, value)`` pairs (``--variability KEY=VALUE``; string values read as YAML scalars).
    """
    from ..errors import WorkloadError
    from ..workloads.variability import Variability, parse_variability
    base = getattr(wl, "variability", None)
    flags = {}
    if isinstance(extra, Variability):
        return extra if extra.enabled else None
    if extra:
        items = extra.items() if isinstance(extra, dict) else extra
        flags = {k: _scalar(x) for k, x in items}
        v = parse_variability(flags, fail=_flag_fail("--variability"), base=base)
    else:
        v = base
    # a file's key whose switch is still off after the flags changes nothing: an error, unless a flag
    # named that key or set its switch (the flags' own keys were checked by parse_variability)
    file_keys = [k for k in (base.given if base is not None else ()) if k not in flags
                 and Variability.SWITCH.get(k) not in flags]
    for key, why, accepted in (v.idle_keys(file_keys) if base is not None else ()):
        raise WorkloadError(why, source=getattr(wl, "source", None), where=f"field variability.{key}",
                            value=getattr(v, key), accepted=accepted)
    return v if v is not None and v.enabled else None


def resolve_overlap(wl, extra) -> float:
    """``overlap.slowdown`` f: the caller's value (``--overlap-slowdown``) if given, else the workload's."""
    if extra is None:
        return float(getattr(wl, "overlap_slowdown", 0.0) or 0.0)
    from ..workloads.variability import parse_overlap
    return parse_overlap({"slowdown": _scalar(extra)}, fail=_flag_fail("--overlap-slowdown", keyed=False))
