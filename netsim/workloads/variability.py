"""Compute variability and compute/communication overlap: the settings (a workload's ``variability:`` and ``overlap:``).

What is modelled (applied by :mod:`netsim.runtime.variability` and
:mod:`netsim.runtime.overlap`; every setting defaults to off, so a workload
without these sections runs exactly as before):

* **per-op jitter** — every compute/optimizer op's duration is multiplied by
  an independent draw with mean 1 and coefficient of variation ``jitter_cv``
  from a named distribution (``lognormal``: exact mean 1; ``normal``: 1 + cv·z,
  clipped at :data:`MIN_FACTOR`, cv at most :data:`MAX_NORMAL_CV` so the clip
  is a < 1e-4 event);
* **per-GPU slowdown** — each rank draws one persistent speed factor per run
  (lognormal, mean 1, CV ``gpu_cv``: manufacturing and power-management
  spread between GPUs of one SKU); fixed per-rank factors are the what-if
  ``straggler`` (:mod:`netsim.whatif`);
* **rare stragglers** — with probability ``straggler_rate`` an op
  (``straggler_scope: op``) or a rank for a whole iteration
  (``straggler_scope: iteration``) is ``straggler_factor`` times slower;
* **overlap slowdown** ``overlap.slowdown`` f — a compute kernel that runs
  beside a communication kernel of the same GPU progresses at 1/(1+f) of its
  speed, so work x done under communication takes f·x longer.

* **communication slowdown** ``overlap.comm_slowdown`` g — a communication
  op progresses at 1/(1+g) while compute runs on one of its ranks' GPUs (its
  end is deferred by the lost progress, :mod:`netsim.runtime.overlap`).

Left out: correlation between ops (thermal throttling drifts over time) and
jitter of communication kernels.

>>> parse_variability({"jitter": "lognormal"}, fail=None).jitter_cv
0.09
>>> parse_overlap({"slowdown": 0.189}, fail=None)
0.189
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import WorkloadError

DISTRIBUTIONS = ("none", "lognormal", "normal")
SCOPES = ("op", "iteration")
VARIABILITY_KEYS = ("jitter", "jitter_cv", "gpu_cv", "straggler_rate", "straggler_scope", "straggler_factor")
OVERLAP_KEYS = ("slowdown", "comm_slowdown")
#: per-op jitter CV when ``jitter`` is on and ``jitter_cv`` is not given: the 9 % GPU-time variability
#: PRISM (Golden et al., arXiv:2510.15596, 2025) measured in frontier-model training at 64 k GPUs
#: (a job-level figure, used per op: independent per-op draws average out, so an iteration varies less)
DEFAULT_JITTER_CV = 0.09
#: largest CV of ``jitter: normal`` (1 + cv·z is clipped at MIN_FACTOR; at cv 0.25 that is a z < -3.8 event,
#: p < 1e-4, so the mean stays 1 within 1e-6) (netsim choice)
MAX_NORMAL_CV = 0.25
#: largest CV of a lognormal draw (jitter_cv, gpu_cv): beyond 2 a "jitter" is a different workload (netsim choice)
MAX_CV = 2.0
#: smallest factor a normal jitter draw is clipped to (netsim choice: an op never runs 20x faster)
MIN_FACTOR = 0.05
#: straggler slowdown when ``straggler_rate`` > 0 and ``straggler_factor`` is not given: Sinha et al.
#: ("Not All GPUs Are Created Equal", SC'22, arXiv:2208.11035) found outlier GPUs up to 1.5x slower
#: than the median GPU of the same SKU
DEFAULT_STRAGGLER_FACTOR = 1.5
#: largest straggler factor (as netsim.whatif.MAX_STRAGGLER_FACTOR: 10^4 x slower is a stopped rank)
MAX_STRAGGLER_FACTOR = 1e4
#: compute slowdown f under overlapping communication when a user wants a measured value: Lee et al.
#: ("Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning",
#: arXiv:2507.03114, 2025) measured an average 18.9 % (max 40 %) compute slowdown on A100/H100/MI250/MI210.
#: Not the default: ``overlap.slowdown`` defaults to 0 (overlap for free, as before)
MEASURED_OVERLAP_SLOWDOWN = 0.189
#: largest overlap slowdown f (netsim choice: f = 10 already makes overlapped compute 11x slower)
MAX_OVERLAP_SLOWDOWN = 10.0
#: communication slowdown g beside compute by default: 0, communication at the network's speed (netsim
#: choice: no published measurement isolates a collective's own slowdown, so there is no measured preset
#: as MEASURED_OVERLAP_SLOWDOWN is for f, and 0 keeps every existing workload's outputs). Searched
#: (2026-12): Agrawal et al. ("Optimizing ML Concurrent Computation and Communication with GPU DMA
#: Engines", arXiv:2412.14335, 2024) find concurrent compute + collectives on MI300X realize on average
#: only 21 % of the ideal overlap speedup (SM, cache and HBM interference) — a joint figure that does not
#: split into f and g; Lee et al. (arXiv:2507.03114) measure the compute side only (f); Cui and Pericas
#: (arXiv:2606.09200) report total-time reductions of their occupancy shaping, not the collective's own
#: slowdown; Huawei's MindStudio tuning guide says communication bandwidth beside MatMul/FA drops "about
#: 1 to 2 times" on Ascend NPUs — no single figure, other hardware
DEFAULT_OVERLAP_COMM_SLOWDOWN = 0.0


@dataclass(frozen=True)
class Variability:
    """Compute-variability settings (all off by default).

    Attributes
    ----------
    jitter : str
        ``none``, ``lognormal`` or ``normal``: per-op duration factor, mean 1.
    jitter_cv : float
        Its coefficient of variation (dimensionless).
    gpu_cv : float
        CV of each rank's persistent speed factor (lognormal, mean 1), drawn once per run.
    straggler_rate : float
        Probability in [0, 1] that an op (or a rank for an iteration) is a straggler.
    straggler_scope : str
        ``op`` or ``iteration``.
    straggler_factor : float
        How many times slower a straggler is (>= 1).
    given : tuple
        The keys a ``variability:`` mapping or ``--variability`` flag set (for :meth:`idle_keys`).
    """

    #: the key that switches each dependent key on
    SWITCH = {"jitter_cv": "jitter", "straggler_factor": "straggler_rate", "straggler_scope": "straggler_rate"}

    jitter: str = "none"
    jitter_cv: float = 0.0
    gpu_cv: float = 0.0
    straggler_rate: float = 0.0
    straggler_scope: str = "op"
    straggler_factor: float = DEFAULT_STRAGGLER_FACTOR
    given: tuple = field(default=(), compare=False, repr=False)

    def idle_keys(self, keys) -> list[tuple[str, str, str]]:
        """(key, why, what turns it on) of each of ``keys`` whose setting changes nothing: its switch is off."""
        out = []
        if "jitter_cv" in keys and self.jitter_cv > 0 and self.jitter == "none":
            out.append(("jitter_cv", "has no effect without a jitter law (jitter is none)",
                        "jitter=lognormal or jitter=normal with it, or no jitter_cv"))
        if self.straggler_rate == 0:
            for key, idle in (("straggler_factor", 1.0), ("straggler_scope", "op")):
                if key in keys and getattr(self, key) != idle:
                    out.append((key, "has no effect while straggler_rate is 0",
                                f"straggler_rate > 0 (e.g. 0.01) with it, or no {key}"))
        return out

    @property
    def enabled(self) -> bool:
        return (self.jitter != "none" and self.jitter_cv > 0) or self.gpu_cv > 0 or (
            self.straggler_rate > 0 and self.straggler_factor != 1.0)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in VARIABILITY_KEYS}

    def mean_factor(self) -> float:
        """E[duration factor] of one op when stragglers are per op (jitter and GPU factors have mean 1)."""
        return 1.0 + self.straggler_rate * (self.straggler_factor - 1.0)


def _default_fail(key, message, value, accepted):
    raise WorkloadError(message, where=f"field {key}", value=value, accepted=accepted)


def _num(doc, key, prefix, fail, low, high, default, accepted):
    v = doc.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not low <= v <= high:
        fail(f"{prefix}.{key}", "out of range" if isinstance(v, (int, float)) and not isinstance(v, bool)
             else "must be a number", v, accepted)
    return float(v)


def _check_keys(doc, prefix, known, fail):
    if not isinstance(doc, dict):
        fail(prefix, "must be a mapping", doc, "keys " + ", ".join(known))
    for k in doc:
        if k not in known:
            fail(f"{prefix}.{k}", "unknown key", k, "one of " + ", ".join(known))


def parse_variability(doc, *, fail=None, prefix: str = "variability", base: Variability | None = None,
                      check: bool = True) -> Variability:
    """A ``variability:`` mapping → :class:`Variability` (keys not given keep ``base``'s values).

    ``fail(field, message, value, accepted)`` raises the caller's one-line error. ``check``: a key
    of ``doc`` that changes nothing (:meth:`Variability.idle_keys`, e.g. ``jitter_cv`` with no
    ``jitter``) is an error; ``False`` defers that to the caller (a file whose settings flags may
    complete).
    """
    fail = fail or _default_fail
    base = base or Variability()
    doc = {} if doc is None else doc
    _check_keys(doc, prefix, VARIABILITY_KEYS, fail)
    jitter = doc.get("jitter", base.jitter)
    jitter = "none" if jitter in (None, False) else str(jitter)
    if jitter not in DISTRIBUTIONS:
        fail(f"{prefix}.jitter", "unknown distribution", jitter, "one of " + ", ".join(DISTRIBUTIONS))
    default_cv = base.jitter_cv if base.jitter_cv > 0 or jitter == "none" else DEFAULT_JITTER_CV
    top = MAX_NORMAL_CV if jitter == "normal" else MAX_CV
    cv = _num(doc, "jitter_cv", prefix, fail, 0.0, top, default_cv,
              f"a coefficient of variation in [0, {top:g}]" + (" for jitter: normal (use lognormal above)"
                                                                if jitter == "normal" else ""))
    gpu_cv = _num(doc, "gpu_cv", prefix, fail, 0.0, MAX_CV, base.gpu_cv,
                  f"a coefficient of variation in [0, {MAX_CV:g}]")
    rate = _num(doc, "straggler_rate", prefix, fail, 0.0, 1.0, base.straggler_rate, "a probability in [0, 1]")
    scope = str(doc.get("straggler_scope", base.straggler_scope))
    if scope not in SCOPES:
        fail(f"{prefix}.straggler_scope", "unknown scope", scope, "op (each op) or iteration (a rank for a whole "
             "iteration)")
    factor = _num(doc, "straggler_factor", prefix, fail, 1.0, MAX_STRAGGLER_FACTOR, base.straggler_factor,
                  f"a slowdown factor >= 1 and <= {MAX_STRAGGLER_FACTOR:g}")
    given = tuple(dict.fromkeys(base.given + tuple(doc)))
    out = Variability(jitter, cv, gpu_cv, rate, scope, factor, given)   # cv kept with jitter none: a flag may add it
    for key, why, accepted in (out.idle_keys(doc) if check else ()):
        fail(f"{prefix}.{key}", why, doc[key], accepted)
    return out


def parse_overlap_comm(doc, *, fail=None, prefix: str = "overlap") -> float:
    """An ``overlap:`` mapping → the communication slowdown factor g (0 = communication not slowed)."""
    fail = fail or _default_fail
    doc = {} if doc is None else doc
    _check_keys(doc, prefix, OVERLAP_KEYS, fail)
    return _num(doc, "comm_slowdown", prefix, fail, 0.0, MAX_OVERLAP_SLOWDOWN, DEFAULT_OVERLAP_COMM_SLOWDOWN,
                f"a slowdown factor g in [0, {MAX_OVERLAP_SLOWDOWN:g}] (communication overlapping compute for "
                "work y takes g*y longer)")


def parse_overlap(doc, *, fail=None, prefix: str = "overlap") -> float:
    """An ``overlap:`` mapping → the slowdown factor f (0 = overlap for free)."""
    fail = fail or _default_fail
    doc = {} if doc is None else doc
    _check_keys(doc, prefix, OVERLAP_KEYS, fail)
    return _num(doc, "slowdown", prefix, fail, 0.0, MAX_OVERLAP_SLOWDOWN, 0.0,
                f"a slowdown factor f in [0, {MAX_OVERLAP_SLOWDOWN:g}] (compute overlapping communication "
                f"for x takes f*x longer; measured average {MEASURED_OVERLAP_SLOWDOWN})")
