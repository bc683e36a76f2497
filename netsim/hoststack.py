"""Host network stack cost: what the transport costs on the end host.

Queueing in the fabric does not explain APNet'24's RoCE-vs-TCP gap (2–2.5×
less communication time with RoCEv2): the host does.  Kernel TCP pays CPU
time per message (system call, socket wake-up, NCCL's socket proxy thread)
and per byte (the copy between user and kernel buffers, checksums without
offload), and one connection is processed by one core, so it tops out below
a fast NIC's line rate.  RDMA (RoCEv2, InfiniBand) offloads the transport to
the NIC and moves data by DMA: near-zero host cost, line-rate connections.

The model, applied by a backend in ``send()`` to every flow that leaves its
server through a NIC (not to NVLink/PCIe-only flows, which do not use the NIC;
the one rule for which flows pay and at which line rate is
:meth:`netsim.network.path.PathModel.host_cost`):

* start delay: :meth:`HostStack.message_overhead_ns` (per-message CPU time);
* per-connection rate cap: :meth:`HostStack.rate_cap_bps` =
  ``min(line rate, streams × 8 / cpu_ns_per_byte)`` for TCP; line rate for
  RDMA.

Every value is a named :class:`~netsim.params.Param` with its source; change
them with ``--set host.KEY=VALUE`` (backends forward ``host.*`` keys here).
Left out: CPU contention between connections of one host (each connection
gets its own core), interrupt coalescing, receive-side scaling, zero-copy
TCP (MSG_ZEROCOPY / devmem TCP), GPUDirect for sockets.

>>> hs = HostStack()
>>> hs.rate_cap_bps("roce", 100e9), round(hs.rate_cap_bps("tcp", 100e9) / 1e9, 1)
(100000000000.0, 42.0)
>>> hs.message_overhead_ns("tcp", 1 << 20) > hs.message_overhead_ns("roce", 1 << 20)
True
"""
from __future__ import annotations

from .errors import InputError
from .params import Param, ParamTable

_CAI = ("Cai et al., 'Understanding Host Network Stack Overheads', SIGCOMM 2021: one long TCP flow with "
        "TSO/GRO/jumbo frames/aRFS reaches ~42 Gbps per core on a 100 Gbps link; the receiver's "
        "kernel-to-user copy is the bottleneck")
_DCQCN = ("Zhu et al., 'Congestion Control for Large-Scale RDMA Deployments' (DCQCN), SIGCOMM 2015, §1: the "
          "kernel TCP/IP stack adds tens of microseconds of latency and burns CPU; RDMA a few microseconds")

HOST_PARAMS = ParamTable("host stack", [
    Param("tcp_message_overhead_ns", 10_000, "time",
          "host CPU time per message on kernel TCP (send/recv system calls, wake-up, NCCL socket proxy), "
          "added before the flow starts",
          _DCQCN + "; ~half a kernel round trip of ~20 us", minimum=0),
    Param("tcp_cpu_ns_per_byte", 8 / 42.0, "float",
          "host CPU time per payload byte on kernel TCP (copy, checksum); caps one connection at "
          "8/x Gbit/s", _CAI, minimum=0.0),
    Param("tcp_streams", 1, "int",
          "TCP sockets (each on its own core) carrying one flow",
          "NCCL docs: NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD both default to 1 on generic hosts",
          minimum=1),
    Param("rdma_message_overhead_ns", 0, "time",
          "host CPU time per message on RDMA (verbs post + completion polling overlap the transfer)",
          "RDMA offloads the transport to the NIC (" + _DCQCN + "); NCCL's own per-call latency is "
          "the collectives layer's sw_latency (netsim.collectives.protocol)", minimum=0),
])

#: transport names: what a congestion-control class's ``transport`` attribute says, plus ``ib``
TRANSPORTS = ("tcp", "roce", "ib")
#: the transport a NIC kind implies (topology ``nic_kind`` attribute)
NIC_TRANSPORT = {"ethernet": "tcp", "roce": "roce", "infiniband": "ib"}


class HostStack:
    """Per-message and per-byte host costs of a transport.

    Parameters
    ----------
    params : dict, optional
        Overrides of :data:`HOST_PARAMS` (strings with units accepted).
    """

    __slots__ = ("p", "_tcp_cap")

    def __init__(self, params: dict | None = None):
        self.p = HOST_PARAMS.resolve(params or {})
        per_byte = self.p["tcp_cpu_ns_per_byte"]
        self._tcp_cap = float("inf") if per_byte <= 0 else self.p["tcp_streams"] * 8e9 / per_byte

    @staticmethod
    def _check(transport: str) -> str:
        if transport not in TRANSPORTS:
            raise InputError("unknown transport", where="host stack", value=transport,
                             accepted="one of " + ", ".join(TRANSPORTS))
        return transport

    def message_overhead_ns(self, transport: str, size_bytes: int = 0) -> int:
        """Host time before a message of ``size_bytes`` starts moving, ns.

        TCP: ``tcp_message_overhead_ns``; RDMA: ``rdma_message_overhead_ns``.
        (The per-byte cost overlaps the transfer; it shows as the rate cap.)
        """
        if self._check(transport) == "tcp":
            return int(self.p["tcp_message_overhead_ns"])
        return int(self.p["rdma_message_overhead_ns"])

    def rate_cap_bps(self, transport: str, line_rate_bps: float) -> float:
        """Highest rate one connection of ``transport`` sustains on a NIC of ``line_rate_bps``."""
        if self._check(transport) == "tcp":
            return min(float(line_rate_bps), self._tcp_cap)
        return float(line_rate_bps)

    def cpu_ns(self, transport: str, size_bytes: int) -> float:
        """Total host CPU time a message costs (reporting): per message + per byte × size."""
        if self._check(transport) == "tcp":
            return self.p["tcp_message_overhead_ns"] + self.p["tcp_cpu_ns_per_byte"] * size_bytes
        return float(self.p["rdma_message_overhead_ns"])

    def message_time_ns(self, transport: str, size_bytes: int, line_rate_bps: float) -> float:
        """Closed form of a lone message: overhead + size at the capped rate (the tests' oracle)."""
        return self.message_overhead_ns(transport, size_bytes) + \
            size_bytes * 8e9 / self.rate_cap_bps(transport, line_rate_bps)


def transport_of(cc_name: str | None) -> str:
    """Transport of a congestion-control algorithm (its class's ``transport``); ``none`` → ``roce``.

    >>> transport_of("cubic"), transport_of("dcqcn")
    ('tcp', 'roce')
    """
    if not cc_name or cc_name == "none":
        return "roce"
    from .transport.cc import load_cc
    cls = load_cc(cc_name)
    return cls.transport if cls is not None else "tcp"


def split_host_params(params: dict | None) -> tuple[dict, dict]:
    """Split ``--set`` assignments into (network params, host-stack params given as ``host.KEY``)."""
    net, host = {}, {}
    for k, v in (params or {}).items():
        if str(k).startswith("host."):
            key = str(k)[5:]
            if key not in HOST_PARAMS:
                raise HOST_PARAMS.unknown(key, where="--set")
            host[key] = v
        else:
            net[k] = v
    return net, host

