"""Flow-level (fluid) backend, event-driven (``--backend flow``).

Modules: :mod:`.backend` (the seam: send, completions, stats), :mod:`.solver`
(components and which solver), :mod:`.maxmin` (vectorized max-min),
:mod:`.portfair` (ingress-port fairness and PFC head-of-line blocking),
:mod:`.ccmodel` (congestion control as efficiency / cap / ramp),
:mod:`.settings` (parameters), :mod:`.scenarios` and :mod:`.calibrate`
(comparison with the packet backend). Importing this package registers the
``flow`` backend factory.
"""
from .backend import FlowBackend, create_flow_backend  # noqa: F401  (registers "flow")
from .settings import FLOW_PARAMS  # noqa: F401
