"""Lossless traffic within the switch buffer: reserved headroom, shared pool, XOFF fitted to it.

Every admission at the switch is checked (the node's ``admit`` wrapped):
a lossless priority group never holds more than its XOFF in the shared
pool and its reserved headroom beyond it, the data in the buffer never
exceeds ``buffer_bytes``, so neither does a lossless egress queue. Before
the fix a 16 -> 1 incast with a 1 MB buffer reached a 3.78 MB queue.
"""
from __future__ import annotations

import pytest
from pkt_helpers import run, star

from netsim.backends.packet.node import Forwarder
from netsim.backends.packet.thresholds import round_trip_bytes
from netsim.errors import InputError
from netsim.transport.packet import CONTROL_PRIORITY

LOSSLESS = 3
N_SENDERS = 16


def _incast(monkeypatch, params, cc="none", size=200_000, delay_ns=1000):
    """16 -> 1 incast on one switch; returns (backend, peaks) with every admission checked."""
    peaks = {"queue": 0, "data": 0, "group": 0}
    orig = Forwarder.admit

    def checked(self, pkt, port, in_port, prio):
        orig(self, pkt, port, in_port, prio)
        if not self.is_switch:
            return
        buf = self.buf
        control = sum(q.qbytes[CONTROL_PRIORITY] for q in self.ports.values())
        data = buf.used - control
        assert data <= buf.total
        assert buf.used - buf.hdr_used - control <= buf.shared
        for a in self.ports:
            ing = self.net.ports[(a, self.name)]
            assert ing.ing[LOSSLESS] - ing.hdr[LOSSLESS] <= ing.xoff[LOSSLESS]   # its shared allocation
            assert ing.hdr[LOSSLESS] <= ing.headroom[LOSSLESS]                 # its reserved headroom
            peaks["group"] = max(peaks["group"], ing.ing[LOSSLESS])
        peaks["queue"] = max(peaks["queue"], max(q.qbytes[LOSSLESS] for q in self.ports.values()))
        peaks["data"] = max(peaks["data"], data)

    monkeypatch.setattr(Forwarder, "admit", checked)
    g = star(N_SENDERS + 1, delay_ns=delay_ns)
    flows = [(f"h{i}", f"h{N_SENDERS}", size) for i in range(N_SENDERS)]
    be, recs = run(g, flows, cc=cc, params=params)
    return be, recs, peaks


@pytest.mark.parametrize("buffer_bytes,cc", [(600_000, "none"), (1_000_000, "dcqcn"), (2_000_000, "none")])
def test_lossless_queue_within_shared_allocation_plus_headroom(monkeypatch, buffer_bytes, cc):
    params = {"buffer_bytes": buffer_bytes}
    if cc == "none":
        params["window_bytes"] = 1_000_000      # windows far beyond the buffer: PFC must hold them back
    be, recs, peaks = _incast(monkeypatch, params, cc=cc)
    st = be.stats()
    assert st["completed"] == N_SENDERS and st["drops"] == 0 and st["pfc_headroom_overflows"] == 0
    assert st["pfc_pauses"] > 0
    sw = be.net.nodes["sw"]
    # reserved headroom = per ingress 2 x delay x rate + 2 MTU (one lossless priority)
    per_ingress = round_trip_bytes(1_000_000, 100e9, 1500)
    assert sw.buf.reserved == (N_SENDERS + 1) * per_ingress
    assert sw.buf.shared == buffer_bytes - sw.buf.reserved
    assert peaks["queue"] <= buffer_bytes          # the egress of the incast: 3.78 MB at 1 MB before
    assert peaks["data"] <= buffer_bytes
    assert peaks["queue"] > sw.buf.shared / 2     # the buffer is what binds here
    assert all(r.retransmitted_bytes == 0 for r in recs.values())


def test_headroom_overflow_is_counted_and_dropped(monkeypatch):
    """A 20 us link and 3 KB of headroom: what arrives after PAUSE overflows; RoCE recovers it."""
    be, recs, _ = _incast(monkeypatch, {"buffer_bytes": 2_000_000, "pfc_headroom_bytes": 3_000,
                                        "window_bytes": 2_000_000}, size=300_000, delay_ns=20_000)
    st = be.stats()
    assert st["pfc_headroom_overflows"] > 0
    assert st["drops_by_priority"].get(str(LOSSLESS), 0) == st["pfc_headroom_overflows"] == st["drops"]
    assert st["completed"] == N_SENDERS                    # go-back-N retransmits what was dropped
    assert sum(r.retransmitted_bytes for r in recs.values()) > 0


def test_buffer_too_small_for_the_headroom_is_an_input_error():
    g = star(N_SENDERS + 1)
    with pytest.raises(InputError) as e:
        run(g, [("h0", "h1", 10_000)], params={"buffer_bytes": 200_000})
    assert "buffer_bytes" in str(e.value) and "sw" in str(e.value)
    run(g, [("h0", "h1", 10_000)], params={"buffer_bytes": 200_000, "pfc": "off"})   # nothing reserved


def test_explicit_xoff_above_the_shared_pool_is_an_input_error():
    g = star(4)   # 4 x 28 KB reserved of 200 KB: 88 KB shared
    with pytest.raises(InputError) as e:
        run(g, [("h0", "h1", 10_000)], params={"buffer_bytes": 200_000, "pfc_xoff_bytes": 100_000})
    assert "pfc_xoff_bytes" in str(e.value)
    be, _ = run(g, [("h0", "h1", 10_000)], params={"buffer_bytes": 200_000})
    port = be.net.ports[("h0", "sw")]
    assert port.xoff[LOSSLESS] == 56_000 and port.xon[LOSSLESS] == 28_000    # automatic, fits: kept
