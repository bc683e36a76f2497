"""ASTRA-sim inputs: the analytical network YAML (a topology) and the system JSON (collective settings).

Network YAML (``topology``, ``npus_count``, ``bandwidth``, ``latency``, one
entry per dimension) → :func:`netsim.topology.directbuilders.multi_dim`.
``bandwidth`` is GB/s, which ASTRA-sim's analytical backend turns into
bytes per ns as ``bw · 2³⁰ / 10⁹`` (binary GB: 7.4 % more than SI), so the
link rate is ``bw · 2³⁰ · 8`` bit/s (:func:`astra_rate_bps`); ``latency`` is
ns per hop.  ``Ring`` and ``FullyConnected`` dimensions link GPUs directly
(GPU forwarding on); ``Switch`` puts a switch on each group.

System JSON → netsim collective settings, applied to every collective of an
imported job (``--workload-set system=FILE``):

=================================  ==============================================
ASTRA-sim key                      netsim
=================================  ==============================================
``all-reduce-implementation``      algorithm: ``ring``/``oneRing`` → ring,
                                   ``doubleBinaryTree`` → tree,
                                   ``halvingDoubling`` → halving_doubling;
                                   ``direct`` and per-dimension mixes: reported,
                                   first dimension's (or ring) used
``active-chunks-per-dimension``    channels (chunks in flight)
``preferred-dataset-splits``       chunk_bytes = ⌈size / splits⌉ per collective
``peak-perf`` (TFLOP/s, with       peak_flops for Chakra ``num_ops`` compute
``roofline-enabled``)
other collectives' implementations reported unless ring (netsim runs them as
                                   rings)
``collective-optimization``        how collectives split per dimension on a
                                   ``multi_dim`` topology (:mod:`.dims`)
``scheduling-policy``,             reported: not modelled
``endpoint-delay``, ``*-dimension-
scheduling``, ``local-mem-bw``,
``boost-mode``
=================================  ==============================================
"""
from __future__ import annotations

import dataclasses
import json
import math

from ..errors import InputError, TopologyError

#: ASTRA-sim's GB: 2**30 bytes (analytical backend: bytes per ns = bw * 2**30 / 1e9)
ASTRA_GB_BYTES = 2**30
_ALLREDUCE = {"ring": "ring", "oneRing": "ring", "doubleBinaryTree": "tree", "halvingDoubling": "halving_doubling",
              "oneHalvingDoubling": "halving_doubling"}
_REPORTED = ("scheduling-policy", "endpoint-delay", "intra-dimension-scheduling", "inter-dimension-scheduling",
             "local-mem-bw", "boost-mode")
#: collective-optimization values netsim's per-dimension split (importers.dims) runs
_OPTIMIZATIONS = ("localBWAware", "baseline")


def astra_rate_bps(bandwidth_gbs: float) -> float:
    """ASTRA-sim ``bandwidth`` (GB/s) → bit/s: ``bw · 2³⁰ / 10⁹`` bytes per ns."""
    return bandwidth_gbs * ASTRA_GB_BYTES / 1e9 * 8 * 1e9


def _per_dim(doc: dict, key: str, source: str, n: int | None) -> list:
    v = doc.get(key)
    vals = v if isinstance(v, list) else [v]
    if v is None or (n is not None and len(vals) != n):
        raise TopologyError(f"needs {'a list of ' + str(n) if n else 'a list of'} values, one per dimension",
                            source=source, where=key, value=v, accepted="e.g. [ 8 ]")
    return vals


def astra_network_from_dict(doc: dict, source: str = "<dict>"):
    """The topology graph of an ASTRA-sim analytical network YAML document."""
    from ..topology import validate
    from ..topology.directbuilders import DIM_KINDS, multi_dim
    kinds = _per_dim(doc, "topology", source, None)
    n = len(kinds)
    counts = _per_dim(doc, "npus_count", source, n)
    bws = _per_dim(doc, "bandwidth", source, n)
    lats = _per_dim(doc, "latency", source, n)
    for d, k in enumerate(kinds):
        if k not in DIM_KINDS:
            raise TopologyError("dimension type netsim cannot build", source=source, where=f"topology[{d}]", value=k,
                                accepted=", ".join(DIM_KINDS))
    for key, vals, ok in (("npus_count", counts, lambda x: isinstance(x, int) and x >= 2),
                          ("bandwidth", bws, lambda x: isinstance(x, (int, float)) and math.isfinite(x) and x > 0),
                          ("latency", lats, lambda x: isinstance(x, (int, float)) and math.isfinite(x) and x >= 0)):
        for d, x in enumerate(vals):
            if isinstance(x, bool) or not ok(x):
                raise TopologyError("bad value", source=source, where=f"{key}[{d}]", value=x,
                                    accepted={"npus_count": "an integer >= 2", "bandwidth": "GB/s > 0",
                                              "latency": "ns >= 0"}[key])
    import os
    g = multi_dim(kinds, counts, [astra_rate_bps(b) for b in bws], lats, name=os.path.basename(source))
    return validate(g, source=source)


def load_system(path: str, *, dims: int | None = None) -> tuple[dict, list]:
    """(settings, notes) of an ASTRA-sim system JSON: ``algorithm``, ``channels``, ``splits``, ``peak_flops``."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read ({exc})", source=path, where="file", value=None,
                         accepted="ASTRA-sim system JSON") from None
    if not isinstance(doc, dict):
        raise InputError("not a JSON object", source=path, where="top level", value=type(doc).__name__)
    out, notes = {"algorithm": "ring", "channels": 1, "splits": None, "peak_flops": None}, []
    impl = doc.get("all-reduce-implementation", ["ring"])
    impl = impl if isinstance(impl, list) else [impl]
    first = str(impl[0]) if impl else "ring"
    if len(set(map(str, impl))) > 1:
        notes.append(f"all-reduce-implementation {impl}: per dimension on a multi_dim topology, else {first}")
    if first in _ALLREDUCE:
        out["algorithm"] = _ALLREDUCE[first]
    else:
        notes.append(f"all-reduce-implementation {first}: not in netsim, ring used")
    for key in ("all-gather-implementation", "reduce-scatter-implementation", "all-to-all-implementation"):
        v = doc.get(key)
        if v is not None and any(str(x) not in ("ring", "oneRing") for x in (v if isinstance(v, list) else [v])):
            notes.append(f"{key} {v}: netsim runs these collectives as rings")
    for key, field in (("active-chunks-per-dimension", "channels"), ("preferred-dataset-splits", "splits")):
        if key in doc:
            v = doc[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError("must be an integer >= 1", source=path, where=key, value=v)
            out[field] = v
    if doc.get("roofline-enabled") and "peak-perf" in doc:
        v = doc["peak-perf"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise InputError("must be TFLOP/s > 0", source=path, where="peak-perf", value=v)
        out["peak_flops"] = float(v) * 1e12
    opt = doc.get("collective-optimization")
    if opt is not None and opt not in _OPTIMIZATIONS:
        raise InputError("unknown collective optimization", source=path, where="collective-optimization", value=opt,
                         accepted=", ".join(_OPTIMIZATIONS))
    notes += [f"{k} = {doc[k]!r}: not modelled" for k in _REPORTED if k in doc]
    return out, notes


def apply_system(job, path: str):
    """``job`` with the system JSON's collective settings on every collective; notes extended."""
    from ..workloads.schema import CollectiveSpec
    s, notes = load_system(path)
    templates = []
    for t in job.templates:
        if t.collective and t.collective != "send":
            chunk = math.ceil(t.size_bytes / s["splits"]) if s["splits"] and t.size_bytes else None
            t = dataclasses.replace(t, spec=CollectiveSpec(algorithm=s["algorithm"] if t.collective == "allreduce"
                                                           else "ring", channels=s["channels"], chunk_bytes=chunk))
        templates.append(t)
    return dataclasses.replace(job, templates=templates, notes=list(job.notes) + [f"system {path}: " + n
                                                                                  for n in notes]), s
