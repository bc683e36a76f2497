"""The workload description: dataclasses and the validated YAML/dict reader.

A workload says *what* is trained and *how it is split*, never on which
topology: the placement maps ranks onto the first dp·tp·pp GPUs of whatever
graph it is run on (or onto an explicit list of GPU names).  See
docs/workloads.md for every field.  Every problem is a one-line
:class:`~netsim.errors.WorkloadError` naming the file, the line and dotted
field, the bad value and what is accepted.

>>> w = load_workload({"model": "gpt-1.5b", "training": {"global_batch": 16, "micro_batch": 2},
...                    "parallelism": {"dp": 2, "tp": 2, "pp": 4}})
>>> w.micro_batches, w.world_size
(4, 16)
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..collectives.protocol import parse_sw_latency
from ..errors import WorkloadError
from ..yamlio import UniqueKeyLoader
from .fields import Fields, SECTIONS, set_dotted
from .gpus import GPUS, gpu_preset
from .layers import Layer
from .modelspec import parse_model
from .parallel_fields import context_embedding_fields
from .pipeline_fields import pipeline_schedule
from .section_fields import AXES, MAX_LAYER_MS, PLACEMENTS, layer_times_field, order_field, partition_field  # noqa: F401
from .schedules import SCHEDULES
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


# ----------------------------------------------------------------------------------------------
def _read(spec, source: str | None) -> tuple[dict, str, dict]:
    """Return (document, source name, line map) from a path, YAML text or dict."""
    if isinstance(spec, dict):
        return copy.deepcopy(spec), source or "<workload>", {}
    path = os.fspath(spec)
    if not os.path.exists(path):
        raise WorkloadError("workload file not found", source=path, accepted="a YAML workload file (see workloads/)")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise WorkloadError("not a text (UTF-8) file", source=path,
                            accepted="a YAML workload file (see workloads/)") from None
    from ..yamlio import load_yaml
    doc, node = load_yaml(text, path, error=WorkloadError, compose=True)  # one line for bad or too-deep YAML
    if not isinstance(doc, dict):
        raise WorkloadError("a workload file must be a mapping", source=path, value=type(doc).__name__,
                            accepted="keys " + ", ".join(SECTIONS))
    return doc, path, _line_map(node)


def _line_map(node, prefix: str = "", out: dict | None = None) -> dict:
    out = {} if out is None else out
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = f"{prefix}.{k.value}" if prefix else str(k.value)
            out[key] = k.start_mark.line + 1
            _line_map(v, key, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            out[f"{prefix}[{i}]"] = v.start_mark.line + 1
            _line_map(v, f"{prefix}[{i}]", out)
    return out


def load_workload(spec, *, overrides: dict | list | None = None, source: str | None = None) -> Workload:
    """Read and validate a workload.

    Parameters
    ----------
    spec : str | os.PathLike | dict | Workload
        A YAML file, or the same content as a dict (a Workload is returned as is
        unless there are overrides).
    overrides : dict or list of (dotted field, value)
        ``--workload-set`` assignments, e.g. ``{"parallelism.dp": 4}``; string
        values are parsed as YAML scalars.
    """
    if isinstance(spec, Workload):
        if not overrides:
            return spec
        spec, source = spec.raw, source or spec.source
    doc, src, lines = _read(spec, source)
    items = list(overrides.items() if isinstance(overrides, dict) else (overrides or []))
    for key, value in items:
        if isinstance(value, str):
            try:
                value = yaml.load(value, Loader=UniqueKeyLoader)   # 1e12 is a number, as in files
            except yaml.YAMLError:
                pass
        set_dotted(doc, key, value, source=src)
    f = Fields(doc, src, lines, overridden=[".".join(p for p in str(k).split(".") if p) for k, _ in items])
    return _build(f, doc)


def _build(f: Fields, doc: dict) -> Workload:
    f.check_keys("", doc, SECTIONS)
    name = str(doc.get("name") or (os.path.splitext(os.path.basename(f.source))[0] if f.source != "<workload>" else "workload"))
    model = parse_model(f, doc.get("model"))
    tr = f.section(doc, "training")
    par = f.section(doc, "parallelism")
    plc = f.section(doc, "placement")
    col = f.section(doc, "collectives")
    cmp_ = f.section(doc, "compute")

    gb = f.pos_int(tr, "training.global_batch", required=True)
    mb = f.pos_int(tr, "training.micro_batch", default=1)
    precision = f.choice(tr, "training.precision", tuple(BYTES), "fp16")
    recompute = f.boolean(tr, "training.recompute", default=model.family == "gpt")
    grad_bytes = tr.get("grad_bytes", "auto")
    if grad_bytes in (None, "auto"):
        grad_bytes = BYTES[precision]
    else:
        grad_bytes = f.pos_int(tr, "training.grad_bytes")

    dp = f.pos_int(par, "parallelism.dp", default=1)
    tp = f.pos_int(par, "parallelism.tp", default=1)
    pp = f.pos_int(par, "parallelism.pp", default=1)
    schedule = f.choice(par, "parallelism.schedule", SCHEDULES, "1f1b")
    scatter_gather = f.boolean(par, "parallelism.scatter_gather", default=False)
    overlap_p2p = f.boolean(par, "parallelism.overlap_p2p", default=False)
    bucket = f.size(par, "parallelism.bucket_bytes", 25 * 2**20)
    first_bucket = f.size(par, "parallelism.first_bucket_bytes", 2**20)
    partition = partition_field(f, par, model, pp)
    ep = f.pos_int(par, "parallelism.ep", default=1)
    zero = par.get("zero_stage", 0)
    if zero not in (0, 1, 2, 3) or isinstance(zero, bool):
        f.fail("parallelism.zero_stage", "unknown ZeRO stage", zero, "0 (plain DDP), 1, 2 or 3")
    sp = f.boolean(par, "parallelism.sequence_parallel", default=False)
    if sp and tp == 1:
        f.fail("parallelism.sequence_parallel", "sequence parallelism needs tp > 1", sp, "tp >= 2 or false")
    moe = getattr(model, "moe", None)
    if ep > 1 and moe is None:
        f.fail("parallelism.ep", "expert parallelism needs an MoE model", ep, "model.moe, or ep: 1")
    if moe is not None:
        if dp % ep:
            f.fail("parallelism.ep", f"ep does not divide dp = {dp}", ep, f"a divisor of {dp}")
        if moe.experts % ep:
            f.fail("parallelism.ep", f"ep does not divide the {moe.experts} experts", ep,
                   f"a divisor of {moe.experts}")
    if gb % (mb * dp):
        f.fail("parallelism.dp" if "dp" in par else "training.global_batch",
               f"global batch {gb} is not divisible by micro_batch × dp = {mb}×{dp}", gb,
               "a global_batch that is a multiple of micro_batch·dp")
    if tp > 1:
        if not isinstance(model, TransformerModel):
            f.fail("parallelism.tp", "tensor parallelism needs a transformer model", tp, "tp: 1 for CNN/layer-list models")
        for what, n in (("heads", model.heads), ("ffn_hidden", model.ffn)):
            if n % tp:
                f.fail("parallelism.tp", f"model {what} = {n} is not divisible by tp", tp, f"a divisor of {n}")

    m = gb // (mb * dp)
    vstages, actions = pipeline_schedule(f, par, schedule, model, pp, m, moe is not None)
    split = schedule == "zb_h1" or (actions is not None and any(a.kind == "W" for o in actions for a in o))
    ce = context_embedding_fields(f, par, model, tp=tp, pp=pp, schedule=schedule, split_backward=split)
    world = dp * tp * pp * ce.cp
    order = order_field(f, plc)
    gpus = plc.get("gpus")
    if gpus is not None:
        if not isinstance(gpus, list) or not all(isinstance(g, str) for g in gpus):
            f.fail("placement.gpus", "must be a list of GPU node names", gpus, "e.g. [s0.gpu0, s0.gpu1]")
        if len(gpus) != world:
            axes = f"dp·tp·pp = {dp}·{tp}·{pp}" if ce.cp == 1 else f"dp·tp·pp·cp = {dp}·{tp}·{pp}·{ce.cp}"
            f.fail("placement.gpus", f"{axes} = {world} but {len(gpus)} GPUs are placed", len(gpus),
                   f"exactly {world} GPU names")
        if len(set(gpus)) != len(gpus):
            f.fail("placement.gpus", "a GPU is listed twice", gpus, "distinct GPU names")
        gpus = tuple(gpus)
    nic = f.choice(plc, "placement.nic", ("nearest", "nic_aware"), "nearest")
    if nic == "nic_aware" and gpus is not None:
        f.fail("placement.nic", "nic_aware chooses the GPUs itself; drop placement.gpus", nic, "nearest")

    collectives = {}
    f.check_keys("collectives", col, GROUP_KINDS)
    for kind in GROUP_KINDS:
        c = col.get(kind) or {}
        if not isinstance(c, dict):
            f.fail(f"collectives.{kind}", "must be a mapping", c, "keys algorithm, channels, chunk_bytes, protocol, sw_latency")
        f.check_keys(f"collectives.{kind}", c, ("algorithm", "channels", "chunk_bytes", "protocol", "sw_latency"))
        algo = f.choice(c, f"collectives.{kind}.algorithm", ALGORITHMS, "ring")
        proto = f.choice(c, f"collectives.{kind}.protocol", PROTOCOLS, "auto" if algo == "auto" else "simple")
        swl = parse_sw_latency(c.get("sw_latency"), "nccl" if algo == "auto" else "off",
                               lambda sub, msg, v, acc, k=kind: f.fail(f"collectives.{k}.sw_latency{sub}", msg, v, acc))
        ch = f.pos_int(c, f"collectives.{kind}.channels", default=1)
        chunk = c.get("chunk_bytes")
        chunk = None if chunk in (None, "auto") else f.size(c, f"collectives.{kind}.chunk_bytes", None)
        if chunk is not None and chunk < MIN_CHUNK_BYTES:
            f.fail(f"collectives.{kind}.chunk_bytes", "chunk too small", c.get("chunk_bytes"),
                   f"a size >= {MIN_CHUNK_BYTES} bytes such as 512KiB, or auto")
        collectives[kind] = CollectiveSpec(algo, ch, chunk, proto, swl)

    gpu_name = str(cmp_.get("gpu", "v100-sxm2"))
    preset = gpu_preset(gpu_name)
    if preset is None:
        f.fail("compute.gpu", "unknown GPU preset", gpu_name, "one of " + ", ".join(GPUS), suggest=list(GPUS))
    peak = f.flops(cmp_, "compute.peak_flops", preset.peak_flops(precision))
    if peak <= 0:
        f.fail("training.precision", f"GPU {preset.name} has no {precision} peak", precision,
               "another precision or compute.peak_flops")
    util = f.fraction(cmp_, "compute.utilization", preset.utilization)
    mem_bw = float(preset.mem_bw_Bps)
    layer_times = layer_times_field(f, cmp_, model)
    opt = cmp_.get("optimizer", "auto")
    optimizer_ns = None
    if opt in ("none", None, False, 0):
        optimizer_ns = 0
    elif opt != "auto":
        optimizer_ns = f.duration(cmp_, "compute.optimizer")
    opt_bpp = f.number(cmp_, "compute.optimizer_bytes_per_param", 32.0)

    whatif = None
    if doc.get("whatif") is not None:
        from ..whatif import WhatIf
        whatif = WhatIf.from_doc(doc["whatif"], source=f.source, where=lambda k: f.where(k))
    # variability: / overlap: sections (netsim.workloads.variability; both off when absent)
    from .variability import parse_overlap, parse_overlap_comm, parse_variability
    fail = lambda path, msg, value, accepted: f.fail(path, msg, value, accepted)  # noqa: E731
    variability = (parse_variability(doc["variability"], fail=fail, check=False)   # idle keys: checked after the flags
                   if doc.get("variability") is not None else None)
    overlap_slowdown = parse_overlap(doc.get("overlap"), fail=fail)
    overlap_comm = parse_overlap_comm(doc.get("overlap"), fail=fail)
    return Workload(name=name, source=f.source, model=model, global_batch=gb, micro_batch=mb,
                    precision=precision, recompute=recompute, grad_bytes=grad_bytes, dp=dp, tp=tp, pp=pp,
                    schedule=schedule, partition=partition, scatter_gather=scatter_gather, overlap_p2p=overlap_p2p,
                    bucket_bytes=bucket,
                    first_bucket_bytes=first_bucket, order=order, gpus=gpus, nic=nic, collectives=collectives,
                    gpu=preset.name, peak_flops=peak, utilization=util, mem_bw_Bps=mem_bw,
                    layer_times_ms=layer_times, optimizer_ns=optimizer_ns, optimizer_bytes_per_param=opt_bpp,
                    raw=doc, ep=ep, zero_stage=zero, sequence_parallel=sp, whatif=whatif,
                    virtual_stages=vstages, schedule_actions=actions, variability=variability,
                    overlap_slowdown=overlap_slowdown, overlap_comm_slowdown=overlap_comm, cp=ce.cp, vocab_parallel=ce.vocab_parallel,
                    embedding_grad_allreduce=ce.embedding_grad_allreduce)
