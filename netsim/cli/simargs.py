"""Command-line options of a simulation's parameters: ``--cc-param``, ``--cc-params-file``, ``--set``.

Turns the strings of ``netsim flows``, ``netsim run`` and ``netsim cluster``
into the dicts :func:`netsim.simulate.run_flows` and
:func:`netsim.runtime.run_training` take (``{cc_name: {key: value}}`` for
congestion control, ``{key: value}`` for network parameters); the values are
checked against the algorithms' and the network's parameter tables.

Left out: the meaning of the parameters (``netsim.transport.cc.config``,
``netsim.network.params``); this is parsing only.
"""
from __future__ import annotations


def parse_cc_assignments(items, cc: str) -> dict:
    """``--cc-param`` strings to ``{cc_name: {key: value}}``.

    ``KEY=VALUE`` applies to the run's ``cc``; ``CC.KEY=VALUE`` to the
    algorithm named ``CC``.

    >>> parse_cc_assignments(["g=1/256", "cubic.beta=0.7"], "dcqcn")
    {'dcqcn': {'g': '1/256'}, 'cubic': {'beta': '0.7'}}
    """
    from ..params import parse_assignments
    out: dict = {}
    for key, value in parse_assignments(items, what="--cc-param"):
        name, sep, rest = key.partition(".")
        if sep and rest:
            out.setdefault(name, {})[rest] = value
        else:
            out.setdefault(cc, {})[key] = value
    return out


def cc_params_from_cli(cc: str, items=(), file: str | None = None) -> dict:
    """``--cc-params-file FILE`` then ``--cc-param`` strings → ``{cc_name: {key: value}}``.

    The file (YAML/JSON, :func:`netsim.transport.cc.config.load_cc_params_file`)
    holds ``{cc: {key: value}}`` or a flat ``{key: value}`` for ``cc``; the
    command line wins over it. Everything is checked up front with
    :func:`netsim.transport.cc.config.resolve_cc_params` (unknown algorithm or
    key, bad value: :class:`InputError`). Used by ``netsim flows`` and
    ``netsim run`` alike.

    >>> cc_params_from_cli("dcqcn", ["g=1/256", "cubic.beta=0.7"])
    {'dcqcn': {'g': '1/256'}, 'cubic': {'beta': '0.7'}}
    """
    from ..transport.cc.config import load_cc_params_file, resolve_cc_params
    items = list(items or ())
    resolve_cc_params(cc, items, file=file)
    out: dict = load_cc_params_file(file, cc) if file else {}
    for name, over in parse_cc_assignments(items, cc).items():
        out.setdefault(name, {}).update(over)
    return out


def parse_set_assignments(items) -> dict:
    """``--set KEY=VALUE`` strings to a dict (checked later against ``SIM_PARAMS``)."""
    from ..params import parse_assignments
    return dict(parse_assignments(items, what="--set"))
