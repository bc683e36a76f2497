"""Assembling a :class:`~netsim.workloads.schema.Workload` from a workload document's sections.

Models the field-level rules of a workload file, section by section and in
the order a reader meets them (so the first problem reported does not depend
on how this module is cut): ``training`` (batch, precision, recompute,
gradient bytes), ``parallelism`` (dp/tp/pp/ep/cp degrees, ZeRO, sequence
parallelism, pipeline schedule, and the divisibility rules between them and
the model), ``placement`` (rank order, explicit GPUs, NIC-aware choice),
``collectives`` (per group kind: algorithm, protocol, channels, chunk size,
software latency), ``compute`` (GPU preset, peak, utilization, per-layer
times, optimizer) and the ``whatif``/``variability``/``overlap`` sections.
Leaves out the file itself (existence, YAML, line numbers, overrides:
:mod:`.reader`) and every check that needs a topology (placement on GPUs,
balanced partitions, memory: :mod:`.placement`, :mod:`.memory`).
"""
from __future__ import annotations

import os

from ..collectives.protocol import parse_sw_latency
from .fields import Fields, SECTIONS
from .gpus import GPUS, gpu_preset
from .modelspec import parse_model
from .parallel_fields import context_embedding_fields
from .pipeline_fields import pipeline_schedule
from .schedules import SCHEDULES
from .schema import ALGORITHMS, BYTES, GROUP_KINDS, MIN_CHUNK_BYTES, PROTOCOLS, CollectiveSpec, Workload
from .section_fields import layer_times_field, order_field, partition_field
from .transformer import TransformerModel


def build_workload(f: Fields, doc: dict) -> Workload:
    """The workload of ``doc`` (already overridden), every field validated through ``f``."""
    f.check_keys("", doc, SECTIONS)
    name = str(doc.get("name") or (os.path.splitext(os.path.basename(f.source))[0] if f.source != "<workload>" else "workload"))
    model = parse_model(f, doc.get("model"))
    tr = f.section(doc, "training")
    par = f.section(doc, "parallelism")
    plc = f.section(doc, "placement")
    col = f.section(doc, "collectives")
    cmp_ = f.section(doc, "compute")
    training = _training(f, tr, model)
    parallel = _parallelism(f, par, model, training["global_batch"], training["micro_batch"])
    placement = _placement(f, plc, parallel)
    collectives = _collectives(f, col)
    compute = _compute(f, cmp_, model, training["precision"])
    effects = _effects(f, doc)
    return Workload(name=name, source=f.source, model=model, **training, **parallel, **placement,
                    collectives=collectives, **compute, raw=doc, **effects)


def _training(f: Fields, tr: dict, model) -> dict:
    """``training:``: global and micro batch, precision, recompute, gradient bytes."""
    gb = f.pos_int(tr, "training.global_batch", required=True)
    mb = f.pos_int(tr, "training.micro_batch", default=1)
    precision = f.choice(tr, "training.precision", tuple(BYTES), "fp16")
    recompute = f.boolean(tr, "training.recompute", default=model.family == "gpt")
    grad_bytes = tr.get("grad_bytes", "auto")
    if grad_bytes in (None, "auto"):
        grad_bytes = BYTES[precision]
    else:
        grad_bytes = f.pos_int(tr, "training.grad_bytes")
    return {"global_batch": gb, "micro_batch": mb, "precision": precision, "recompute": recompute,
            "grad_bytes": grad_bytes}


def _parallelism(f: Fields, par: dict, model, gb: int, mb: int) -> dict:
    """``parallelism:``: the degrees, ZeRO and SP, the pipeline schedule, context parallelism."""
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
    _check_divisible(f, par, model, moe, gb=gb, mb=mb, dp=dp, tp=tp, ep=ep)
    m = gb // (mb * dp)
    vstages, actions = pipeline_schedule(f, par, schedule, model, pp, m, moe is not None)
    split = schedule == "zb_h1" or (actions is not None and any(a.kind == "W" for o in actions for a in o))
    ce = context_embedding_fields(f, par, model, tp=tp, pp=pp, schedule=schedule, split_backward=split)
    return {"dp": dp, "tp": tp, "pp": pp, "schedule": schedule, "partition": partition,
            "scatter_gather": scatter_gather, "overlap_p2p": overlap_p2p, "bucket_bytes": bucket,
            "first_bucket_bytes": first_bucket, "ep": ep, "zero_stage": zero, "sequence_parallel": sp,
            "virtual_stages": vstages, "schedule_actions": actions, "cp": ce.cp,
            "vocab_parallel": ce.vocab_parallel, "embedding_grad_allreduce": ce.embedding_grad_allreduce}


def _check_divisible(f: Fields, par: dict, model, moe, *, gb: int, mb: int, dp: int, tp: int, ep: int) -> None:
    """Expert, data and tensor degrees against the model and the batch."""
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


def _placement(f: Fields, plc: dict, par: dict) -> dict:
    """``placement:``: rank order, an explicit GPU list (one per rank), NIC-aware choice."""
    dp, tp, pp, cp = par["dp"], par["tp"], par["pp"], par["cp"]
    world = dp * tp * pp * cp
    order = order_field(f, plc)
    gpus = plc.get("gpus")
    if gpus is not None:
        if not isinstance(gpus, list) or not all(isinstance(g, str) for g in gpus):
            f.fail("placement.gpus", "must be a list of GPU node names", gpus, "e.g. [s0.gpu0, s0.gpu1]")
        if len(gpus) != world:
            axes = f"dp·tp·pp = {dp}·{tp}·{pp}" if cp == 1 else f"dp·tp·pp·cp = {dp}·{tp}·{pp}·{cp}"
            f.fail("placement.gpus", f"{axes} = {world} but {len(gpus)} GPUs are placed", len(gpus),
                   f"exactly {world} GPU names")
        if len(set(gpus)) != len(gpus):
            f.fail("placement.gpus", "a GPU is listed twice", gpus, "distinct GPU names")
        gpus = tuple(gpus)
    nic = f.choice(plc, "placement.nic", ("nearest", "nic_aware"), "nearest")
    if nic == "nic_aware" and gpus is not None:
        f.fail("placement.nic", "nic_aware chooses the GPUs itself; drop placement.gpus", nic, "nearest")
    return {"order": order, "gpus": gpus, "nic": nic}


def _collectives(f: Fields, col: dict) -> dict:
    """``collectives:``: one :class:`CollectiveSpec` per group kind (defaults for those not given)."""
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
    return collectives


def _compute(f: Fields, cmp_: dict, model, precision: str) -> dict:
    """``compute:``: GPU preset, peak FLOP/s at ``precision``, utilization, layer times, optimizer."""
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
    return {"gpu": preset.name, "peak_flops": peak, "utilization": util, "mem_bw_Bps": mem_bw,
            "layer_times_ms": layer_times, "optimizer_ns": optimizer_ns, "optimizer_bytes_per_param": opt_bpp}


def _effects(f: Fields, doc: dict) -> dict:
    """``whatif:``, ``variability:`` and ``overlap:`` (each off when absent)."""
    whatif = None
    if doc.get("whatif") is not None:
        from ..whatif import WhatIf
        whatif = WhatIf.from_doc(doc["whatif"], source=f.source, where=lambda k: f.where(k))
    # variability: / overlap: sections (netsim.workloads.variability; both off when absent)
    from .variability import parse_overlap, parse_overlap_comm, parse_variability
    fail = lambda path, msg, value, accepted: f.fail(path, msg, value, accepted)  # noqa: E731
    variability = (parse_variability(doc["variability"], fail=fail, check=False)   # idle keys: checked after the flags
                   if doc.get("variability") is not None else None)
    return {"whatif": whatif, "variability": variability, "overlap_slowdown": parse_overlap(doc.get("overlap"), fail=fail),
            "overlap_comm_slowdown": parse_overlap_comm(doc.get("overlap"), fail=fail)}
