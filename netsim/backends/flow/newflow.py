"""One flow of the flow backend built from its send: the code ``send`` and ``send_batch`` share.

:func:`resolve` turns ``(src, dst, size_bytes)`` into the pair's
:class:`~.paths.PathInfo` when the send contract accepted that pair before
(``None`` otherwise: the caller asks the contract); :func:`new_flow` builds
the :class:`~.components.FluidFlow` from the path's constants, the
algorithm's rate controller and the flow's ECMP key
(:mod:`netsim.network.flowkey`), and admits it to a dynamic controller.
``send`` and ``send_batch`` differ only in the completion object (a SimPy
event, a batch member) and in how a rejected or local send is reported.

Left out: nothing of the model; this is the flow's set-up only.
"""
from __future__ import annotations

from ...network.fabric import MAX_FLOW_BYTES
from .components import FluidFlow, SlowStart

#: a pair not in the path table yet (the contract has not accepted it)
UNSEEN = object()
#: ``FluidFlow.bkey`` of a flow of ``send``: its ``event`` is a SimPy event (a ``send_batch`` flow's
#: ``bkey`` is its batch key, its ``event`` the batch's callback)
SOLO = object()


def resolve(pair_get, src, dst, size_bytes):
    """The pair's path info when a plain send of ``size_bytes`` needs no contract check, else
    :data:`UNSEEN` (an unknown or unhashable pair, or a size the contract must check or convert)."""
    try:
        info = pair_get((src, dst), UNSEEN)   # in the path table: the contract accepted the pair before
    except TypeError:                         # unhashable: the contract reports it
        return UNSEEN
    if type(size_bytes) is not int or not 0 < size_bytes <= MAX_FLOW_BYTES:
        return UNSEEN
    return info


def new_flow(be, info, src: str, dst: str, size_bytes: int, tag, ccname: str, prio: int, ctl,
             fid: int, now: int, event, bkey=SOLO) -> FluidFlow:
    """The flow ``fid`` of ``size_bytes`` from ``src`` to ``dst`` started at ``now`` (ps) on flow
    backend ``be``; ``info`` its pair's path info or ``None`` (routed here on the flow's ECMP key);
    ``event`` the SimPy event its completion succeeds (``bkey`` :data:`SOLO`), or the
    ``send_batch`` callback told of its arrival with key ``bkey``. Not yet started on its links."""
    key = be._flowkey(src, dst, tag)
    if info is None:
        info = be._lookup(src, dst, key)
    consts = info.shared.get((size_bytes, ccname))        # PathTable.flow_consts' cache, read inline
    if consts is None:     # first flow of this size and algorithm on paths like this one
        be.contract.check_path(ccname, be.paths.pathmodel.path(info.path), be.cc_params, src, dst)
        consts = be._flow_consts(info, size_bytes, ctl)
    wire, ideal_ns, lat, cap = consts                        # (a FlowConsts)
    if info.switched:
        be.switched_flows += 1
    model = ctl.cc_model
    f = FluidFlow()
    f.fid = fid
    f.key = key
    f.src = src
    f.dst = dst
    f.size = size_bytes
    f.start_ps = f.t_upd = now
    f.links = info.links
    f.rem = wire
    f.rate = 0.0
    f.finish = -1
    f.ver = 0
    f.cap = cap
    bott = f.bott = info.bott
    f.solo = bott if bott < cap else cap
    f.ideal_ns = ideal_ns
    f.lat_ps = lat
    f.event = event
    f.bkey = bkey
    f.conn = None
    f.tag = tag
    f.cc = ccname
    f.prio = prio
    f.eta = model.efficiency
    if prio in be._lossless_prios:
        f.lossless = True
        w = info.consts.get(ccname, UNSEEN)     # the standing window (pausegate.py), cached by algorithm
        f.win = be._window(info, ccname) if w is UNSEEN else w
    else:
        f.lossless = False
        f.win = None
    f.mtu = info.mtu
    f.rp = None
    f.held = f.pf = False
    if model.init_cwnd_pkts and model.ramp_scale > 0.0:
        charged = min(bott, model.rate_cap(info.first_rate))   # as in the latency term
        f.ramp = SlowStart(model, info.rtt, charged, charged)
    else:
        f.ramp = None
    f.ctl = ctl if ctl.dynamic and ctl.admit(f, info, cap, now) else None
    return f
