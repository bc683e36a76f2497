"""HPCC's rate on an uncontended path, for the flow backend's static HPCC model.

HPCC (Li et al., SIGCOMM 2019) keeps every link it crosses at the target
utilisation ``η``: alone on its path a flow measures ``U = 1`` at line rate and
settles at ``η`` of it (Algorithm 1, ``W = W/(U/η) + W_AI``). Its data packets
also carry the INT header (:func:`netsim.transport.telemetry.int_header_bytes`,
``int_max_hops`` hop slots), paid out of the payload as the packet backend
does (``netsim.transport.cc.hpcc``). A lone HPCC flow therefore delivers
payload at ``η · (mss − int) / mss`` of the rate the flow model's wire bytes
assume (``mss = mtu − header``): 0.95 · 1396 / 1438 = 0.922 with the defaults,
against 0.923 measured on the packet backend (one 100 MB flow on a 100 Gb/s
dumbbell). :func:`hpcc_lone_rate_frac` is that fraction, the per-flow rate
cap (``rate_cap_frac``) of the flow model's ``hpcc`` row.

Left out: the additive increase ``W_AI`` above ``η`` (bytes per RTT, under
0.1 % of a 100 Gb/s window), a path MTU other than the network's default
``mtu_bytes``/``header_bytes`` (the fraction is computed once per run, for
those), and the INT bytes of the ACKs (reverse direction).
"""
from __future__ import annotations

from ...transport.cc.hpcc import DEFAULT_PRESET, HPCC, PRESETS
from ...transport.telemetry import int_header_bytes


def hpcc_lone_rate_frac(hpcc_params: dict | None, mss_bytes: int) -> float:
    """Fraction of line rate a lone HPCC flow delivers: ``η · (mss − int) / mss``.

    Parameters
    ----------
    hpcc_params : dict or None
        The run's ``--cc-param`` values of ``hpcc`` (``flow_*`` keys, the flow model's own, ignored);
        ``preset``, ``eta`` and ``int_max_hops`` are read, validated as on the packet backend.
    mss_bytes : int
        Payload bytes of a packet without INT (``mtu_bytes − header_bytes``).

    Returns
    -------
    float
        The fraction, in (0, 1].
    """
    p = HPCC.PARAMS.resolve({k: v for k, v in (hpcc_params or {}).items() if not k.startswith("flow_")},
                            source="--cc-param (hpcc)")
    preset = PRESETS[p.get("preset") or DEFAULT_PRESET]
    eta = float(preset["eta"] if p.get("eta") is None else p["eta"])
    mss = float(mss_bytes)
    payload = max(1.0, mss - int_header_bytes(int(p["int_max_hops"])))
    return min(1.0, eta * payload / mss)
