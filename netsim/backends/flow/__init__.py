"""Flow-level (fluid) backend: max-min fair sharing, event-driven (``--backend flow``).

Importing this package registers the ``flow`` backend factory.
"""
from .backend import FlowBackend, create_flow_backend  # noqa: F401  (registers "flow")
from .maxmin import maxmin_csr  # noqa: F401
