"""netsim: a discrete-event network simulator for distributed DNN training.

Layers (imports point downward): cli → sweep → analysis → runtime → workloads
→ collectives → backends (packet, flow, analytic) → transport/cc → topology →
units/errors/params/records. See README.md and docs/.
"""

__version__ = "0.1.0"
