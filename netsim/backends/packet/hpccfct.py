"""HPCC ns-3's ``fct.txt`` rows from the packet backend (``netsim flows --hpcc-fct``).

One line per flow when its sender has the last ACK: source and destination
addresses as HPCC's ns-3 numbers nodes, ports, size, start, FCT and the
standalone FCT it compares with (base RTT + bytes with headers / bottleneck
rate, HPCC's formula). Left out: everything else ns-3 writes.
"""
from __future__ import annotations

from ...units import PS_PER_NS
from ...network.ideal import hops


def hpcc_ip(node_id: int) -> int:
    """HPCC ns-3's address of node ``node_id``: 0x0b000001 + ((id/256)<<16) + ((id%256)<<8)."""
    return 0x0B000001 + ((node_id // 256) << 16) + ((node_id % 256) << 8)


def hpcc_row(be, flow) -> None:
    """Append ``flow``'s line of HPCC ns-3's fct.txt to ``be.hpcc_rows`` (when its last ACK arrives)."""
    if be._node_id is None:
        ids = {}
        for i, n in enumerate(be.graph.nodes):
            ids[n] = int(n) if (isinstance(n, int) or (isinstance(n, str) and n.isdigit())) else i
        be._node_id = ids
    ids = be._node_id
    sid, did = ids[flow.src], ids[flow.dst]
    key = (sid, did)
    sport = be._sport.get(key, 10000)
    be._sport[key] = sport + 1
    tag = flow.record[0]
    text = tag.tag[6:] if tag.tag.startswith("dport=") else tag.tag
    dport = int(text) if text.isdigit() else 100
    _, _, _, path, mtu, hdr, bott = flow.record
    links = hops(be.graph, path)
    mss = mtu - hdr
    base_rtt = 2 * sum(d for _, d in links) + sum(mss * 8e9 / r for r, _ in links)
    total = flow.size + ((flow.size - 1) // mss + 1) * hdr
    standalone = int(base_rtt) + int(total * 8e9 / bott)
    start_ns = (flow.start_ps + 500) // PS_PER_NS
    fct = (flow.ack_end_ps - flow.start_ps + 500) // PS_PER_NS
    be.hpcc_rows.append(f"{hpcc_ip(sid):08x} {hpcc_ip(did):08x} {sport} {dport} {flow.size} "
                       f"{start_ns} {fct} {standalone}")
