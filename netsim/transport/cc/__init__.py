"""Congestion-control algorithms as pure state machines (see :mod:`.base`)."""
from .base import REGISTRY, CongestionControl, NoneCC, register  # noqa: F401
