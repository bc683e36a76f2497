"""Analytic backend (``--backend analytic``): closed-form alpha-beta cost per flow.

:mod:`.backend` holds the model (see its docstring for what is modelled and
left out), :mod:`.pathcost` a flow's cost on its path alone, :mod:`.sharing`
the sharing of a pacing link, :mod:`.contention` what the model does not
share, :mod:`.params` its parameters and lone-flow formula. Importing this
package registers the ``analytic`` backend.
"""
from .backend import AnalyticBackend, create_analytic  # noqa: F401
from .params import ANALYTIC_PARAMS, lone_flow_ps, resolve_analytic_params  # noqa: F401
