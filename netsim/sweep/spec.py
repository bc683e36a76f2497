"""Sweep files: parse and validate ``SWEEP.yaml`` into a :class:`SweepSpec`.

A sweep file names one *base run* — the arguments of ``netsim flows`` or
``netsim run`` — and the *axes* to vary: a ``grid`` (cartesian product), one or
more ``zip`` groups (lists walked together) and ``repetitions`` (the same point
with seeds ``seed``, ``seed + 1``, ...). Expanding the axes into points lives in
:mod:`netsim.sweep.points`; each axis's name and values are checked by
:mod:`netsim.sweep.axes`.

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
from dataclasses import dataclass, field
from typing import Any

from ..backends import BUILTIN_BACKENDS as BACKENDS  # the shipped backends' names
from ..errors import InputError
from .axes import (Scalar, builder_names, check_scalar, check_set_value, field_error,  # noqa: F401
                   is_builder_expression, parse_axes)

COMMANDS = ("flows", "run")
BASE_KEYS = ("name", "description", "command", "topology", "flows", "workload", "backend", "cc",
             "seed", "iterations", "set", "cc_param", "workload_set", "extra_args",
             "grid", "zip", "repetitions")



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




def _flatten(mapping: dict, source: str, where: str, prefix: str = "") -> dict[str, Scalar]:
    out: dict[str, Scalar] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, source, where, name + "."))
        else:
            out[name] = check_scalar(value, source, f"{where}.{name}")
    return out










def _topology_base(value, source: str) -> str:
    """Accept ``"name:k=v,..."``, a path, or ``{builder: name, k: v}``; return a string."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict) and isinstance(value.get("builder"), str):
        args = {k: check_scalar(v, source, f"topology.{k}") for k, v in value.items() if k != "builder"}
        from .points import compose_builder
        return compose_builder(value["builder"], args)
    raise field_error(source, "topology", "not a topology", value,
               "a file path, a builder expression like leaf_spine:leaves=4,spines=2, "
               "or a mapping {builder: NAME, ARG: VALUE, ...}")








def parse_sweep(data: Any, source: str) -> SweepSpec:
    """Validate the parsed YAML ``data`` of sweep file ``source``."""
    if not isinstance(data, dict):
        raise InputError("a sweep file is a YAML mapping", source=source, value=type(data).__name__,
                         accepted="keys " + ", ".join(BASE_KEYS))
    for key in data:
        if key not in BASE_KEYS:
            raise field_error(source, str(key), "unknown key", key, ", ".join(BASE_KEYS))
    command = data.get("command")
    if command not in COMMANDS:
        raise field_error(source, "command", "unknown or missing command", command, "flows or run")
    base: dict[str, Any] = {"command": command}
    if "topology" not in data:
        raise field_error(source, "topology", "missing", None, "a topology file or builder expression")
    base["topology"] = _topology_base(data["topology"], source)
    need, other = ("flows", "workload") if command == "flows" else ("workload", "flows")
    if not isinstance(data.get(need), str) or not data.get(need):
        raise field_error(source, need, f"command {command} needs a {need} file", data.get(need), "a file path")
    if other in data:
        raise field_error(source, other, f"not used by command {command}", data[other], f"{need}: FILE")
    base[need] = data[need]
    for key in ("backend", "cc"):
        if key in data:
            if not isinstance(data[key], str) or not data[key]:
                raise field_error(source, key, "not a name", data[key])
            base[key] = data[key]
    if "backend" in base and base["backend"] not in BACKENDS:
        raise field_error(source, "backend", "unknown backend", base["backend"], ", ".join(BACKENDS))
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise field_error(source, "seed", "seed must be an integer >= 0", seed)
    base["seed"] = seed
    if "iterations" in data:
        it = data["iterations"]
        if command != "run":
            raise field_error(source, "iterations", "only used by command: run", it)
        if isinstance(it, bool) or not isinstance(it, int) or it < 1:
            raise field_error(source, "iterations", "iterations must be an integer >= 1", it)
        base["iterations"] = it
    for key in ("set", "cc_param", "workload_set"):
        value = data.get(key) or {}
        if not isinstance(value, dict):
            raise field_error(source, key, "not a mapping", value, "KEY: VALUE lines")
        if key == "workload_set" and value and command != "run":
            raise field_error(source, key, "only used by command: run", value)
        base[key] = _flatten(value, source, key)
        if key == "set":
            for k, v in base[key].items():
                check_set_value(k, v, base, source, f"set.{k}")
    extra = data.get("extra_args") or []
    if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
        raise field_error(source, "extra_args", "not a list of strings", extra, "e.g. [--no-trace]")
    base["extra_args"] = list(extra)
    spec_dir = os.path.dirname(os.path.abspath(source))
    base["_dir"] = spec_dir
    base["_topology_is_builder"] = is_builder_expression(base["topology"], spec_dir)
    builders = builder_names()
    topo_name = base["topology"].partition(":")[0].strip()
    if base["_topology_is_builder"] and builders is not None:
        if topo_name not in builders:
            raise field_error(source, "topology", "no such topology file or builder", base["topology"],
                       "a file path (relative to the sweep file) or a builder expression with builder one of "
                       + ", ".join(builders))
        for arg in base["topology"].partition(":")[2].split(","):
            key = arg.partition("=")[0].strip()
            if key and key not in builders[topo_name]:
                raise field_error(source, "topology", f"unknown argument of builder {topo_name}", key,
                           ", ".join(builders[topo_name]))

    spec_grid, spec_zips = parse_axes(data, source, base)
    reps = data.get("repetitions", 1)
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise field_error(source, "repetitions", "repetitions must be an integer >= 1", reps)
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
