"""ZeRO (DeepSpeed) stages 1–3 and Megatron sequence parallelism as collective plans.

What is modelled (Rajbhandari et al., SC'20 "ZeRO"; Korthikanti et al. 2022
"Reducing Activation Recomputation" for sequence parallelism):

* stage 0 (plain DDP): one all-reduce per gradient bucket, launched as soon as
  backward has produced the bucket;
* stages 1 and 2: the bucket's all-reduce becomes a **reduce-scatter** (each
  rank keeps the reduced shard of the gradients it owns), the optimizer runs
  on the rank's 1/d shard, and an **all-gather** of the updated parameters
  follows the optimizer step (bucketed the same way).  Same bytes as the
  all-reduce: 2·(d−1)/d·S per rank;
* stage 3: parameters are partitioned too, so every layer's parameters are
  all-gathered before its forward and again before its backward (per
  micro-batch: they are freed in between), and gradients are reduce-scattered
  per bucket; no post-step all-gather.  Per rank: 3·(d−1)/d·S ≈ 1.5× DDP;
* sequence parallelism (needs tp > 1): each TP all-reduce of ``S`` bytes
  (b·s·h values) becomes a reduce-scatter of ``S`` followed by an all-gather
  of ``S`` — same ring bytes, 2 collectives.

Left out: ZeRO's per-micro-step gradient reduction under gradient
accumulation (we reduce once, at the last micro-batch, as DDP's ``no_sync``),
prefetching/overlap knobs of stage 3 (the all-gather of a layer may start as
soon as the stream allows), ZeRO-Offload/Infinity, and the memory side.

Sizes follow the nccl-tests convention of :mod:`netsim.collectives`: an
all-reduce's size is the per-rank buffer ``S``; a reduce-scatter's the input
per rank (``S``); an all-gather's the output per rank (``S``).

>>> [c for c, _ in dp_plan(1, [1000, 500])["backward"]]
['reducescatter', 'reducescatter']
>>> dp_bytes_per_rank(3, 1200, 4) / dp_bytes_per_rank(0, 1200, 4)
1.5
"""
from __future__ import annotations

from ..errors import WorkloadError

STAGES = (0, 1, 2, 3)


def check_stage(stage, *, source: str | None = None, where: str = "field zero.stage") -> int:
    """Validate a ZeRO stage (0–3) or raise a one-line :class:`WorkloadError`."""
    if isinstance(stage, bool) or not isinstance(stage, int) or stage not in STAGES:
        raise WorkloadError("unknown ZeRO stage", source=source, where=where, value=stage, accepted="0, 1, 2 or 3")
    return stage


def dp_plan(stage: int, bucket_sizes: list[int]) -> dict[str, list[tuple[str, int]]]:
    """The DP collectives of one iteration for each bucket (in bucket order).

    Returns
    -------
    dict
        ``backward``: (collective, size) launched when the bucket's gradients
        are ready; ``after_optimizer``: (collective, size) launched after the
        rank's optimizer step (stages 1–2: parameter all-gather).
    """
    check_stage(stage)
    if stage == 0:
        return {"backward": [("allreduce", s) for s in bucket_sizes], "after_optimizer": []}
    back = [("reducescatter", s) for s in bucket_sizes]
    after = [("allgather", s) for s in bucket_sizes] if stage in (1, 2) else []
    return {"backward": back, "after_optimizer": after}


def layer_gathers(stage: int, layer_param_bytes: int) -> dict[str, int]:
    """Stage 3's per-layer parameter all-gathers: {``forward``: S, ``backward``: S} (else {})."""
    check_stage(stage)
    if stage != 3 or layer_param_bytes <= 0:
        return {}
    return {"forward": layer_param_bytes, "backward": layer_param_bytes}


def optimizer_fraction(stage: int, d: int) -> float:
    """Share of the parameters a rank's optimizer step updates: 1/d for stages 1–3 (sharded states)."""
    check_stage(stage)
    return 1.0 if stage == 0 or d <= 1 else 1.0 / d


def dp_bytes_per_rank(stage: int, grad_bytes: int, d: int, micro_batches: int = 1) -> float:
    """Ring bytes a rank sends for DP/ZeRO per iteration (closed form, the test oracle).

    all-reduce 2(d−1)/d·S; reduce-scatter and all-gather (d−1)/d·S each;
    stage 3: one reduce-scatter plus 2 all-gathers per micro-batch.
    """
    check_stage(stage)
    f = (d - 1) / d
    if stage == 0:
        return 2 * f * grad_bytes
    if stage in (1, 2):
        return 2 * f * grad_bytes
    return f * grad_bytes * (1 + 2 * micro_batches)


def sp_tp_collectives(size_bytes: int) -> list[tuple[str, int]]:
    """Sequence parallelism: a TP all-reduce of ``size_bytes`` → reduce-scatter then all-gather.

    >>> sp_tp_collectives(4096)
    [('reducescatter', 4096), ('allgather', 4096)]
    """
    return [("reducescatter", size_bytes), ("allgather", size_bytes)]
