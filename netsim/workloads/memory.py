"""GPU memory per pipeline stage: model states (with ZeRO) and activations (Korthikanti et al.).

Modelled, per GPU of stage ``s`` (bytes):

* **Model states** of the Ψ parameters the GPU holds, under a named
  accounting of bytes per parameter (weights, gradients, optimizer):

  - ``zero_mixed_precision`` — Rajbhandari et al., ZeRO (SC'20) §3.1: fp16
    weights 2Ψ + fp16 gradients 2Ψ + Adam's fp32 master weights, momentum and
    variance 12Ψ = 16Ψ;
  - ``megatron_fp32_grad`` — Megatron-LM's distributed-optimizer accounting:
    bf16 weights 2Ψ + fp32 gradient accumulation 4Ψ + 12Ψ = 18Ψ.

  ZeRO partitions them over the ``dp`` data-parallel ranks: stage 1 the
  optimizer states, stage 2 also the gradients, stage 3 also the weights.
* **Activations** per transformer layer and micro-batch, Korthikanti et al.,
  "Reducing Activation Recomputation in Large Transformer Models" (MLSys'23),
  Table 2, with ``s`` sequence, ``b`` micro-batch, ``h`` hidden, ``a`` heads, ``t``
  tensor-parallel ranks (16-bit activations)::

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

#: bytes per parameter (weights, gradients, optimizer states) of each named accounting
ACCOUNTINGS: dict[str, tuple[int, int, int]] = {
    "zero_mixed_precision": (2, 2, 12),   # ZeRO (Rajbhandari et al., SC'20) §3.1
    "megatron_fp32_grad": (2, 4, 12),     # Megatron-LM distributed optimizer: 18 bytes/parameter
}
RECOMPUTE_MODES = ("none", "selective", "full")


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
                      accounting: str = "zero_mixed_precision") -> StateBytes:
    """Weights, gradients and optimizer bytes of ``params`` parameters on one GPU.

    >>> model_state_bytes(1_000, zero_stage=0).total, model_state_bytes(1_000, zero_stage=3, dp=8).total
    (16000, 2000.0)
    """
    if accounting not in ACCOUNTINGS:
        raise InputError("unknown memory accounting", where="memory.accounting", value=accounting,
                         accepted=", ".join(ACCOUNTINGS))
    if zero_stage not in (0, 1, 2, 3):
        raise InputError("ZeRO stage must be 0, 1, 2 or 3", where="parallelism.zero_stage", value=zero_stage)
    w, g, o = (k * params for k in ACCOUNTINGS[accounting])
    if zero_stage >= 1:
        o = o / dp
    if zero_stage >= 2:
        g = g / dp
    if zero_stage >= 3:
        w = w / dp
    return StateBytes(w, g, o)


def activation_bytes_per_layer(*, seq: int, micro_batch: int, hidden: int, heads: int, tp: int = 1,
                               sp: bool = False, recompute: str = "none", flash_attention: bool = False) -> float:
    """Activation bytes one transformer layer keeps per micro-batch (Korthikanti et al., Table 2)."""
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


#: HBM capacity of each GPU preset, bytes (vendors' datasheets; GB there means GiB of HBM)
GPU_MEMORY_BYTES: dict[str, int] = {
    "rtx3090": 24 * 2**30,    # NVIDIA GeForce RTX 3090: 24 GB GDDR6X
    "v100-pcie": 32 * 2**30,  # NVIDIA V100 datasheet: 16 or 32 GB HBM2 (the 32 GB part)
    "v100-sxm2": 32 * 2**30,
    "a100": 80 * 2**30,       # NVIDIA A100 80GB datasheet
    "h100": 80 * 2**30,       # NVIDIA H100 SXM datasheet: 80 GB HBM3
}
MEMORY_KEYS = ("capacity_bytes", "accounting", "flash_attention", "recompute")


@dataclass(frozen=True)
class MemorySettings:
    """The workload's ``memory:`` section, validated (defaults named and sourced in docs/workloads.md)."""

    capacity_bytes: int | None
    accounting: str
    flash_attention: bool
    recompute: str


def memory_settings(raw: dict, recompute_flag: bool, source: str) -> MemorySettings:
    """Validate the ``memory:`` section of a workload file (``raw`` is the file's dict)."""
    from ..params import MAX_EXACT, parse_exact_size
    sec = raw.get("memory") or {}
    if not isinstance(sec, dict):
        raise InputError("must be a mapping", source=source, where="memory", value=type(sec).__name__,
                         accepted=", ".join(MEMORY_KEYS))
    for k in sec:
        if k not in MEMORY_KEYS:
            raise InputError("unknown field", source=source, where=f"memory.{k}", value=k,
                             accepted=", ".join(MEMORY_KEYS))
    cap = sec.get("capacity_bytes")
    if cap is not None:
        if isinstance(cap, bool):
            raise InputError("not a size", source=source, where="memory.capacity_bytes", value=cap,
                             accepted="a size such as 80GiB or 16GB")
        try:
            cap = parse_exact_size(cap)   # exact integer bytes (netsim.params), never rounded
            if cap > MAX_EXACT:
                raise ValueError("too large")
        except (InputError, TypeError, ValueError, OverflowError):
            raise InputError("not a size", source=source, where="memory.capacity_bytes", value=sec.get("capacity_bytes"),
                             accepted="a size such as 80GiB or 16GB") from None
        if cap <= 0:
            raise InputError("must be > 0", source=source, where="memory.capacity_bytes", value=cap)
    acc = sec.get("accounting", "zero_mixed_precision")
    if acc not in ACCOUNTINGS:
        raise InputError("unknown memory accounting", source=source, where="memory.accounting", value=acc,
                         accepted=", ".join(ACCOUNTINGS))
    flash = sec.get("flash_attention", False)
    if not isinstance(flash, bool):
        raise InputError("must be true or false", source=source, where="memory.flash_attention", value=flash)
    rec = sec.get("recompute", "full" if recompute_flag else "none")
    if rec not in RECOMPUTE_MODES:
        raise InputError("unknown recomputation mode", source=source, where="memory.recompute", value=rec,
                         accepted=", ".join(RECOMPUTE_MODES))
    return MemorySettings(cap, acc, flash, rec)


def stage_memory(wl, builder, settings: MemorySettings) -> list[StageMemory]:
    """Peak memory of one GPU of every pipeline stage of ``wl`` (``builder`` gives the stages' parameters)."""
    from .transformer import TransformerModel
    pl = builder.pl
    out = []
    for s in range(wl.pp):
        ranks = [r for r in range(wl.world_size) if pl.stage(r) == s]
        params = max(builder.rank_params(r) for r in ranks)
        states = model_state_bytes(params, zero_stage=wl.zero_stage, dp=wl.dp * getattr(wl, "cp", 1),
                                   accounting=settings.accounting)      # ZeRO shards over DP×CP
        layers = sum(1 for layer in builder.stage_layers[s] if layer.role == "body")
        act = work = 0.0
        inflight = micro_batches_in_flight(wl.schedule, s, wl.pp, wl.micro_batches,
                                           virtual_stages=getattr(wl, "virtual_stages", 1),
                                           actions=getattr(wl, "schedule_actions", None))
        if isinstance(wl.model, TransformerModel) and layers:
            m = wl.model
            dims = dict(seq=m.seq_len, micro_batch=wl.micro_batch, hidden=m.hidden, heads=m.heads, tp=wl.tp,
                        sp=wl.sequence_parallel, flash_attention=settings.flash_attention)
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


def gpu_capacity_bytes(wl, graph, gpu_node, settings: MemorySettings) -> int | None:
    """The memory of ``gpu_node``: the workload's ``memory.capacity_bytes``, else the node's
    ``memory_bytes`` attribute, else the GPU preset's; ``None`` when none is known."""
    if settings.capacity_bytes is not None:
        return settings.capacity_bytes
    attr = graph.nodes[gpu_node].get("memory_bytes") if graph is not None else None
    if attr is not None:
        return int(attr)
    return GPU_MEMORY_BYTES.get(str(wl.gpu).lower())


def check_memory(wl, builder, placement, graph, *, allow_oom: bool = False) -> dict:
    """Per-stage peaks for ``summary.json``; an :class:`InputError` when a stage does not fit (unless ``allow_oom``)."""
    settings = memory_settings(wl.raw or {}, wl.recompute, wl.source)
    stages = stage_memory(wl, builder, settings)
    report = {"accounting": settings.accounting, "recompute": settings.recompute,
              "flash_attention": settings.flash_attention, "stages": []}
    for st in stages:
        rank = next(r for r in range(wl.world_size) if builder.pl.stage(r) == st.stage)
        gpu = placement.gpu_of[rank]
        cap = gpu_capacity_bytes(wl, graph, gpu, settings)
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
