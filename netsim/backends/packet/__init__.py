"""Packet-level SimPy backend (the reference): ports, queues, ECN, PFC, ECMP.

Importing this package registers the ``packet`` backend.
"""
from .backend import PacketBackend  # noqa: F401
from ...network.params import SIM_PARAMS, resolve_params  # noqa: F401
