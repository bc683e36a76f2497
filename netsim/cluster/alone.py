"""Each job alone on its placement (the slowdown's reference), cached by a content hash.

The key hashes (topology graph with every attribute, workload content — the
file's bytes, a folder's files, or the inline mapping —, the job's GPU list,
traffic class, iterations, backend, cc, network and cc parameters, seed, and
:data:`CACHE_VERSION`). A result is stored as ``<cache>/<key>.json`` holding
the key's inputs and the alone iteration times; a later run with the same key
reads it instead of simulating. The default cache folder is ``alone/`` under
the run's output folder.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os

#: bumped when the alone-run's meaning changes (old cache entries are then never read)
CACHE_VERSION = 1


def _graph_digest(graph) -> str:
    import networkx as nx
    data = nx.node_link_data(graph, edges="links")
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def _workload_digest(workload) -> str:
    h = hashlib.sha256()
    if isinstance(workload, dict):
        h.update(json.dumps(workload, sort_keys=True, default=str).encode())
        return h.hexdigest()
    path = os.fspath(workload)
    files = ([path] if os.path.isfile(path) else
             sorted(glob.glob(os.path.join(glob.escape(path), "**", "*"), recursive=True)) if os.path.isdir(path)
             else sorted(glob.glob(glob.escape(path) + "*")))
    for f in files:
        if os.path.isfile(f):
            h.update(os.path.relpath(f, os.path.dirname(path)).encode())
            with open(f, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def alone_key(graph, job, *, backend, cc, params, cc_params, seed) -> tuple[str, dict]:
    """(hex key, the inputs it hashes) of ``job`` (a BuiltJob) run alone."""
    inputs = {"version": CACHE_VERSION, "topology": _graph_digest(graph),
              "workload": _workload_digest(job.spec.workload), "workload_format": job.spec.workload_format,
              "gpus": list(job.placement.gpu_of), "traffic_class": job.spec.traffic_class,
              "iterations": job.spec.iterations, "backend": backend, "cc": cc,
              "params": {str(k): str(v) for k, v in sorted((params or {}).items())},
              "cc_params": json.loads(json.dumps(cc_params or {}, sort_keys=True, default=str)), "seed": seed}
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]
    return key, inputs


def cached(cache_dir: str, key: str) -> dict | None:
    """The stored alone result for ``key``, or None."""
    path = os.path.join(cache_dir, key + ".json")
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc.get("iteration_times_s"), list) else None


def store(cache_dir: str, key: str, inputs: dict, times_s: list) -> None:
    """Write the alone result (atomically: a reader never sees half a file)."""
    from ..records import atomic_output
    os.makedirs(cache_dir, exist_ok=True)
    doc = {"key": key, "inputs": inputs, "iteration_times_s": times_s,
           "iteration_time_s": sum(times_s) / len(times_s)}
    with atomic_output(os.path.join(cache_dir, key + ".json"), encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
