"""Workloads: model + training + parallelism + placement → per-iteration operation graphs.

* :func:`load_workload` reads and validates a workload (YAML file or dict);
* :func:`place` maps ranks to the GPUs of a topology;
* :class:`OpGraphBuilder` generates each iteration's :class:`Op` DAG.

See docs/workloads.md for the file format.
"""
from .generate import OpGraphBuilder, ddp_buckets
from .gpus import GPUS, gpu_preset
from .ops import Op
from .placement import Placement, place
from .reader import load_workload
from .schema import CollectiveSpec, Workload
from .transformer import TRANSFORMER_PRESETS, TransformerModel
from .cnn import CNN_PRESETS

__all__ = ["CNN_PRESETS", "CollectiveSpec", "GPUS", "Op", "OpGraphBuilder", "Placement", "TRANSFORMER_PRESETS",
           "TransformerModel", "Workload", "ddp_buckets", "gpu_preset", "load_workload", "place"]
