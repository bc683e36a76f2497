"""Expand a :class:`~netsim.sweep.spec.SweepSpec` into points, each a full command line.

A point is the base run with some fields replaced. Its *canonical parameters*
(paths as written in the sweep file, values as typed there) are serialised as
sorted, compact JSON and hashed with SHA-256; the first 16 hex digits name the
point's folder, so the same point always lands in the same folder — which is
what ``--resume`` relies on. Point order is deterministic: the grid's cartesian
product (first axis slowest), then each zip group, then repetitions fastest.

Left out: hashing the *contents* of the files a point reads; editing a flow or
workload file between an interrupted sweep and its ``--resume`` is not noticed.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from .axes import is_builder_expression
from .spec import SweepSpec

ID_HEX_DIGITS = 16


@dataclass(frozen=True)
class Point:
    """One run of a sweep.

    Attributes
    ----------
    index : int
        Position in the sweep (row order of ``results.csv``).
    point_id : str
        Stable hash of ``params``; the folder name under ``DIR/points``.
    axes : dict
        The varied values of this point, by axis name (plus ``repetition``).
    params : dict
        Canonical parameters of the whole run (what the hash covers).
    argv : list of str
        ``netsim`` arguments without ``--out`` (paths made absolute).
    """

    index: int
    point_id: str
    axes: dict[str, Any]
    params: dict[str, Any]
    argv: list[str]

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form shipped to a Dask worker and written to ``point.json``."""
        return {"index": self.index, "point_id": self.point_id, "axes": self.axes,
                "params": self.params, "argv": self.argv}


def format_value(value: Any) -> str:
    """Render a YAML scalar as it is written on a netsim command line.

    >>> [format_value(v) for v in (True, 4, 0.5, "10KB", ["roce", "infiniband"])]
    ['true', '4', '0.5', '10KB', 'roce|infiniband']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):  # builder expressions write lists as a|b
        return "|".join(format_value(v) for v in value)
    return repr(value) if isinstance(value, float) else str(value)


def parse_builder(expr: str) -> tuple[str, dict[str, str]]:
    """Split ``"name:k=v,k=v"`` into its name and ordered arguments.

    >>> parse_builder("leaf_spine:leaves=4,spines=2")
    ('leaf_spine', {'leaves': '4', 'spines': '2'})
    """
    name, _, rest = expr.partition(":")
    args: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise InputError("malformed builder argument", value=part, accepted="KEY=VALUE")
        args[key.strip()] = value.strip()
    return name.strip(), args


def compose_builder(name: str, args: dict[str, Any]) -> str:
    """Inverse of :func:`parse_builder`.

    >>> compose_builder("dumbbell", {"hosts": 4, "rate": "100Gbps"})
    'dumbbell:hosts=4,rate=100Gbps'
    """
    if not args:
        return name
    return name + ":" + ",".join(f"{k}={format_value(v)}" for k, v in args.items())


def point_id(params: dict[str, Any]) -> str:
    """Stable hash of canonical parameters (independent of key order and process).

    >>> point_id({"b": 1, "a": "x"}) == point_id({"a": "x", "b": 1})
    True
    """
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_HEX_DIGITS]


def _resolve(path: str, spec: SweepSpec, where: str) -> str:
    """A path relative to the sweep file's folder, else to the current folder."""
    if os.path.isabs(path):
        candidates = [path]
    else:
        candidates = [os.path.join(spec.base_dir, path), path]
    for cand in candidates:
        if os.path.exists(cand):
            return os.path.abspath(cand)
    raise InputError("file not found", source=spec.source, where=f"field {where}", value=path,
                     accepted="a path relative to the sweep file's folder or to the current folder")


def _apply(params: dict[str, Any], axis: str, value: Any, spec: SweepSpec) -> None:
    head, _, rest = axis.partition(".")
    if not rest:
        params[axis] = value
    elif head == "topology":
        name, args = parse_builder(params["topology"])
        args[rest] = format_value(value)
        params["topology"] = compose_builder(name, args)
    elif head == "workload":
        params["workload_set"][rest] = value
    else:
        params[head][rest] = value


def _argv(params: dict[str, Any], spec: SweepSpec) -> list[str]:
    topo = params["topology"]
    topo_arg = topo if is_builder_expression(topo, spec.base_dir) else _resolve(topo, spec, "topology")
    second = "flows" if params["command"] == "flows" else "workload"
    argv = [params["command"], topo_arg, _resolve(params[second], spec, second)]
    for key, flag in (("backend", "--backend"), ("cc", "--cc"), ("iterations", "--iterations"),
                      ("seed", "--seed")):
        if params.get(key) is not None:
            argv += [flag, format_value(params[key])]
    for key, flag in (("set", "--set"), ("cc_param", "--cc-param"), ("workload_set", "--workload-set")):
        for name, value in params[key].items():
            argv += [flag, f"{name}={format_value(value)}"]
    return argv + list(params["extra_args"])


def expand(spec: SweepSpec) -> list[Point]:
    """All points of ``spec`` in sweep order; raises :class:`InputError` on duplicates."""
    base = {k: v for k, v in spec.base.items() if not k.startswith("_")}
    grid_axes = list(spec.grid)
    grid_rows = list(itertools.product(*(spec.grid[a] for a in grid_axes)))
    zip_groups = [list(zip(*g.values())) for g in spec.zips]
    zip_axes = [list(g) for g in spec.zips]
    points: list[Point] = []
    seen: dict[str, int] = {}
    combos = itertools.product(grid_rows, *zip_groups) if zip_groups else ((row,) for row in grid_rows)
    for combo in combos:
        axes: dict[str, Any] = dict(zip(grid_axes, combo[0]))
        for names, row in zip(zip_axes, combo[1:]):
            axes.update(zip(names, row))
        for rep in range(spec.repetitions):
            params = copy.deepcopy(base)
            for axis, value in axes.items():
                _apply(params, axis, value, spec)
            params["seed"] = int(params["seed"]) + rep
            point_axes = dict(axes)
            if spec.repetitions > 1:
                point_axes["repetition"] = rep
            if "seed" not in point_axes:
                point_axes["seed"] = params["seed"]
            pid = point_id(params)
            if pid in seen:
                raise InputError("two points have identical parameters", source=spec.source,
                                 where="field grid/zip", value=point_axes,
                                 accepted="distinct values on every axis")
            seen[pid] = len(points)
            points.append(Point(len(points), pid, point_axes, params, _argv(params, spec)))
    _check_workloads(points, spec)
    return points


def _check_workloads(points: list[Point], spec: SweepSpec) -> None:
    """Every ``run`` point's workload with all its ``workload.FIELD`` values, validated now (also by
    ``--dry-run``): an unknown schedule or a batch that does not divide never waits for its point to run.
    What needs the topology (GPU counts, placement) is checked when the point runs."""
    from ..workloads import load_workload
    done: set = set()
    for pt in points:
        if pt.params.get("command") != "run" or not pt.params.get("workload_set"):
            continue
        try:
            path = _resolve(pt.params["workload"], spec, "workload")
        except InputError:
            return   # a missing file is reported where the point's command is built
        key = (path, tuple(sorted((k, repr(v)) for k, v in pt.params["workload_set"].items())))
        if key in done:
            continue
        done.add(key)
        try:
            load_workload(path, overrides=dict(pt.params["workload_set"]))
        except InputError as exc:
            text = str(exc)
            text = text[len(path) + 2:] if text.startswith(path + ": ") else text
            raise InputError(f"point {pt.index} is not a valid workload ({text})", source=spec.source,
                             where="field grid/zip", value={k: v for k, v in pt.axes.items() if k != "seed"},
                             accepted="workload values that load_workload accepts (see docs/workloads.md)") from None
