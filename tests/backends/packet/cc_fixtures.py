"""Test-only congestion controls (registered under names starting with ``_test``)."""
from __future__ import annotations

from netsim.params import Param, ParamTable
from netsim.transport.cc.base import REGISTRY, CongestionControl


class _Recording(CongestionControl):
    """Fixed window (``window_bytes``) and rate (``rate_bps``, 0 = unpaced); logs every hook call."""

    PARAMS = ParamTable("_test", [
        Param("window_bytes", 200_000, "size", "fixed window", "test"),
        Param("rate_bps", 0, "rate", "pacing rate (0 = unpaced)", "test", minimum=0),
        Param("min_rto_ns", 200_000, "time", "min RTO", "test"),
    ])

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        self.cwnd_bytes = params["window_bytes"]
        if params["rate_bps"]:
            self.rate_bps = params["rate_bps"]
        self.calls: list = []
        self.last_now = -1

    def advance(self, now_ns):
        assert now_ns >= self.last_now
        self.last_now = now_ns

    def on_send(self, now_ns, size_bytes):
        self.calls.append(("send", now_ns, size_bytes))

    def on_ack(self, now_ns, acked_bytes, rtt_ns, ece, in_flight_bytes):
        self.calls.append(("ack", now_ns, acked_bytes, rtt_ns, ece, in_flight_bytes))

    def on_loss(self, now_ns, in_flight_bytes):
        self.calls.append(("loss", now_ns, in_flight_bytes))

    def on_recovery_end(self, now_ns):
        self.calls.append(("recovery_end", now_ns))

    def on_timeout(self, now_ns, in_flight_bytes):
        self.calls.append(("timeout", now_ns, in_flight_bytes))

    def on_cnp(self, now_ns):
        self.calls.append(("cnp", now_ns))

    def count(self, kind):
        return sum(1 for c in self.calls if c[0] == kind)


class TestTcp(_Recording):
    """Test fixture: TCP transport, not ECN-capable."""

    name = "_test_tcp"
    transport = "tcp"


class TestTcpEcn(_Recording):
    """Test fixture: TCP transport, ECN-capable."""

    name = "_test_tcp_ecn"
    transport = "tcp"
    ecn_capable = True


class TestRoce(_Recording):
    """Test fixture: RoCE transport, not ECN-capable."""

    name = "_test_roce"
    transport = "roce"


class TestRoceEcn(_Recording):
    """Test fixture: RoCE transport, ECN-capable."""

    name = "_test_roce_ecn"
    transport = "roce"
    ecn_capable = True


for _cls in (TestTcp, TestTcpEcn, TestRoce, TestRoceEcn):
    REGISTRY[_cls.name] = _cls
