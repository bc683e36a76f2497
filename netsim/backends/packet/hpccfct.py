"""The packet backend's part of HPCC ns-3's ``fct.txt`` (``netsim flows --hpcc-fct``): measured ACK times.

When a flow's sender has the last ACK, its FCT to that instant is recorded
by flow id; :mod:`netsim.hpccfct` writes the file (addresses, ports, size,
start, this FCT, HPCC's standalone FCT) the same way for every backend.
"""
from __future__ import annotations

from ...units import PS_PER_NS


def hpcc_ip(node_id: int) -> int:
    """HPCC ns-3's address of node ``node_id``: 0x0b000001 + ((id/256)<<16) + ((id%256)<<8)."""
    return 0x0B000001 + ((node_id // 256) << 16) + ((node_id % 256) << 8)


def hpcc_row(be, flow) -> None:
    """Record ``flow``'s HPCC FCT (start to the sender's last ACK, ns) in ``be.hpcc_ack_fct_ns``.

    :func:`netsim.hpccfct.write_fct_txt` writes the lines, the same for every backend.
    """
    be.hpcc_ack_fct_ns[flow.fid] = (flow.ack_end_ps - flow.start_ps + 500) // PS_PER_NS
