"""Sweep files: parse and validate ``SWEEP.yaml`` into a :class:`SweepSpec`.

A sweep file names one *base run* — the arguments of ``netsim flows`` or
``netsim run`` — and the *axes* to vary: a ``grid`` (cartesian product), one or
more ``zip`` groups (lists walked together) and ``repetitions`` (the same point
with seeds ``seed``, ``seed + 1``, ...). Expanding the axes into points lives in
:mod:`netsim.sweep.points`.

Axis names (keys of ``grid`` / ``zip``)::

    topology.ARG        a builder argument (topology: a builder expression, a mapping
                        {builder: NAME, ...}, or a YAML file with only builder: and args:)
    set.KEY             a network parameter (``--set KEY=VALUE``)
    cc_param.KEY        a CC parameter (``--cc-param KEY=VALUE``; KEY may be ``dcqcn.g``)
    workload.FIELD      a workload field (``--workload-set FIELD=VALUE``; ``run`` only)
    cc, backend, seed, iterations, topology, flows, workload   the base field itself

Builder names and argument names are checked against the topology layer.
Deliberately left out: checking ``--set`` / ``--cc-param`` / workload names and
values against the simulator's tables — that is the commands' job, and a point they reject is
recorded as failed with their message while the sweep goes on.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..backends import BUILTIN_BACKENDS as BACKENDS  # the shipped backends' names
from ..errors import InputError

COMMANDS = ("flows", "run")
BASE_KEYS = ("name", "description", "command", "topology", "flows", "workload", "backend", "cc",
             "seed", "iterations", "set", "cc_param", "workload_set", "extra_args",
             "grid", "zip", "repetitions")
PREFIXES = {"topology": "topology", "set": "set", "cc_param": "cc_param",
            "workload": "workload_set", "workload_set": "workload_set"}
PLAIN_AXES = ("cc", "backend", "seed", "iterations", "topology", "flows", "workload")
ACCEPTED_AXES = ("topology.ARG, set.KEY, cc_param.KEY, cc_param.CC.KEY, workload.FIELD, "
                 + ", ".join(PLAIN_AXES))
_BUILDER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(:.*)?$")

Scalar = str | int | float | bool


@dataclass
class SweepSpec:
    """A validated sweep file.

    ``base`` holds the base run's fields (paths as written; mappings flattened
    to ``{"dotted.key": value}``); ``grid`` maps axis -> values; ``zips`` is a
    list of groups, each mapping axis -> values of one common length.
    """

    source: str
    base: dict[str, Any]
    grid: dict[str, list[Scalar]] = field(default_factory=dict)
    zips: list[dict[str, list[Scalar]]] = field(default_factory=list)
    repetitions: int = 1

    @property
    def axes(self) -> list[str]:
        """Axis names in file order: grid first, then zip groups."""
        names = list(self.grid)
        for group in self.zips:
            names.extend(group)
        return names

    @property
    def base_dir(self) -> str:
        """Directory that relative paths in the file are resolved against first."""
        return os.path.dirname(os.path.abspath(self.source))


def _err(source: str, where: str, message: str, value=None, accepted: str | None = None) -> InputError:
    return InputError(message, source=source, where=f"field {where}", value=value, accepted=accepted)


def _flatten(mapping: dict, source: str, where: str, prefix: str = "") -> dict[str, Scalar]:
    out: dict[str, Scalar] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, source, where, name + "."))
        else:
            out[name] = _check_scalar(value, source, f"{where}.{name}")
    return out


def _check_scalar(value, source: str, where: str) -> Scalar:
    if isinstance(value, (str, int, float, bool)) and value != "":
        return value
    raise _err(source, where, "not a scalar value", value, "a number, a string or true/false")


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


def _builder_names() -> dict[str, list[str]] | None:
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


def _topology_base(value, source: str) -> str:
    """Accept ``"name:k=v,..."``, a path, or ``{builder: name, k: v}``; return a string."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict) and isinstance(value.get("builder"), str):
        args = {k: _check_scalar(v, source, f"topology.{k}") for k, v in value.items() if k != "builder"}
        from .points import compose_builder
        return compose_builder(value["builder"], args)
    raise _err(source, "topology", "not a topology", value,
               "a file path, a builder expression like leaf_spine:leaves=4,spines=2, "
               "or a mapping {builder: NAME, ARG: VALUE, ...}")


def _check_builder_arg(arg: str, spec_base: dict, source: str, where: str) -> None:
    """A ``topology.ARG`` axis needs a builder topology that takes ARG; a builder-only YAML
    file is turned into its builder expression."""
    if not spec_base["_topology_is_builder"]:
        expr = _builder_yaml(spec_base["topology"], spec_base["_dir"])
        if expr is None:
            raise _err(source, where, "topology arguments vary only when topology is a builder expression "
                       "(or a YAML file with only builder: and args:)", spec_base["topology"],
                       "e.g. topology: leaf_spine:leaves=4,spines=2,hosts_per_leaf=4")
        spec_base["topology"], spec_base["_topology_is_builder"] = expr, True
    builders = _builder_names()
    name = spec_base["topology"].partition(":")[0].strip()
    if builders is not None and name in builders and arg not in builders[name]:
        raise _err(source, where, f"unknown argument of builder {name}", arg, ", ".join(builders[name]))


def _check_set_value(key: str, value, spec_base: dict, source: str, where: str) -> None:
    """A ``set.KEY`` value goes through the run's own parameter check now, not when its point runs."""
    from ..checks import check_network_params
    backend = spec_base.get("backend") if isinstance(spec_base.get("backend"), str) else "packet"
    try:
        check_network_params(backend, {key: value})
    except InputError as exc:
        raise _err(source, where, f"not a valid value of network parameter {key}", value,
                   exc.accepted or "a finite value within the parameter's bounds (netsim defaults lists them)") from None


def _axis_values(name: str, values, source: str, where: str, spec_base: dict) -> list[Scalar]:
    if not isinstance(values, list) or not values:
        raise _err(source, where, "axis values must be a non-empty list", values, "a YAML list, e.g. [1, 2, 4]")
    out = [_check_scalar(v, source, f"{where}[{i}]") for i, v in enumerate(values)]
    head, _, rest = name.partition(".")
    command = spec_base["command"]
    if rest:
        if head not in PREFIXES:
            raise _err(source, where, "unknown axis", name, ACCEPTED_AXES)
        if PREFIXES[head] == "workload_set" and command != "run":
            raise _err(source, where, "workload fields vary only with command: run", name)
        if head == "topology":
            _check_builder_arg(rest, spec_base, source, where)
    elif name not in PLAIN_AXES:
        raise _err(source, where, "unknown axis", name, ACCEPTED_AXES)
    elif name == "backend":
        for v in out:
            if v not in BACKENDS:
                raise _err(source, where, "unknown backend", v, ", ".join(BACKENDS))
    elif name in ("seed", "iterations"):
        low = 0 if name == "seed" else 1
        for v in out:
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise _err(source, where, f"{name} must be an integer >= {low}", v)
        if name == "iterations" and command != "run":
            raise _err(source, where, "iterations vary only with command: run", name)
    elif name == "flows" and command != "flows":
        raise _err(source, where, "a flows file varies only with command: flows", name)
    elif name == "workload" and command != "run":
        raise _err(source, where, "a workload file varies only with command: run", name)
    return out


def parse_sweep(data: Any, source: str) -> SweepSpec:
    """Validate the parsed YAML ``data`` of sweep file ``source``."""
    if not isinstance(data, dict):
        raise InputError("a sweep file is a YAML mapping", source=source, value=type(data).__name__,
                         accepted="keys " + ", ".join(BASE_KEYS))
    for key in data:
        if key not in BASE_KEYS:
            raise _err(source, str(key), "unknown key", key, ", ".join(BASE_KEYS))
    command = data.get("command")
    if command not in COMMANDS:
        raise _err(source, "command", "unknown or missing command", command, "flows or run")
    base: dict[str, Any] = {"command": command}
    if "topology" not in data:
        raise _err(source, "topology", "missing", None, "a topology file or builder expression")
    base["topology"] = _topology_base(data["topology"], source)
    need, other = ("flows", "workload") if command == "flows" else ("workload", "flows")
    if not isinstance(data.get(need), str) or not data.get(need):
        raise _err(source, need, f"command {command} needs a {need} file", data.get(need), "a file path")
    if other in data:
        raise _err(source, other, f"not used by command {command}", data[other], f"{need}: FILE")
    base[need] = data[need]
    for key in ("backend", "cc"):
        if key in data:
            if not isinstance(data[key], str) or not data[key]:
                raise _err(source, key, "not a name", data[key])
            base[key] = data[key]
    if "backend" in base and base["backend"] not in BACKENDS:
        raise _err(source, "backend", "unknown backend", base["backend"], ", ".join(BACKENDS))
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _err(source, "seed", "seed must be an integer >= 0", seed)
    base["seed"] = seed
    if "iterations" in data:
        it = data["iterations"]
        if command != "run":
            raise _err(source, "iterations", "only used by command: run", it)
        if isinstance(it, bool) or not isinstance(it, int) or it < 1:
            raise _err(source, "iterations", "iterations must be an integer >= 1", it)
        base["iterations"] = it
    for key in ("set", "cc_param", "workload_set"):
        value = data.get(key) or {}
        if not isinstance(value, dict):
            raise _err(source, key, "not a mapping", value, "KEY: VALUE lines")
        if key == "workload_set" and value and command != "run":
            raise _err(source, key, "only used by command: run", value)
        base[key] = _flatten(value, source, key)
        if key == "set":
            for k, v in base[key].items():
                _check_set_value(k, v, base, source, f"set.{k}")
    extra = data.get("extra_args") or []
    if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
        raise _err(source, "extra_args", "not a list of strings", extra, "e.g. [--no-trace]")
    base["extra_args"] = list(extra)
    spec_dir = os.path.dirname(os.path.abspath(source))
    base["_dir"] = spec_dir
    base["_topology_is_builder"] = is_builder_expression(base["topology"], spec_dir)
    builders = _builder_names()
    topo_name = base["topology"].partition(":")[0].strip()
    if base["_topology_is_builder"] and builders is not None:
        if topo_name not in builders:
            raise _err(source, "topology", "no such topology file or builder", base["topology"],
                       "a file path (relative to the sweep file) or a builder expression with builder one of "
                       + ", ".join(builders))
        for arg in base["topology"].partition(":")[2].split(","):
            key = arg.partition("=")[0].strip()
            if key and key not in builders[topo_name]:
                raise _err(source, "topology", f"unknown argument of builder {topo_name}", key,
                           ", ".join(builders[topo_name]))

    grid = data.get("grid") or {}
    if not isinstance(grid, dict):
        raise _err(source, "grid", "not a mapping", grid, "AXIS: [VALUES] lines")
    zips_raw = data.get("zip") or []
    zips_raw = [zips_raw] if isinstance(zips_raw, dict) else zips_raw
    if not isinstance(zips_raw, list) or not all(isinstance(g, dict) for g in zips_raw):
        raise _err(source, "zip", "not a mapping (or a list of mappings)", data.get("zip"),
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
                raise _err(source, where, "axis given twice", name, "each axis once, in grid or in one zip group")
            parsed[str(name)] = _axis_values(str(name), values, source, where, base)
            seen.add(str(name))
        lengths = {len(v) for v in parsed.values()}
        if len(lengths) > 1:
            raise _err(source, "zip" if len(zips_raw) == 1 else f"zip[{gi}]", "zipped lists differ in length",
                       {k: len(v) for k, v in parsed.items()}, "lists of equal length")
        if parsed:
            spec_zips.append(parsed)
    if "topology" in seen and any(a.startswith("topology.") for a in seen):
        raise _err(source, "grid/zip", "vary either whole topologies or builder arguments, not both",
                   sorted(a for a in seen if a.startswith("topology")))
    for prefix, axes in [("grid", spec_grid)] + [("zip" if len(spec_zips) == 1 else f"zip[{i}]", z)
                                                 for i, z in enumerate(spec_zips)]:
        for name, values in axes.items():
            if name.startswith("set."):
                for i, v in enumerate(values):
                    _check_set_value(name[4:], v, base, source, f"{prefix}.{name}[{i}]")
    reps = data.get("repetitions", 1)
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise _err(source, "repetitions", "repetitions must be an integer >= 1", reps)
    return SweepSpec(source=source, base=base, grid=spec_grid, zips=spec_zips, repetitions=reps)


def load_sweep(path: str) -> SweepSpec:
    """Read and validate sweep file ``path``; raise :class:`InputError` on any problem."""
    from ..yamlio import load_yaml
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise InputError("sweep file not found", source=path) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read sweep file ({getattr(exc, 'strerror', None) or exc})", source=path,
                         accepted="a YAML sweep file (see docs/sweep.md)") from None
    data = load_yaml(text, path)  # one line for bad, NUL-carrying or too-deep YAML
    return parse_sweep(data, path)
