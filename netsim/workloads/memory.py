"""GPU memory per pipeline stage: model states (with ZeRO) and activations (Korthikanti et al.).

Modelled, per GPU of stage ``s`` (bytes):

* **Model states** of the Ψ parameters the GPU holds, under a named
  accounting of bytes per parameter (weights, gradients, optimizer):

  - ``zero_mixed_precision`` — Rajbhandari et al., ZeRO (SC'20) §3.1: fp16
    weights 2Ψ + fp16 gradients 2Ψ + Adam's fp32 master weights, momentum and
    variance 12Ψ = 16Ψ;
  - ``megatron_fp32_grad`` — Megatron-LM's distributed-optimizer accounting:
    bf16 weights 2Ψ + fp32 gradient accumulation 4Ψ + 12Ψ = 18Ψ;
  - ``fp32_adam`` — ``training.precision: fp32``: fp32 weights 4Ψ + fp32
    gradients 4Ψ + Adam's momentum and variance 8Ψ = 16Ψ (no master copy).

  The first two are for fp16/bf16 runs, the third for fp32 ones (the default
  follows the precision; a mismatching ``memory.accounting`` is an error).
  ZeRO partitions them over the data-parallel ranks (DP×CP): stage 1 the
  optimizer states, stage 2 also the gradients, stage 3 also the weights.
  Expert (MoE) parameters are replicated only over the expert-data-parallel
  group (dp·cp/ep ranks holding the same experts), so their states are
  partitioned over that group instead.
* **Activations** per transformer layer and micro-batch, Korthikanti et al.,
  "Reducing Activation Recomputation in Large Transformer Models" (MLSys'23),
  Table 2, with ``s`` sequence, ``b`` micro-batch, ``h`` hidden, ``a`` heads, ``t``
  tensor-parallel ranks, for 16-bit activations (scaled by bytes per
  element / 2 for another ``training.precision``: fp32 doubles them)::

      none, t = 1          s·b·h·(34 + 5·a·s/h)
      none, TP             s·b·h·(10 + 24/t + 5·a·s/(h·t))
      none, TP + SP        s·b·h·(34 + 5·a·s/h) / t
      selective, TP        s·b·h·(10 + 24/t)
      selective, TP + SP   34·s·b·h / t
      full                 2·s·b·h (the layer input only; ÷ t with SP)

  FlashAttention-style kernels keep no ``a·s×s`` score matrices: with
  ``flash_attention`` the ``5·a·s/h`` terms are dropped (then "none" equals
  "selective", as the paper notes). With full recomputation the GPU also holds,
  while one layer's backward runs, that layer's activations as without
  recomputation (one layer, one micro-batch).
* **Micro-batches in flight** per schedule: 1F1B's stage ``s`` (0-based) of
  ``p`` holds ``min(p − s, m)`` micro-batches' activations at its peak (the first
  stage holds ``p``), GPipe holds all ``m``.
* **Context parallelism** (cp > 1): a rank holds the activations of its
  s/cp tokens (ring attention keeps its queries' s/cp × s scores), so every
  per-layer activation term above is divided by cp.

Left out: the embedding's and loss's activations (``4·s·b·v/t`` for the
logits on the last stage), temporary buffers (NCCL, fused kernels, the
all-gather buffers of ZeRO-3), memory fragmentation and the CUDA context —
real peaks run some GB higher; CNN activations (CNN workloads report states
only).

>>> act = activation_bytes_per_layer(seq=2048, micro_batch=1, hidden=2560, heads=32, tp=1, sp=False,
...                                  recompute="none", flash_attention=False)
>>> act == 2048 * 2560 * (34 + 5 * 32 * 2048 / 2560)
True
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .memory_settings import (ACCOUNTINGS, GPU_MEMORY_BYTES, MEMORY_KEYS, RECOMPUTE_MODES,  # noqa: F401 (re-exported)
                              MemorySettings, gpu_capacity_bytes, memory_settings)


@dataclass(frozen=True)
class StateBytes:
    """Model-state bytes one GPU holds."""

    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


@dataclass(frozen=True)
class StageMemory:
    """Peak memory of one GPU of pipeline stage ``stage`` (bytes)."""

    stage: int
    params: int
    states: StateBytes
    layers: int
    in_flight: float
    activation_per_layer: float
    working_bytes: float       # one layer's full activations while it is recomputed (full recomputation)

    @property
    def activations(self) -> float:
        return self.layers * self.in_flight * self.activation_per_layer + self.working_bytes

    @property
    def total(self) -> float:
        return self.states.total + self.activations

    def as_dict(self) -> dict:
        return {"stage": self.stage, "params": self.params, "weights_bytes": self.states.weights,
                "gradients_bytes": self.states.gradients, "optimizer_bytes": self.states.optimizer,
                "activation_bytes": self.activations, "micro_batches_in_flight": self.in_flight,
                "total_bytes": self.total}


def model_state_bytes(params: int, *, zero_stage: int = 0, dp: int = 1,
                      accounting: str = "zero_mixed_precision", expert_params: int = 0,
                      expert_dp: int = 1) -> StateBytes:
    """Weights, gradients and optimizer bytes of ``params`` parameters on one GPU.

    ``expert_params`` of the ``params`` are expert (MoE) parameters, partitioned
    by ZeRO over their expert-data-parallel group of ``expert_dp`` ranks; the
    rest over ``dp``.

    >>> model_state_bytes(1_000, zero_stage=0).total, model_state_bytes(1_000, zero_stage=3, dp=8).total
    (16000, 2000.0)
    >>> model_state_bytes(1_000, zero_stage=1, dp=4, expert_params=600, expert_dp=1).optimizer
    8400.0
    """
    if accounting not in ACCOUNTINGS:
        raise InputError("unknown memory accounting", where="memory.accounting", value=accounting,
                         accepted=", ".join(ACCOUNTINGS))
    if zero_stage not in (0, 1, 2, 3):
        raise InputError("ZeRO stage must be 0, 1, 2 or 3", where="parallelism.zero_stage", value=zero_stage)
    if not 0 <= expert_params <= params:
        raise InputError("expert parameters must be 0..params", where="model.moe", value=expert_params,
                         accepted=f"0..{params}")
    dense = params - expert_params

    def part(k: int, sharded: bool):
        if not sharded:
            return k * params
        return k * dense / dp + k * expert_params / expert_dp

    kw, kg, ko = ACCOUNTINGS[accounting]
    return StateBytes(part(kw, zero_stage >= 3), part(kg, zero_stage >= 2), part(ko, zero_stage >= 1))


#: bytes per activation element Korthikanti et al.'s Table 2 assumes (16-bit training)
KORTHIKANTI_ELEMENT_BYTES = 2


def activation_bytes_per_layer(*, seq: int, micro_batch: int, hidden: int, heads: int, tp: int = 1,
                               sp: bool = False, recompute: str = "none", flash_attention: bool = False,
                               element_bytes: int = KORTHIKANTI_ELEMENT_BYTES) -> float:
    """Activation bytes one transformer layer keeps per micro-batch (Korthikanti et al., Table 2).

    ``element_bytes`` is the activation precision's bytes per element (2 for
    fp16/bf16, 4 for fp32); the paper's 2-byte counts are scaled by it / 2.
    """
    return _korthikanti_bytes(seq=seq, micro_batch=micro_batch, hidden=hidden, heads=heads, tp=tp, sp=sp,
                              recompute=recompute, flash_attention=flash_attention) \
        * element_bytes / KORTHIKANTI_ELEMENT_BYTES


def _korthikanti_bytes(*, seq, micro_batch, hidden, heads, tp, sp, recompute, flash_attention) -> float:
    """Korthikanti et al.'s Table 2 for 2-byte activations."""
    if recompute not in RECOMPUTE_MODES:
        raise InputError("unknown recomputation mode", where="training.recompute", value=recompute,
                         accepted=", ".join(RECOMPUTE_MODES) + " (true = full, false = none)")
    sbh = seq * micro_batch * hidden
    attn = 0.0 if flash_attention else 5.0 * heads * seq / hidden
    if recompute == "full":
        return 2.0 * sbh / (tp if sp else 1)
    if recompute == "selective":
        attn = 0.0
    if sp:
        return sbh * (34.0 + attn) / tp
    if tp == 1:
        return sbh * (34.0 + attn)
    return sbh * (10.0 + 24.0 / tp + attn / tp)


def micro_batches_in_flight(schedule: str, stage: int, pp: int, micro_batches: int, *,
                            virtual_stages: int = 1, actions=None) -> float:
    """Micro-batches whose activations stage ``stage`` holds at its peak under ``schedule``.

    Interleaved 1F1B and ZB-H1 (and ``custom`` with its ``actions``) count the
    schedule's order (:func:`netsim.workloads.schedules.activations_in_flight`):
    interleaving's device 0 holds p + (p−1)/v (Narayanan et al. SC'21), ZB-H1
    p − s as 1F1B (the smaller state pending W passes keep is not counted).
    """
    if schedule == "gpipe":
        return micro_batches
    if schedule in ("interleaved_1f1b", "zb_h1", "custom"):
        from .schedules import activations_in_flight, stage_orders
        orders = actions or stage_orders(schedule, pp, micro_batches, virtual_stages)
        return activations_in_flight(orders[stage], virtual_stages)
    return max(1, min(pp - stage, micro_batches))


def stage_memory(wl, builder, settings: MemorySettings) -> list[StageMemory]:
    """Peak memory of one GPU of every pipeline stage of ``wl`` (``builder`` gives the stages' parameters)."""
    from .transformer import TransformerModel
    pl = builder.pl
    out = []
    for s in range(wl.pp):
        ranks = [r for r in range(wl.world_size) if pl.stage(r) == s]
        params = max(builder.rank_params(r) for r in ranks)
        dp_cp = wl.dp * getattr(wl, "cp", 1)                              # ZeRO shards over DP×CP
        states = model_state_bytes(params, zero_stage=wl.zero_stage, dp=dp_cp, accounting=settings.accounting,
                                   expert_params=_expert_params(builder.stage_layers[s]),
                                   expert_dp=max(1, dp_cp // max(1, getattr(wl, "ep", 1))))
        layers = sum(1 for layer in builder.stage_layers[s] if layer.role == "body")
        act = work = 0.0
        inflight = micro_batches_in_flight(wl.schedule, s, wl.pp, wl.micro_batches,
                                           virtual_stages=getattr(wl, "virtual_stages", 1),
                                           actions=getattr(wl, "schedule_actions", None))
        if isinstance(wl.model, TransformerModel) and layers:
            m = wl.model
            dims = dict(seq=m.seq_len, micro_batch=wl.micro_batch, hidden=m.hidden, heads=m.heads, tp=wl.tp,
                        sp=wl.sequence_parallel, flash_attention=settings.flash_attention,
                        element_bytes=wl.act_bytes)
            act = activation_bytes_per_layer(recompute=settings.recompute, **dims)
            if settings.recompute == "full":
                work = activation_bytes_per_layer(recompute="none", **dims)
            cp = getattr(wl, "cp", 1)       # context parallelism: a rank holds s/cp tokens' activations
            if cp > 1:
                act, work = act / cp, work / cp
        else:
            layers = 0
        out.append(StageMemory(s, params, states, layers, inflight, act, work))
    return out


def _expert_params(layers) -> int:
    """Expert (MoE) parameters one rank holds of ``layers`` (its stage's)."""
    return sum(n for layer in layers for blk in layer.blocks for _, n in blk.expert_tensors)


def _tightest_gpu(wl, graph, placement, stage: int, pl, settings: MemorySettings):
    """(GPU, capacity) of stage ``stage`` with the least known memory (the first GPU when none is known).

    Every GPU of a stage holds the same bytes, so the smallest capacity decides the fit.
    """
    best = None
    for r in range(wl.world_size):
        if pl.stage(r) != stage:
            continue
        gpu = placement.gpu_of[r]
        cap = gpu_capacity_bytes(wl, graph, gpu, settings)
        if best is None or (cap is not None and (best[1] is None or cap < best[1])):
            best = (gpu, cap)
    return best


def check_memory(wl, builder, placement, graph, *, allow_oom: bool = False) -> dict:
    """Per-stage peaks for ``summary.json``; an :class:`InputError` when a GPU of a stage does not fit
    (unless ``allow_oom``).  Every GPU of every stage is checked against its own capacity; a stage's
    row names its GPU with the least memory."""
    settings = memory_settings(wl.raw or {}, wl.recompute, wl.source, getattr(wl, "precision", "fp16"))
    stages = stage_memory(wl, builder, settings)
    report = {"accounting": settings.accounting, "recompute": settings.recompute,
              "flash_attention": settings.flash_attention, "stages": []}
    for st in stages:
        gpu, cap = _tightest_gpu(wl, graph, placement, st.stage, builder.pl, settings)
        row = st.as_dict() | {"gpu": gpu, "capacity_bytes": cap,
                               "fits": None if cap is None else st.total <= cap}
        report["stages"].append(row)
        if cap is not None and st.total > cap and not allow_oom:
            raise InputError(
                f"stage {st.stage} does not fit in GPU memory: needs {_binary(st.total)} "
                f"(states {_binary(st.states.total)}, activations {_binary(st.activations)}) "
                f"of {_binary(cap)}", source=wl.source, where=f"GPU {gpu}",
                accepted="ZeRO (parallelism.zero_stage), recomputation, more tp/pp, a larger "
                         "memory.capacity_bytes, or --allow-oom")
    report["peak_bytes"] = max((r["total_bytes"] for r in report["stages"]), default=0)
    return report


def _binary(nbytes: float) -> str:
    """A size in the largest binary unit it reaches, one decimal (never "0.0 GiB" for a small one).

    >>> _binary(43.2 * 2**30), _binary(1000), _binary(3 * 2**20)
    ('43.2 GiB', '1000 B', '3.0 MiB')
    """
    for unit, m in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= m:
            return f"{nbytes / m:.1f} {unit}"
    return f"{nbytes:.0f} B"
