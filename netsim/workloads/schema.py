"""The workload description: the validated records a workload file becomes.

Models *what* is trained and *how it is split* (:class:`Workload`: model,
batch, precision, dp/tp/pp/cp/ep degrees, pipeline schedule, placement order,
per-group :class:`CollectiveSpec`, GPU compute rates, what-if and compute
variability), and the value sets the reader accepts (:data:`ALGORITHMS`,
:data:`PROTOCOLS`, :data:`GROUP_KINDS`, :data:`BYTES`).  Leaves out any
topology: the placement maps ranks onto whatever graph the workload is run on
(:mod:`.placement`).  Reading and validating a file is :mod:`.reader`
(:func:`~netsim.workloads.reader.load_workload`) with the sections assembled
by :mod:`.build`; docs/workloads.md lists every field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .layers import Layer
from .transformer import TransformerModel

ALGORITHMS = ("ring", "tree", "halving_doubling", "hierarchical", "auto", "nvls", "collnet")
PROTOCOLS = ("auto", "ll", "ll128", "simple")
GROUP_KINDS = ("tp", "dp", "pp", "ep")
BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}
#: smallest collectives.*.chunk_bytes: one 4 KiB page (netsim choice: smaller chunks add one
#: simulated transfer per chunk, so a 25 MiB bucket in 1-byte chunks is 2.6e7 transfers per step
#: and never finishes in practice; NCCL's own chunks are 128 KiB-512 KiB, NCCL_BUFFSIZE / NCCL_STEPS)
MIN_CHUNK_BYTES = 4096


@dataclass(frozen=True)
class CollectiveSpec:
    """How one group kind runs its collectives."""

    algorithm: str = "ring"
    channels: int = 1
    chunk_bytes: int | None = None
    protocol: str = "simple"
    #: ``"off"``, ``"nccl"`` or a :class:`netsim.collectives.SwLatency`
    sw_latency: Any = "off"


@dataclass(frozen=True)
class Workload:
    """A validated workload.  Sizes in bytes, times in ns, rates in FLOP/s."""

    name: str
    source: str
    model: Any                       # TransformerModel | CnnModel
    global_batch: int
    micro_batch: int
    precision: str
    recompute: bool
    grad_bytes: int
    dp: int
    tp: int
    pp: int
    schedule: str
    partition: tuple | str | None       # None = even, a tuple, or "balanced" (resolved on a topology)
    scatter_gather: bool
    overlap_p2p: bool
    bucket_bytes: int
    first_bucket_bytes: int
    order: tuple
    gpus: tuple | None
    nic: str
    collectives: dict
    gpu: str
    peak_flops: float
    utilization: float
    mem_bw_Bps: float
    layer_times_ms: dict | None
    optimizer_ns: int | None         # None = derived from parameters and memory bandwidth
    optimizer_bytes_per_param: float
    raw: dict = field(default_factory=dict, compare=False, repr=False)
    ep: int = 1
    zero_stage: int = 0
    sequence_parallel: bool = False
    whatif: Any = None                                  # netsim.whatif.WhatIf from the file's whatif: section
    virtual_stages: int = 1                             # model chunks per pipeline device (interleaved 1F1B)
    schedule_actions: tuple | None = None               # schedule: custom — Actions per stage (schedule_check)
    variability: Any = None                             # netsim.workloads.variability.Variability (None = off)
    overlap_slowdown: float = 0.0                       # overlap.slowdown f (0 = overlap for free)
    overlap_comm_slowdown: float = 0.0                  # overlap.comm_slowdown g (0 = comm at network speed)
    cp: int = 1                                         # context-parallel degree (ring attention)
    vocab_parallel: bool = False                        # vocabulary-parallel embedding/loss collectives over TP
    embedding_grad_allreduce: bool = False              # tied-embedding grad all-reduce, first <-> last stage

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def micro_batches(self) -> int:
        """m: micro-batches per iteration per pipeline."""
        return self.global_batch // (self.micro_batch * self.dp)

    @property
    def act_bytes(self) -> int:
        return BYTES[self.precision]

    @property
    def is_transformer(self) -> bool:
        return isinstance(self.model, TransformerModel)

    def layers(self) -> list[Layer]:
        return self.model.build_layers(self.tp, self.pp, self.ep)

    def stage_layer_counts(self) -> tuple:
        n = self.model.layers
        if self.partition in ("balanced", "speed_balanced"):
            raise ValueError(f"partition {self.partition!r} must be resolved on a topology first "
                             "(netsim.workloads.placement.resolve_partition)")
        return self.partition or tuple([n // self.pp] * self.pp)
