"""Running the importer of a workload format other than netsim's: Chakra, SimAI, AICB CSV.

:func:`load` is what :func:`netsim.importers.detect_job` calls once it has
recognised a format: it applies the ``--workload-set`` options an importer
understands (``comm_groups``, ``peak_flops``, ``gpu``, ``gpu_map``,
``system``, ``vpp``, ``dims``), splits collectives by dimension on a
multi-dimensional topology, and :func:`check_bounds` checks every op against
netsim's bounds. Left out: recognising the format (:mod:`.sniff`).
"""
from __future__ import annotations

from ..errors import InputError


def check_bounds(job) -> None:
    """Every op within netsim's bounds (one day per op, 2^53 bytes), named by the importer's op name.

    The importers check the fields they parse (SimAI's with file, line and field); this catches a
    value a format computes (Chakra's ``num_ops`` over a FLOP/s rate, µs × 10^6) before the run.
    """
    from ..values import MAX_EXACT, MAX_OP_NS
    for t in job.templates:
        if t.duration_ps > MAX_OP_NS * 1000:
            raise InputError("operation longer than one day", source=job.source, where=f"op {t.name}",
                             value=f"{t.duration_ps // 1000} ns", accepted=f"at most {MAX_OP_NS} ns (one day)")
        if t.size_bytes > MAX_EXACT:
            raise InputError("operation size out of range", source=job.source, where=f"op {t.name}",
                             value=t.size_bytes, accepted=f"at most 2^53 = {MAX_EXACT} bytes")


def load(fmt: str, path: str, opts: dict, graph):
    """The :class:`ImportedJob` of ``path`` in format ``fmt`` (not netsim)."""
    if fmt == "chakra":
        from .chakra import load_chakra
        _only(opts, {"comm_groups", "peak_flops", "gpu", "gpu_map", "system", "dims"}, "Chakra")
        gmap = opts.get("gpu_map")
        peak = opts.get("peak_flops")
        if peak is None and opts.get("gpu"):
            peak = _gpu_rate(str(opts["gpu"]))
        if peak is None and opts.get("system"):
            from .astra import load_system
            peak = load_system(opts["system"])[0]["peak_flops"]
        job = load_chakra(path, comm_groups=opts.get("comm_groups"), gpu_map=_gpu_map(gmap, graph) if gmap else None,
                          peak_flops=_peak(peak))
        return _per_dim(_with_system(job, opts), opts, graph)
    world = None
    if graph is not None:
        from ..topology import gpus
        from ..topology.query import hosts
        world = len(gpus(graph)) or len(hosts(graph)) or None      # an HPCC topology: its hosts are the NPUs
    gmap = _gpu_map(opts["gpu_map"], graph) if opts.get("gpu_map") else None
    if fmt == "simai":
        from .simai import load_simai
        _only(opts, {"gpu_map", "system", "vpp", "dims"}, "SimAI")
        job = load_simai(path, world=world, gpu_map=gmap, vpp=_vpp(opts.get("vpp")))
        return _per_dim(_with_system(job, opts), opts, graph)
    if fmt == "aicb-csv":
        from .aicb_csv import load_aicb_csv
        _only(opts, {"gpu_map", "system", "dims"}, "AICB CSV")
        job = load_aicb_csv(path, world=len(gmap) if gmap else world, gpu_map=gmap)
        return _per_dim(_with_system(job, opts), opts, graph)
    raise AssertionError(fmt)


#: precision assumed for a Chakra COMP node's num_ops when only a GPU model is named (training runs bf16)
CHAKRA_GPU_PRECISION = "bf16"


def _gpu_rate(name: str) -> float:
    """FLOP/s a named GPU preset sustains: its bf16 peak times its utilization μ (netsim.workloads.gpus)."""
    from ..workloads.gpus import GPUS
    if name not in GPUS:
        raise InputError("unknown GPU model", where="--workload-set gpu", value=name, accepted=", ".join(GPUS))
    g = GPUS[name]
    return g.peak_flops(CHAKRA_GPU_PRECISION) * g.utilization


def _peak(value):
    if value is None:
        return None
    import math
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or x <= 0:
        raise InputError("must be FLOP/s > 0", where="--workload-set peak_flops", value=value)
    return x


def _vpp(value):
    """``--workload-set vpp=N``: a positive integer, or ``None``."""
    if value is None:
        return None
    if isinstance(value, int) or str(value).isdigit():
        if int(value) >= 1:
            return int(value)
    raise InputError("must be a positive integer", where="--workload-set vpp", value=value,
                     accepted="model chunks per pipeline stage, e.g. 1 (plain 1F1B) or 2")


def _per_dim(job, opts: dict, graph):
    """On a ``multi_dim`` topology: collectives dimension by dimension (:mod:`.dims`), as ASTRA-sim runs them.

    Mode: ``--workload-set dims=localBWAware|baseline|off``, else the system JSON's ``collective-optimization``,
    else ``localBWAware`` (what every system JSON ASTRA-sim ships sets).
    """
    if graph is None:
        return job
    from .dims import MODES, decompose, grid
    mode, impl = opts.get("dims"), None
    if opts.get("system"):
        import json
        with open(opts["system"]) as f:          # load_system already validated it
            doc = json.load(f)
        mode = mode if mode is not None else doc.get("collective-optimization")
        impl = doc.get("all-reduce-implementation")
        impl = impl if isinstance(impl, list) else [impl] if impl else None
    if grid(graph) is None and mode not in (None, "off") and mode in MODES:   # nothing to split along
        if opts.get("dims") is not None:    # asked for on the command line: it cannot be honoured
            raise InputError("needs a multi-dimensional topology (multi_dim builder, graph attribute dims); "
                             "this one has none", where="--workload-set dims", value=mode,
                             accepted="off, or a multi_dim topology")
        import dataclasses                  # from a shipped system JSON: run as is, and say so
        return dataclasses.replace(job, notes=list(job.notes) + [
            f"collective-optimization {mode} (system JSON): the topology is not multi-dimensional, "
            "collectives run over their whole group"])
    return decompose(job, graph, str(mode or "localBWAware"), allreduce_impl=impl)


def _with_system(job, opts: dict):
    """The job with an ASTRA-sim system JSON's collective settings (``--workload-set system=FILE``)."""
    if not opts.get("system"):
        return job
    from .astra import apply_system
    return apply_system(job, opts["system"])[0]


def _only(opts: dict, known: set, what: str) -> None:
    bad = sorted(set(opts) - known)
    if bad:
        raise InputError(f"not an option of the {what} importer", where="--workload-set", value=bad[0],
                         accepted=", ".join(sorted(known)) or "none")


def _gpu_map(path: str, graph=None) -> list:
    """Rank → GPU names from a file: one GPU name per line (rank order) or a JSON list.

    With ``graph``, every name must be one of its GPUs (its hosts, on a topology without GPUs),
    the nodes a flow may start or end at: a switch or NIC is refused here, naming the rank.
    """
    import json
    accepted = "a JSON list or one GPU name per line"
    try:
        with open(path) as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({getattr(exc, 'strerror', None) or 'not UTF-8 text'})", source=path,
                         where="gpu_map", value=None, accepted=accepted) from None
    if text.lstrip().startswith("["):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"bad JSON ({exc.msg})", source=path, where=f"gpu_map, line {exc.lineno}", value=None,
                             accepted=accepted) from None
        names = [str(x) for x in doc] if isinstance(doc, list) else None
        if names is None:
            raise InputError("not a JSON list", source=path, where="gpu_map", value=type(doc).__name__,
                             accepted=accepted)
    else:
        names = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if graph is not None:
        from ..topology import gpus
        from ..topology.query import hosts
        ends = list(gpus(graph)) or list(hosts(graph))
        allowed = set(ends)
        for rank, name in enumerate(names):
            if name not in allowed:
                what = "not a node of the topology" if name not in graph else \
                    f"a {graph.nodes[name].get('kind', 'non-GPU')} node, not a GPU"
                raise InputError(f"rank {rank}: {what}", source=path, where="gpu_map", value=name,
                                 accepted=f"a GPU of the topology, e.g. {', '.join(map(str, ends[:4]))}")
    return names
