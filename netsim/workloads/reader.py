"""Reading a workload: a YAML file, YAML text's path or a dict → a validated :class:`Workload`.

Models the file-level part of validation: the file must exist, be UTF-8 YAML
and a mapping; ``--workload-set`` overrides are applied to the document
(string values parsed as YAML scalars, as in files) before any field is read;
every key's line number is kept so a problem is reported as one
:class:`~netsim.errors.WorkloadError` naming the file, the line and dotted
field, the bad value and what is accepted.  The fields themselves are read by
:mod:`.build`; leaves out imported formats (Chakra, SimAI, AICB: see
:mod:`netsim.importers`).

>>> w = load_workload({"model": "gpt-1.5b", "training": {"global_batch": 16, "micro_batch": 2},
...                    "parallelism": {"dp": 2, "tp": 2, "pp": 4}})
>>> w.micro_batches, w.world_size
(4, 16)
"""
from __future__ import annotations

import copy
import os

import yaml

from ..errors import WorkloadError
from ..yamlio import UniqueKeyLoader
from .build import build_workload
from .fields import Fields, SECTIONS, set_dotted
from .schema import Workload


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
    return build_workload(f, doc)
