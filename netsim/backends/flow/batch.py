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
* a flow of a batch has no SimPy event of its own: the caller's callback
  rides in the flow's ``event`` slot and its key in ``bkey`` (no object per
  flow), and at a completion instant the fluid network
  (:func:`.completions.complete_due`) gathers the flows delivered at one
  time into one :class:`ArrivalGroup` event, which calls the callback once per
  run of consecutive flows that share it, at most :data:`ARRIVALS_PER_CALL`
  at a time (the order of delivery is kept:
  a flow delivered by its own event in between, or a rate controller releasing
  a flow, closes the group and later flows open a new one).

A transfer the contract has not accepted before (a new pair, an odd size) is
checked as ``send`` checks it; a self-send goes through ``send`` itself (a
local copy) and reports its arrival through its event, as the base class's
unrolled batch does.

Left out: nothing of the model; the flows are the same flows.
"""
from __future__ import annotations

from itertools import repeat
from typing import Callable, Sequence

import simpy
from simpy.events import NORMAL

from ...network.fabric import MAX_FLOW_BYTES
from ..base import ArrivalCallback, BatchCallback, Transfer
from .inorder import in_order_sends
from .newflow import UNSEEN, new_flow

#: most arrivals handed to one batch callback call (a longer run of one callback is cut into calls of
#: this many, in order): the objects the next sends build while the arrivals' keys and records are
#: still held stay below CPython's generation-0 threshold (700 allocations), so they die young by
#: reference count instead of triggering collections that move them to older generations. Measured
#: on the ring all-reduce of ``bench flow_ring_allreduce_256`` (256 arrivals an instant): the run of
#: one callback in one call made 979 generation-0 and 8 full collections.
ARRIVALS_PER_CALL = 32

class ArrivalGroup(simpy.Event):
    """One SimPy event delivering the batch flows that arrive at one time, in order.

    Built triggered (value ``None``) and scheduled by the fluid network at the delivery time;
    ``callbacks_of``, ``keys`` and ``records`` (one entry per flow: its batch's callback, its key,
    its record) are filled in completion order before it is processed.
    """

    def __init__(self, env: simpy.Environment):
        super().__init__(env)
        self._ok = True
        self._value = None
        self.callbacks_of: list[Callable] = []
        self.keys: list = []
        self.records: list = []
        self.callbacks.append(self._run)

    def _run(self, _ev) -> None:
        cbs, keys, recs = self.callbacks_of, self.keys, self.records
        n, k = len(cbs), 0
        while k < n:                    # a run of one callback, at most ARRIVALS_PER_CALL long
            cb = cbs[k]
            end = min(n, k + ARRIVALS_PER_CALL)
            j = k + 1
            while j < end and cbs[j] is cb:
                j += 1
            ks, rs = keys[k:j], recs[k:j]
            for i in range(k, j):       # let go: what the callback drops (its keys, records) is freed after it
                keys[i] = recs[i] = None
            cb(ks, rs)
            k = j


def group_arrival(env, groups: dict, on_done, key, rec, end_ps: int) -> "ArrivalGroup":
    """Put the record ``rec`` of the send_batch flow with callback ``on_done`` and key ``key`` in
    the open :class:`ArrivalGroup` of delivery time ``end_ps`` (ps) in ``groups``, opening and
    scheduling one on ``env`` if there is none; the group."""
    group = groups.get(end_ps)
    if group is None:
        group = groups[end_ps] = ArrivalGroup(env)
        env.schedule(group, NORMAL, end_ps - env.now)
    group.callbacks_of.append(on_done)
    group.keys.append(key)
    group.records.append(rec)
    return group


def send_batch(backend, transfers: Sequence[Transfer], on_done: BatchCallback,
               keys: Sequence | None = None, connections: Sequence | None = None) -> None:
    """Start ``transfers`` on flow backend ``backend`` now, in order (see the module docstring).

    ``on_done(keys, records)`` is called on arrival with the transfers' ``keys`` (default:
    their positions in ``transfers``) and :class:`~netsim.records.FlowRecord`; ``connections``
    (one hashable key per transfer, or ``None``): the queue pair each flow leaves in order on.
    """
    keys = range(len(transfers)) if keys is None else keys
    now = backend.env.now
    ccname, prio = backend.cc, backend._prio0
    pair_get = backend._pair.get
    ctl = None
    n = 0
    if connections is None:
        start, connections = backend._start, repeat(None)
    else:                # each transfer's queue pair: its flow leaves after the pair's earlier ones
        start = (backend.in_order or in_order_sends(backend)).enter
    for t, key, conn in zip(transfers, keys, connections):
        src, dst, size_bytes, tag = t
        try:             # the pair's path info when the contract accepted the pair before (resolve, inline)
            info = pair_get((src, dst), UNSEEN)
        except TypeError:
            info = UNSEEN
        if info is UNSEEN or type(size_bytes) is not int or not 0 < size_bytes <= MAX_FLOW_BYTES:
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
        f = new_flow(backend, info, src, dst, size_bytes, tag, ccname, prio, ctl, fid, now, on_done, key)
        n += 1
        if conn is None:
            start(f, now)
        else:
            start(conn, f, now)
    backend.n_flows += n
