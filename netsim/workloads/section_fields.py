"""Validation of the partition, placement order and measured layer times of a workload.

``parallelism.partition`` (even, a list of layer counts, ``balanced`` or
``speed_balanced``), ``placement.order`` (a named or explicit axis order) and
``compute.layer_times_ms`` (measured per-layer times), and — once the op
graph exists — that an explicit ``collectives.<kind>.algorithm`` is one some
collective of that kind's groups runs.  Every problem is one
:class:`~netsim.errors.WorkloadError` line naming the field, the value and
what is accepted.
"""
from __future__ import annotations

from .fields import Fields

AXES = ("tp", "dp", "pp")
#: named placements: axis order, fastest-varying first
PLACEMENTS = {"megatron": ("tp", "dp", "pp"), "deepspeed": ("tp", "dp", "pp"),
              "dp_first": ("dp", "tp", "pp"), "pp_first": ("pp", "tp", "dp"),
              "tp_dp_pp": ("tp", "dp", "pp"), "tp_pp_dp": ("tp", "pp", "dp"),
              "dp_tp_pp": ("dp", "tp", "pp"), "dp_pp_tp": ("dp", "pp", "tp"),
              "pp_tp_dp": ("pp", "tp", "dp"), "pp_dp_tp": ("pp", "dp", "tp")}
#: largest per-layer time of compute.layer_times_ms: one day per micro-batch (netsim choice: anything
#: larger is a unit mistake, and finite bounds keep simulated time exact)
MAX_LAYER_MS = 86_400_000


def partition_field(f: Fields, par: dict, model, pp: int):
    n = model.layers
    part = par.get("partition", "even")
    if part in ("balanced", "speed_balanced"):
        if pp > n:
            f.fail("parallelism.pp", f"more stages than the model's {n} layers", pp, f"pp <= {n}")
        return part
    if part in (None, "even"):
        if n % pp:
            f.fail("parallelism.pp", f"model layers ({n}) not divisible by pp", pp,
                   f"a divisor of {n}, or parallelism.partition: [layers per stage]")
        return None
    if not isinstance(part, list) or len(part) != pp or not all(isinstance(x, int) and x >= 1 for x in part):
        f.fail("parallelism.partition", f"must be 'even', 'balanced', 'speed_balanced' or a list of {pp} positive layer counts", part,
               f"e.g. {[n // pp] * pp}")
    if sum(part) != n:
        f.fail("parallelism.partition", f"layer counts sum to {sum(part)}, model has {n} layers", part,
               f"{pp} counts summing to {n}")
    return tuple(part)


def order_field(f: Fields, plc: dict) -> tuple:
    order = plc.get("order", "megatron")
    if isinstance(order, str) and order in PLACEMENTS:
        return PLACEMENTS[order]
    seq = order if isinstance(order, list) else str(order).replace(" ", "").split(",")
    if sorted(seq) != sorted(AXES):
        f.fail("placement.order", "unknown placement order", order,
               "one of " + ", ".join(PLACEMENTS) + " or a list of tp, dp, pp (fastest-varying first)",
               suggest=list(PLACEMENTS))
    return tuple(seq)


def layer_times_field(f: Fields, cmp_: dict, model):
    lt = cmp_.get("layer_times_ms")
    if lt is None:
        return None
    if not isinstance(lt, dict):
        f.fail("compute.layer_times_ms", "must be a mapping layer → [forward_ms, backward_ms]", lt,
               "e.g. {default: [1.2, 2.4], logits: [0.5, 1.0]}")
    names = [l.name for l in model.build_layers()] + ["default"]
    out = {}
    for k, v in lt.items():
        w = f"compute.layer_times_ms.{k}"
        if k not in names:
            f.fail(w, "no such layer in the model", k, "default or a layer name such as " + ", ".join(names[:4]),
                   suggest=names)
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                           and 0 <= x <= MAX_LAYER_MS for x in v)):
            f.fail(w, "must be [forward_ms, backward_ms]", v, "two non-negative numbers of milliseconds per micro-batch")
        out[str(k)] = (float(v[0]), float(v[1]))
    return out


def _runs_explicit(collective: str, algorithm: str) -> bool:
    """Whether the executor runs ``algorithm`` for an op of ``collective`` (its rule: an explicit
    algorithm reaches all-reduces; every other collective runs its ring/direct default, or ``auto``)."""
    return algorithm in ("ring", "auto") or collective == "allreduce"


def check_collective_algorithms(wl, new_builder) -> None:
    """Refuse a ``collectives.<kind>.algorithm`` that no collective of the groups it sets can run.

    Iteration 0's ops are built (by a fresh builder from ``new_builder()``:
    building changes a builder's cross-iteration state) and grouped by the ``collectives`` entry they
    use; an entry whose explicit algorithm (not ``ring``, the default, nor
    ``auto``) none of its ops runs — ZeRO's reduce-scatters and all-gathers,
    sequence parallelism's, pipeline sends, MoE all-to-alls — would be dropped
    silently, so it is an error naming the field, the value and what those
    collectives accept.  A kind with no collectives at all (dp = 1) is not checked.
    """
    from ..errors import WorkloadError
    specs = getattr(wl, "collectives", None) or {}
    explicit = {id(spec): kind for kind, spec in specs.items() if spec.algorithm not in ("ring", "auto")}
    if not explicit:
        return
    used: dict[str, set] = {}
    for op in new_builder().build(0):
        kind = explicit.get(id(getattr(op, "spec", None)))
        if kind is not None and getattr(op, "collective", ""):
            used.setdefault(kind, set()).add("sendrecv" if op.collective == "send" else op.collective)
    for kind, collectives in sorted(used.items()):
        algo = specs[kind].algorithm
        if not any(_runs_explicit(c, algo) for c in collectives):
            names = ", ".join(sorted(collectives))
            raise WorkloadError(f"no collective of the {kind} groups can run it (they run {names})",
                                source=getattr(wl, "source", None), where=f"collectives.{kind}.algorithm",
                                value=algo, accepted=f"ring (the default: ring, or direct for sends and "
                                                     f"all-to-alls) or auto for {names}")
