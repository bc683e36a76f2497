"""Sweep axes: the names a sweep file may vary and the values each accepts.

Models one axis of ``grid:`` or a ``zip:`` group: its name (``topology.ARG``,
``set.KEY``, ``cc_param.KEY``, ``workload.FIELD`` or a base field) checked
against the command, a builder topology's arguments checked against the
topology layer (a builder-only YAML file becomes its builder expression),
``set.KEY`` values run through the network-parameter check, seeds and
iterations range-checked, and the grid/zip groups parsed (an axis once, zipped
lists of one length).  Leaves out the base run's fields (:mod:`.spec`) and
expanding axes into points (:mod:`.points`).
"""
from __future__ import annotations

import os
import re

import yaml

from ..backends import BUILTIN_BACKENDS as BACKENDS  # the shipped backends' names
from ..errors import InputError

PREFIXES = {"topology": "topology", "set": "set", "cc_param": "cc_param",
            "workload": "workload_set", "workload_set": "workload_set"}

PLAIN_AXES = ("cc", "backend", "seed", "iterations", "topology", "flows", "workload")

ACCEPTED_AXES = ("topology.ARG, set.KEY, cc_param.KEY, cc_param.CC.KEY, workload.FIELD, "
                 + ", ".join(PLAIN_AXES))

_BUILDER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(:.*)?$")


Scalar = str | int | float | bool



def field_error(source: str, where: str, message: str, value=None, accepted: str | None = None) -> InputError:
    """The one-line error of field ``where`` of sweep file ``source``."""
    return InputError(message, source=source, where=f"field {where}", value=value, accepted=accepted)



def check_scalar(value, source: str, where: str) -> Scalar:
    """``value`` if it is a non-empty scalar (what a command-line value can be)."""
    if isinstance(value, (str, int, float, bool)) and value != "":
        return value
    raise field_error(source, where, "not a scalar value", value, "a number, a string or true/false")



def is_builder_expression(text: str, base_dir: str) -> bool:
    """True when ``text`` is a topology builder expression rather than a file path.

    >>> is_builder_expression("leaf_spine:leaves=4,spines=2", ".")
    True
    >>> is_builder_expression("topologies/dumbbell.yaml", ".")
    False
    """
    if os.path.exists(os.path.join(base_dir, text)) or os.path.exists(text):
        return False
    return bool(_BUILDER_RE.match(text)) and not text.endswith((".yaml", ".yml", ".graphml", ".txt"))



def builder_names() -> dict[str, list[str]] | None:
    """Builder name -> argument names, from the topology layer (None if unavailable)."""
    try:
        from ..topology.builders import BUILDERS, builder_args
    except ImportError:  # pragma: no cover - topology layer not built
        return None
    return {name: builder_args(name) for name in BUILDERS}



def _builder_yaml(path: str, base_dir: str) -> str | None:
    """``name:k=v,...`` for a topology YAML file that only calls a builder, else None."""
    full = path if os.path.isabs(path) else os.path.join(base_dir, path)
    if not os.path.isfile(full) or not path.endswith((".yaml", ".yml")):
        return None
    try:
        with open(full, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
    except (OSError, yaml.YAMLError, RecursionError):
        return None
    if not isinstance(doc, dict) or "builder" not in doc or set(doc) - {"builder", "args", "name", "description"}:
        return None
    from .points import compose_builder
    return compose_builder(str(doc["builder"]), dict(doc.get("args") or {}))



def _check_builder_arg(arg: str, spec_base: dict, source: str, where: str) -> None:
    """A ``topology.ARG`` axis needs a builder topology that takes ARG; a builder-only YAML
    file is turned into its builder expression."""
    if not spec_base["_topology_is_builder"]:
        expr = _builder_yaml(spec_base["topology"], spec_base["_dir"])
        if expr is None:
            raise field_error(source, where, "topology arguments vary only when topology is a builder expression "
                       "(or a YAML file with only builder: and args:)", spec_base["topology"],
                       "e.g. topology: leaf_spine:leaves=4,spines=2,hosts_per_leaf=4")
        spec_base["topology"], spec_base["_topology_is_builder"] = expr, True
    builders = builder_names()
    name = spec_base["topology"].partition(":")[0].strip()
    if builders is not None and name in builders and arg not in builders[name]:
        raise field_error(source, where, f"unknown argument of builder {name}", arg, ", ".join(builders[name]))



def check_set_value(key: str, value, spec_base: dict, source: str, where: str) -> None:
    """A ``set.KEY`` value goes through the run's own parameter check now, not when its point runs."""
    from ..checks import check_network_params
    backend = spec_base.get("backend") if isinstance(spec_base.get("backend"), str) else "packet"
    try:
        check_network_params(backend, {key: value})
    except InputError as exc:
        raise field_error(source, where, f"not a valid value of network parameter {key}", value,
                   exc.accepted or "a finite value within the parameter's bounds (netsim defaults lists them)") from None



def _axis_values(name: str, values, source: str, where: str, spec_base: dict) -> list[Scalar]:
    """The checked values of axis ``name`` (at ``where``) for the base run ``spec_base``."""
    if not isinstance(values, list) or not values:
        raise field_error(source, where, "axis values must be a non-empty list", values, "a YAML list, e.g. [1, 2, 4]")
    out = [check_scalar(v, source, f"{where}[{i}]") for i, v in enumerate(values)]
    head, _, rest = name.partition(".")
    command = spec_base["command"]
    if rest:
        if head not in PREFIXES:
            raise field_error(source, where, "unknown axis", name, ACCEPTED_AXES)
        if PREFIXES[head] == "workload_set" and command != "run":
            raise field_error(source, where, "workload fields vary only with command: run", name)
        if head == "topology":
            _check_builder_arg(rest, spec_base, source, where)
    elif name not in PLAIN_AXES:
        raise field_error(source, where, "unknown axis", name, ACCEPTED_AXES)
    elif name == "backend":
        for v in out:
            if v not in BACKENDS:
                raise field_error(source, where, "unknown backend", v, ", ".join(BACKENDS))
    elif name in ("seed", "iterations"):
        low = 0 if name == "seed" else 1
        for v in out:
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise field_error(source, where, f"{name} must be an integer >= {low}", v)
        if name == "iterations" and command != "run":
            raise field_error(source, where, "iterations vary only with command: run", name)
    elif name == "flows" and command != "flows":
        raise field_error(source, where, "a flows file varies only with command: flows", name)
    elif name == "workload" and command != "run":
        raise field_error(source, where, "a workload file varies only with command: run", name)
    return out


def parse_axes(data: dict, source: str, base: dict) -> tuple[dict, list]:
    """``grid:`` and ``zip:`` of sweep file ``source``: (axis -> values, [zip group ...])."""
    grid = data.get("grid") or {}
    if not isinstance(grid, dict):
        raise field_error(source, "grid", "not a mapping", grid, "AXIS: [VALUES] lines")
    zips_raw = data.get("zip") or []
    zips_raw = [zips_raw] if isinstance(zips_raw, dict) else zips_raw
    if not isinstance(zips_raw, list) or not all(isinstance(g, dict) for g in zips_raw):
        raise field_error(source, "zip", "not a mapping (or a list of mappings)", data.get("zip"),
                   "AXIS: [VALUES] lines, lists of equal length")
    seen: set[str] = set()
    spec_grid: dict[str, list[Scalar]] = {}
    for name, values in grid.items():
        spec_grid[str(name)] = _axis_values(str(name), values, source, f"grid.{name}", base)
        seen.add(str(name))
    spec_zips: list[dict[str, list[Scalar]]] = []
    for gi, group in enumerate(zips_raw):
        parsed: dict[str, list[Scalar]] = {}
        for name, values in group.items():
            where = f"zip.{name}" if len(zips_raw) == 1 else f"zip[{gi}].{name}"
            if str(name) in seen:
                raise field_error(source, where, "axis given twice", name, "each axis once, in grid or in one zip group")
            parsed[str(name)] = _axis_values(str(name), values, source, where, base)
            seen.add(str(name))
        lengths = {len(v) for v in parsed.values()}
        if len(lengths) > 1:
            raise field_error(source, "zip" if len(zips_raw) == 1 else f"zip[{gi}]", "zipped lists differ in length",
                       {k: len(v) for k, v in parsed.items()}, "lists of equal length")
        if parsed:
            spec_zips.append(parsed)
    if "topology" in seen and any(a.startswith("topology.") for a in seen):
        raise field_error(source, "grid/zip", "vary either whole topologies or builder arguments, not both",
                   sorted(a for a in seen if a.startswith("topology")))
    for prefix, axes in [("grid", spec_grid)] + [("zip" if len(spec_zips) == 1 else f"zip[{i}]", z)
                                                 for i, z in enumerate(spec_zips)]:
        for name, values in axes.items():
            if name.startswith("set."):
                for i, v in enumerate(values):
                    check_set_value(name[4:], v, base, source, f"{prefix}.{name}[{i}]")
    return spec_grid, spec_zips
