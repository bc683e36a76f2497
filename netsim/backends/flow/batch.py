"""Batched sends on the flow backend: :meth:`FlowBackend.send_batch` and its arrivals (issue 22).

A collective step whose transfers start at one instant (a ring's first wave,
the next hops posted when a delivery arrives) is handed over as one list of
:class:`~netsim.backends.base.Transfer`. :func:`send_batch` starts them in
that order exactly as :meth:`FlowBackend.send` would one after the other — the
same flow ids (ECMP hashes them), the same path constants, the same start in
the fluid network, before the one settle of the instant — so every rate,
completion and record is the same. What it saves is the work per flow above
the fluid core:

* the default congestion control's controller, priority and lossless class
  are looked up once per batch, not once per flow;
* a flow of a batch has no SimPy event of its own: its
  :class:`BatchMember` (the caller's callback and key) rides in the flow's
  ``event`` slot, and at a completion instant the fluid network
  (:meth:`.fluid.FluidNetwork._on_timer`) gathers the members delivered at one
  time into one :class:`ArrivalGroup` event, which calls the callback once per
  run of consecutive members that share it (the order of delivery is kept:
  a flow delivered by its own event in between, or a rate controller releasing
  a flow, closes the group and later members open a new one).

A transfer the contract has not accepted before (a new pair, an odd size) is
checked as ``send`` checks it; a self-send goes through ``send`` itself (a
local copy) and reports its arrival through its event, as the base class's
unrolled batch does.

Left out: nothing of the model; the flows are the same flows.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import simpy
from simpy.events import NORMAL

from ..base import ArrivalCallback, BatchCallback, Transfer
from .inorder import in_order_sends
from .newflow import UNSEEN, new_flow, resolve

class BatchMember(NamedTuple):
    """What a flow of a batch reports on arrival: ``on_done(keys, records)`` with its ``key``."""

    on_done: Callable
    key: object


class ArrivalGroup(simpy.Event):
    """One SimPy event delivering the batch flows that arrive at one time, in order.

    Built triggered (value ``None``) and scheduled by the fluid network at the delivery time;
    ``members`` and ``records`` are filled in completion order before it is processed.
    """

    def __init__(self, env: simpy.Environment):
        super().__init__(env)
        self._ok = True
        self._value = None
        self.members: list[BatchMember] = []
        self.records: list = []
        self.callbacks.append(self._run)

    def _run(self, _ev) -> None:
        members, recs = self.members, self.records
        n, k = len(members), 0
        while k < n:
            cb = members[k].on_done
            keys, out = [members[k].key], [recs[k]]
            k += 1
            while k < n and members[k].on_done is cb:
                keys.append(members[k].key)
                out.append(recs[k])
                k += 1
            cb(keys, out)


def group_arrival(env, groups: dict, member, rec, end_ps: int) -> "ArrivalGroup":
    """Put send_batch flow ``member``'s record ``rec`` in the open :class:`ArrivalGroup` of delivery
    time ``end_ps`` (ps) in ``groups``, opening and scheduling one on ``env`` if there is none; the group."""
    group = groups.get(end_ps)
    if group is None:
        group = groups[end_ps] = ArrivalGroup(env)
        env.schedule(group, NORMAL, end_ps - env.now)
    group.members.append(member)
    group.records.append(rec)
    return group


def send_batch(backend, transfers: Sequence[Transfer], on_done: BatchCallback,
               keys: Sequence | None = None, connections: Sequence | None = None) -> None:
    """Start ``transfers`` on flow backend ``backend`` now, in order (see the module docstring).

    ``on_done(keys, records)`` is called on arrival with the transfers' ``keys`` (default:
    their positions in ``transfers``) and :class:`~netsim.records.FlowRecord`.
    """
    keys = range(len(transfers)) if keys is None else keys
    now = backend.env.now
    ccname, prio = backend.cc, backend._prio0
    pair_get, start = backend._pair.get, backend._start
    new_tuple = tuple.__new__
    ctl = None
    n = 0
    fifo = None
    if connections is not None:      # each transfer's queue pair: its flow leaves after the pair's earlier ones
        fifo = getattr(backend, "in_order", None) or in_order_sends(backend)
        start = backend._start       # now the FIFO's routing step (inorder.py)
    for i, (t, key) in enumerate(zip(transfers, keys)):
        src, dst, size_bytes, tag = t
        info = resolve(pair_get, src, dst, size_bytes)
        if info is UNSEEN:
            spec = backend.contract.check(src, dst, size_bytes, tag)      # InputError as send's
            if spec.local:                                   # a self-send: send's local copy
                backend.n_flows += n
                n = 0
                ev = backend.send(src, dst, size_bytes, tag)
                ev.callbacks.append(ArrivalCallback(on_done, key))
                continue
            size_bytes, info = spec.size_bytes, None
        if ctl is None:
            ctl = backend.controllers.get(ccname) or backend._controller(ccname)
        fid = backend.next_fid
        backend.next_fid = fid + 1
        member = new_tuple(BatchMember, (on_done, key))    # a BatchMember, without its Python __new__
        f = new_flow(backend, info, src, dst, size_bytes, tag, ccname, prio, ctl, fid, now, member)
        n += 1
        if fifo is not None:
            fifo.key = connections[i]
        start(f, now)
    backend.n_flows += n

