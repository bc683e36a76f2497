"""Congestion-control algorithms as pure state machines (see :mod:`.base`).

Importing this package registers ``none``, ``cubic``, ``dcqcn``, ``dctcp``,
``hpcc``, ``swift`` and ``timely``
in :data:`REGISTRY`. :mod:`.config` resolves ``--cc-param`` overrides and the
network ECN settings an algorithm implies.
"""
from .base import REGISTRY, CongestionControl, NoneCC, register  # noqa: F401
from .cubic import Cubic  # noqa: F401
from .dcqcn import DCQCN, PRESETS as DCQCN_PRESETS  # noqa: F401
from .dctcp import DCTCP  # noqa: F401
from .hpcc import HPCC, PRESETS as HPCC_PRESETS  # noqa: F401
from .swift import Swift  # noqa: F401
from .timely import Timely  # noqa: F401
from .config import cc_class, ecn_overrides, load_cc_params_file, resolve_cc_params  # noqa: F401
