"""Reliable transport: what carries a flow's bytes and drives its congestion control.

* :mod:`.packet` — the slotted packet object;
* :mod:`.flow` — sender + receiver state common to both flavours (window,
  pacing, the single retransmit timer, ACK generation);
* :mod:`.tcp` — cumulative ACKs, fast retransmit, NewReno, RFC 6298 RTO,
  ECN echo, optional delayed ACKs;
* :mod:`.roce` — go-back-N with NACKs, CNP generation (DCQCN's NP);
* :mod:`.rto` — the RFC 6298 estimator;
* :mod:`.cc` — congestion-control algorithms as pure state machines.

A flow uses the transport named by its algorithm's ``transport`` attribute.
"""
