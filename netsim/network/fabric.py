"""Fabric vocabulary shared by every backend: link kinds, endpoint kinds, priorities, size limit.

What is modelled: which topology edge kinds leave a server (the fabric, where
a NIC's line rate, ECN/PFC and the host stack apply), which node kinds may
start or end a flow, the IEEE 802.1p data priorities, and the largest flow a
backend accepts. Left out: anything about a particular backend's queues (the
packet backend adds one control class above the data priorities:
:data:`netsim.transport.packet.CONTROL_PRIORITY`).

>>> sorted(FABRIC_KINDS), sorted(ENDPOINT_KINDS), DATA_PRIORITIES[-1]
(['ethernet', 'infiniband'], ['gpu', 'host'], 7)
"""
from __future__ import annotations

from ..topology.schema import ENDPOINT_KINDS

__all__ = ["DATA_PRIORITIES", "ENDPOINT_KINDS", "FABRIC_KINDS", "MAX_FLOW_BYTES", "MAX_PRIORITY",
           "N_DATA_PRIORITIES"]

#: edge kinds of the fabric: links that leave a server through a NIC (everything else is
#: NVLink / PCIe inside a server). Source: topology contract, docs/topology.md.
FABRIC_KINDS = frozenset({"ethernet", "infiniband"})

#: number of data priorities (traffic classes), IEEE 802.1p / 802.1Qbb: 8 (0..7)
N_DATA_PRIORITIES = 8
#: the data priorities 0..7 a flow may carry
DATA_PRIORITIES = tuple(range(N_DATA_PRIORITIES))
#: the highest data priority (IEEE 802.1p: eight priorities)
MAX_PRIORITY = N_DATA_PRIORITIES - 1

#: largest flow size in bytes: every byte count up to 2**53 (9 PB) is exact as a float, which the
#: rate models and the analytic closed forms use (IEEE 754 binary64 has a 53-bit significand)
MAX_FLOW_BYTES = 2**53
