"""The packet backend's event scheduler: :mod:`netsim.network.scheduler` (SimPy's fast path lives there,
the one module that knows SimPy's internals); re-exported under its old name for the packet modules.

Left out: nothing of its own.
"""
from ...network.scheduler import NORMAL, Scheduler, events_scheduled  # noqa: F401
