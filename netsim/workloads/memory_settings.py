"""The workload's ``memory:`` section and GPU capacities, for :mod:`netsim.workloads.memory`.

Modelled: the named accountings of bytes per parameter (which one a run uses
follows ``training.precision`` unless ``memory.accounting`` names one that
matches it), the recomputation modes of the activation accounting, and where a
GPU's capacity comes from (the workload's ``memory.capacity_bytes``, the
topology node's ``memory_bytes``, the GPU preset's HBM).

Left out: precisions other than fp16/bf16/fp32 (fp8 training keeps 16-bit or
fp32 masters in ways frameworks differ on), optimizers other than Adam.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

#: bytes per parameter (weights, gradients, optimizer states) of each named accounting
ACCOUNTINGS: dict[str, tuple[int, int, int]] = {
    "zero_mixed_precision": (2, 2, 12),   # ZeRO (Rajbhandari et al., SC'20) §3.1: 16 bytes/parameter
    "megatron_fp32_grad": (2, 4, 12),     # Megatron-LM distributed optimizer: 18 bytes/parameter
    "fp32_adam": (4, 4, 8),               # fp32 training: fp32 weights, gradients, Adam m and v; no master copy
}
#: the accountings each ``training.precision`` may use; the first is its default
PRECISION_ACCOUNTINGS: dict[str, tuple[str, ...]] = {
    "fp16": ("zero_mixed_precision", "megatron_fp32_grad"),
    "bf16": ("zero_mixed_precision", "megatron_fp32_grad"),
    "fp32": ("fp32_adam",),
}
RECOMPUTE_MODES = ("none", "selective", "full")

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


def _capacity(sec: dict, source: str) -> int | None:
    """``memory.capacity_bytes`` as exact integer bytes, or ``None`` when absent."""
    from ..params import MAX_EXACT, parse_exact_size
    cap = sec.get("capacity_bytes")
    if cap is None:
        return None
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
    return cap


def _accounting(sec: dict, precision: str, source: str) -> str:
    """``memory.accounting``: the precision's default, or a named one that matches ``precision``."""
    allowed = PRECISION_ACCOUNTINGS.get(precision, PRECISION_ACCOUNTINGS["fp16"])
    acc = sec.get("accounting", allowed[0])
    if acc not in ACCOUNTINGS:
        raise InputError("unknown memory accounting", source=source, where="memory.accounting", value=acc,
                         accepted=", ".join(ACCOUNTINGS))
    if acc not in allowed:
        raise InputError(f"does not match training.precision {precision}", source=source,
                         where="memory.accounting", value=acc,
                         accepted=f"{', '.join(allowed)} under {precision} (or omit it for {allowed[0]})")
    return acc


def memory_settings(raw: dict, recompute_flag: bool, source: str, precision: str = "fp16") -> MemorySettings:
    """Validate the ``memory:`` section of a workload file (``raw`` is the file's dict)."""
    sec = raw.get("memory") or {}
    if not isinstance(sec, dict):
        raise InputError("must be a mapping", source=source, where="memory", value=type(sec).__name__,
                         accepted=", ".join(MEMORY_KEYS))
    for k in sec:
        if k not in MEMORY_KEYS:
            raise InputError("unknown field", source=source, where=f"memory.{k}", value=k,
                             accepted=", ".join(MEMORY_KEYS))
    cap = _capacity(sec, source)
    acc = _accounting(sec, precision, source)
    flash = sec.get("flash_attention", False)
    if not isinstance(flash, bool):
        raise InputError("must be true or false", source=source, where="memory.flash_attention", value=flash)
    rec = sec.get("recompute", "full" if recompute_flag else "none")
    if rec not in RECOMPUTE_MODES:
        raise InputError("unknown recomputation mode", source=source, where="memory.recompute", value=rec,
                         accepted=", ".join(RECOMPUTE_MODES))
    return MemorySettings(cap, acc, flash, rec)


def gpu_capacity_bytes(wl, graph, gpu_node, settings: MemorySettings) -> int | None:
    """The memory of ``gpu_node``: the workload's ``memory.capacity_bytes``, else the node's
    ``memory_bytes`` attribute, else the GPU preset's; ``None`` when none is known."""
    if settings.capacity_bytes is not None:
        return settings.capacity_bytes
    attr = graph.nodes[gpu_node].get("memory_bytes") if graph is not None else None
    if attr is not None:
        return int(attr)
    return GPU_MEMORY_BYTES.get(str(wl.gpu).lower())
