"""Parameters of the analytic backend and its lone-flow formula.

:data:`ANALYTIC_PARAMS`: ``mtu_bytes`` and ``header_bytes`` are the network's
own :data:`netsim.network.params.SIM_PARAMS` entries (so every backend agrees
on wire bytes), plus ``source_sharing``. Every other network ``--set`` name
is checked by the network table and has no effect on this backend. Software
latency of collectives is applied by the collectives layer on every backend
(:mod:`netsim.collectives.protocol`); the former ``sw_latency_ns`` here is an
error pointing there.
"""
from __future__ import annotations

from ...errors import InputError
from ...network.ideal import ideal_fct_exact_ns
from ...network.params import SIM_PARAMS, resolve_params
from ...params import Param, ParamTable

#: the analytic backend's own parameters
_OWN = ("source_sharing",)
#: names that moved elsewhere -> where they went (an error naming it, not "unknown parameter")
_MOVED = {"sw_latency_ns": "the collectives layer: workload collectives.<kind>.sw_latency (off, nccl or "
                           "{launch_ns, step_ns, step_inter_ns}) or run_collective(sw_latency=...), on every backend"}

ANALYTIC_PARAMS = ParamTable("analytic backend", [
    SIM_PARAMS["mtu_bytes"],
    SIM_PARAMS["header_bytes"],
    Param("source_sharing", "fair", "choice",
          "how flows charged to the same bottleneck link share it: fair = equal shares (processor sharing), "
          "as the packet and flow backends' fair queueing / max-min do; fifo = one after another, the "
          "ideal of one ordered stream (NCCL's connection FIFO)",
          "netsim choice (issue #6: the analytic backend must agree with the packet backend without contention)",
          choices=("fair", "fifo")),
])


def check_cc_params(cc_params: dict | None) -> None:
    """Reject an unknown ``cc_params`` entry although the analytic model ignores them.

    A typo must fail the same way on every backend rather than pass silently here.
    """
    from ...transport.cc.config import cc_class
    for name, over in (cc_params or {}).items():
        cc_class(name, where="--cc-param").PARAMS.resolve(dict(over or {}), source=f"--cc-param {name}")


def resolve_analytic_params(params: dict | None) -> dict:
    """Network parameters (:func:`netsim.network.params.resolve_params`) plus the analytic backend's own."""
    params = dict(params or {})
    for key, where_to in _MOVED.items():
        if key in params:
            raise InputError(f"{key} moved to {where_to}", where="--set", value=params[key],
                             accepted="no analytic-backend software latency")
    own = {k: params.pop(k) for k in list(params) if k in _OWN}
    try:
        out = resolve_params(params)
    except InputError:
        for key in params:          # name the analytic table too when a key is unknown everywhere
            if key.split(".")[0] not in SIM_PARAMS:
                raise ANALYTIC_PARAMS.unknown(key, where="--set") from None
        raise
    for key in _OWN:
        out[key] = ANALYTIC_PARAMS.parse_one(key, own[key]) if key in own else ANALYTIC_PARAMS[key].default
    if out["header_bytes"] >= out["mtu_bytes"]:
        raise InputError("header_bytes must be smaller than mtu_bytes", where="--set",
                         value=out["header_bytes"], accepted=f"< {out['mtu_bytes']}")
    return out


def lone_flow_ps(rates_bps: list[float], delays_ns: list[float], size_bytes: int, mtu_bytes: int,
                 header_bytes: int) -> float:
    """Time for a flow alone on a path to deliver its last byte, ps.

    Delegates to :func:`netsim.network.ideal.ideal_fct_exact_ns` (the packet
    backend's exact lone-flow formula), so ``ideal_fct_ns`` agrees across backends.

    >>> lone_flow_ps([8e9, 8e9], [0, 0], 2000, 1000, 0)  # 2 packets of 1 us each, 2 hops
    3000000.0
    """
    return ideal_fct_exact_ns(list(zip(rates_bps, delays_ns)), size_bytes, mtu_bytes, header_bytes) * 1000.0
