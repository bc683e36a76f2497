"""GPU presets: peak FLOP/s per precision, fitted utilization μ and HBM bandwidth.

Compute time of a piece of work is ``flops / (peak_flops · μ)`` (APNet'24's
model).  Peaks are the vendors' dense (non-sparse) tensor-core figures for
fp16/bf16 and the plain FP32 figure for fp32.  μ is APNet'24's fit for RTX3090
(0.3) and V100 (0.4); for A100/H100 it is the model-FLOPs utilization that
large-scale training reports (sources per preset).  Left out: clock boost,
thermal throttling, kernel launch overheads, memory-bound layers (all folded
into μ) — give a table of measured per-layer times to replace the formula.

>>> GPUS["v100-pcie"].peak_flops("fp16")
112000000000000.0
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuPreset:
    """One GPU model.

    Attributes
    ----------
    name : str
    peak_fp16_flops, peak_bf16_flops, peak_fp32_flops : float
        Dense peak FLOP/s per precision (0 = not supported by the hardware).
    utilization : float
        Default μ, the fraction of the peak reached on transformer/CNN layers.
    mem_bw_Bps : float
        HBM/GDDR bandwidth in bytes per second (drives the optimizer-step time).
    source : str
        Where the figures come from.
    """

    name: str
    peak_fp16_flops: float
    peak_bf16_flops: float
    peak_fp32_flops: float
    utilization: float
    mem_bw_Bps: float
    source: str

    def peak_flops(self, precision: str) -> float:
        """Peak FLOP/s for ``precision`` (fp16, bf16 or fp32); 0 if unsupported."""
        return {"fp16": self.peak_fp16_flops, "bf16": self.peak_bf16_flops,
                "fp32": self.peak_fp32_flops}[precision]


_T = 1e12
GPUS: dict[str, GpuPreset] = {g.name: g for g in (
    GpuPreset("rtx3090", 71 * _T, 71 * _T, 35.6 * _T, 0.3, 936e9,
              "NVIDIA Ampere GA102 whitepaper (RTX 3090: 71 TFLOP/s dense fp16/bf16 tensor with fp32 "
              "accumulate, 35.6 TFLOP/s fp32, 936 GB/s); μ=0.3 fitted by APNet'24"),
    GpuPreset("v100-pcie", 112 * _T, 0.0, 14 * _T, 0.4, 900e9,
              "NVIDIA V100 datasheet (PCIe: 112 TFLOP/s tensor fp16, 14 TFLOP/s fp32, 900 GB/s); "
              "μ=0.4 fitted by APNet'24"),
    GpuPreset("v100-sxm2", 125 * _T, 0.0, 15.7 * _T, 0.4, 900e9,
              "NVIDIA V100 datasheet (SXM2/NVLink: 125 TFLOP/s tensor fp16, 15.7 TFLOP/s fp32, "
              "900 GB/s); μ=0.4 fitted by APNet'24"),
    GpuPreset("a100", 312 * _T, 312 * _T, 19.5 * _T, 0.5, 2039e9,
              "NVIDIA A100 datasheet (SXM 80GB: 312 TFLOP/s dense fp16/bf16, 19.5 fp32, 2039 GB/s); "
              "μ=0.5 ≈ the 44-52 % of peak Megatron-LM reaches (Narayanan et al., SC'21)"),
    GpuPreset("h100", 989 * _T, 989 * _T, 67 * _T, 0.4, 3350e9,
              "NVIDIA H100 datasheet (SXM: 989 TFLOP/s dense fp16/bf16, 67 fp32, 3.35 TB/s); "
              "μ=0.4 ≈ the 38-43 % BF16 MFU of Llama 3 pre-training (Dubey et al., 2024)"),
)}
#: other names accepted for the presets
GPU_ALIASES = {"v100-nvlink": "v100-sxm2", "v100": "v100-sxm2", "3090": "rtx3090",
               "a100-sxm": "a100", "h100-sxm": "h100"}


def gpu_preset(name: str) -> GpuPreset | None:
    """The preset called ``name`` (aliases accepted), or ``None``."""
    key = str(name).strip().lower()
    return GPUS.get(GPU_ALIASES.get(key, key))
