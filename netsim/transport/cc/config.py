"""Resolving congestion-control parameters from the CLI and files.

``--cc-param KEY=VALUE`` applies to the ``--cc`` algorithm;
``--cc-param CC.KEY=VALUE`` (e.g. ``dcqcn.g=1/256``) to a named one, so several
algorithms can share a run (per-flow ``cc`` in the flow file). A file given with
``--cc-params-file`` (YAML or JSON) holds either ``{cc: {key: value}}`` or a
flat ``{key: value}`` for the ``--cc`` algorithm; command-line values win over
the file. Unknown algorithms or keys are an :class:`InputError` listing the
accepted ones.

The network side of an algorithm (DCQCN's Kmin/Kmax/Pmax, DCTCP's K) is given
by :func:`ecn_overrides`, which ``run_flows`` applies *under* the user's
``--set`` values.

>>> out = resolve_cc_params("dcqcn", ["g=1/128", "cubic.beta=0.8"])
>>> out["dcqcn"]["g"], out["cubic"]["beta"], out["dcqcn"]["preset"]
(0.0078125, 0.8, 'hpcc')
"""
from __future__ import annotations

import json
import os
from typing import Iterable, Mapping

from ...errors import InputError
from ...params import parse_assignments
from . import cc_names, load_cc
from .base import REGISTRY, CongestionControl


def cc_class(name: str, *, where: str | None = "--cc", source: str | None = None) -> type[CongestionControl]:
    """The registered algorithm ``name`` or an :class:`InputError` listing them.

    Imports only that algorithm's module (every built-in one only to list them in the error).
    """
    cls = load_cc(str(name).strip().lower())
    if cls is None:
        _load_all()
        raise InputError("unknown congestion control", source=source, where=where, value=name,
                         accepted="one of: " + ", ".join(sorted(REGISTRY)))
    return cls


def _load_all() -> None:
    from . import cubic, dcqcn, dctcp, hpcc, swift, timely  # noqa: F401  (registration side effect)


def load_cc_params_file(path: str, cc_name: str) -> dict[str, dict]:
    """Read ``{cc: {key: value}}`` (or flat ``{key: value}`` for ``cc_name``) from YAML/JSON."""
    if not os.path.exists(path):
        raise InputError("file not found", source=path, where="--cc-params-file")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise InputError("not a text (UTF-8) file", source=path, where="--cc-params-file",
                         accepted="a YAML or JSON mapping {cc: {key: value}} or {key: value}") from None
    if "\x00" in text:
        raise InputError("NUL byte in file", source=path, where="--cc-params-file",
                         accepted="a YAML or JSON text file")
    try:
        if path.lower().endswith(".json"):
            data = json.loads(text)
        else:
            from ...yamlio import load_yaml
            data = load_yaml(text, path)  # one line for bad, NUL-carrying or too-deep YAML
    except InputError:
        raise
    except Exception as exc:  # json.JSONDecodeError, RecursionError
        raise InputError(f"cannot parse: {str(exc).splitlines()[0]}", source=path,
                         accepted="a YAML or JSON mapping {cc: {key: value}} or {key: value}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise InputError("expected a mapping", source=path, value=type(data).__name__,
                         accepted="{cc: {key: value}} or {key: value}")
    out: dict[str, dict] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            cls = cc_class(key, where=f"key {key}", source=path)
            out.setdefault(cls.name, {}).update({str(k): v for k, v in value.items()})
        else:
            out.setdefault(cc_name, {})[str(key)] = value
    return out


def resolve_cc_params(cc_name: str, overrides: Iterable[str] | None = None, *,
                      file: str | None = None) -> Mapping[str, dict]:
    """Parsed parameters of every known algorithm, ``{cc: {key: value}}``.

    ``overrides`` are ``"KEY=VALUE"`` (for ``cc_name``) or ``"CC.KEY=VALUE"``
    strings; ``file`` an optional YAML/JSON file (overridden by ``overrides``).
    DCQCN keys left at ``None`` are filled from its preset when a flow starts
    (they can depend on the link rate). The algorithms named (``cc_name``, the
    file, the overrides) are checked now; every other algorithm's defaults are
    resolved when first read, so a run imports only the algorithms it names.
    """
    main = cc_class(cc_name)
    from_file = load_cc_params_file(file, main.name) if file else {}
    cli: dict[str, dict] = {}
    for key, value in parse_assignments(overrides or (), what="--cc-param"):
        name = main.name
        if "." in key:
            prefix, key = key.split(".", 1)
            name = cc_class(prefix, where="--cc-param").name
        cli.setdefault(name, {})[key] = value
    out = _ResolvedParams()
    for name in sorted({main.name} | set(from_file) | set(cli)):
        table = cc_class(name).PARAMS
        base = table.resolve(from_file.get(name), source=file) if name in from_file else None
        if base is not None:
            base = {k: v for k, v in base.items() if k in from_file[name]}
        out.resolved[name] = table.resolve(cli.get(name), base=base, source=f"--cc-param {name}")
    return out


class _ResolvedParams(Mapping):
    """``{cc: params}`` over every known algorithm; an algorithm not named is resolved (defaults) when read."""

    def __init__(self) -> None:
        self.resolved: dict[str, dict] = {}

    def __getitem__(self, name: str) -> dict:
        if name not in self.resolved:
            cls = load_cc(name)
            if cls is None:
                raise KeyError(name)
            self.resolved[name] = cls.PARAMS.resolve(None, source=f"--cc-param {name}")
        return self.resolved[name]

    def __iter__(self):
        return iter(sorted(set(cc_names()) | set(self.resolved)))

    def __len__(self) -> int:
        return len(set(cc_names()) | set(self.resolved))


def ecn_overrides(cc_name: str, params: Mapping | None, link_rate_bps: float, *,
                  mtu_bytes: int = 1500, base_rtt_ns: int | None = None) -> dict:
    """Network ECN parameters an algorithm implies on a port of ``link_rate_bps``.

    ``{}`` for algorithms without switch-side settings (none, cubic). Apply them
    on top of the network defaults and *under* the user's ``--set`` values.

    >>> ecn_overrides("dctcp", {"k_bytes": 30000}, 10e9)
    {'ecn_kmin_bytes': 30000, 'ecn_kmax_bytes': 30000, 'ecn_pmax': 1.0, 'ecn_mark_at': 'enqueue'}
    >>> ecn_overrides("cubic", {}, 10e9)
    {}
    """
    cls = cc_class(cc_name)
    fn = cls.ecn_settings
    if fn is None:
        return {}
    full = cls.PARAMS.resolve(dict(params or {}))
    return fn(full, link_rate_bps, mtu_bytes=mtu_bytes, base_rtt_ns=base_rtt_ns)
