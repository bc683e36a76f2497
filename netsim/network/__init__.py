"""The network layer beneath the backends: resolved network parameters, fabric kinds, paths, flows.

Every backend (``packet``, ``flow``, ``analytic``) is built from this layer and
imports no other backend. Left out: any dynamics (the backends model
them).
"""
