"""PFC as switches do it (docs/packet.md): deadlock report, watchdog, dynamic XOFF on a victim flow.

The scenes of ``tests/backends/packet/pfc_scenes.py``, ``--cc none``, packet
backend defaults otherwise:

* the three-switch ring with its cyclic buffer dependency (4 MB windows):
  when the pause cycle closes, when it is reported with
  ``pfc_deadlock_detect_ns = 100 us``, and, with the watchdog on (detection
  and restoration 100 us, action ``forward``), when the three flows complete;
* the five-switch ring with slow receivers (``pfc_scenes.transient_ring``),
  whose pause cycle resolves by itself: when it closes (reported with a 16 us
  detection time, not with 17 us — asserted here);
* the victim h0 -> vdst beside a 4 -> 1 incast on a shared 400 G uplink:
  its throughput and the PFC pauses with static and with dynamic XOFF;
* an 8 -> 1 incast with a 300 KB buffer (``pfc_scenes.incast_fct_ns``): the
  last flow's end with static and with dynamic XOFF.
"""
from __future__ import annotations

import os
import sys

from . import ROOT, Figure

SEED = 0
SLOW = False                   # about 2 s of CPU
FIGURES = [
    Figure("deadlock", "docs/packet.md",
           "the ring's three ports are paused in a cycle from {cycle_us:.1f} us on and the deadlock is "
           "reported {detected_us:.1f} us into the run"),
    Figure("transient", "docs/packet.md",
           "every ring port is paused in a cycle from {transient_us:.1f} us on, and RESUMEs break it by "
           "themselves: reported with a 16 us detection time, not with 17 us"),
    Figure("watchdog", "docs/packet.md",
           "with the watchdog on (100 us, `forward`) the three flows complete at {wd_fct_us:.0f} us "
           "({wd_storms:.0f} storms, no drops)"),
    Figure("victim", "docs/packet.md",
           "the victim gets {victim_static_gbps:.1f} Gbps with static XOFF ({pauses_static:.0f} pauses) "
           "and {victim_dynamic_gbps:.1f} Gbps with dynamic XOFF ({pauses_dynamic:.0f} pauses), "
           "no drops either way"),
    Figure("incast_resume", "docs/packet.md",
           "incast of 1 MB on one switch, 300 KB buffer: the last flow ends at {incast_dyn_us:.1f} us "
           "with dynamic XOFF and at {incast_static_us:.1f} us with static, the line-rate bound"),
]


def measure() -> dict:
    sys.path.insert(0, os.path.join(ROOT, "tests", "backends", "packet"))
    from pfc_scenes import LINE_RATE, incast_fct_ns, ring_backend, transient_ring, victim
    env, be = ring_backend(dict(LINE_RATE, pfc_deadlock_detect_ns=100_000, max_timeouts=2))
    env.run()
    (d,) = be.stats()["pfc_deadlocks"]
    env, wd = ring_backend(dict(LINE_RATE, pfc_watchdog=True, pfc_watchdog_detection_ns=100_000,
                                pfc_watchdog_restoration_ns=100_000, pfc_watchdog_action="forward"))
    env.run()
    wst = wd.stats()
    assert wst["completed"] == 3 and wst["drops"] == 0
    (t,) = transient_ring(16_000).stats()["pfc_deadlocks"]
    assert "pfc_deadlocks" not in transient_ring(17_000).stats()
    st_s, g_s = victim("static")
    st_d, g_d = victim("dynamic")
    assert st_s["drops"] == 0 == st_d["drops"]
    (_, inc_s), (_, inc_d) = incast_fct_ns("static"), incast_fct_ns("dynamic")
    return {"incast_static_us": inc_s / 1e3, "incast_dyn_us": inc_d / 1e3,"cycle_us": d["paused_since_ns"] / 1e3, "transient_us": t["paused_since_ns"] / 1e3,
            "detected_us": d["detected_ns"] / 1e3,
            "wd_fct_us": max(r.fct_ns for r in wd.sink.rows) / 1e3, "wd_storms": wst["pfc_watchdog"]["storms"],
            "victim_static_gbps": g_s, "victim_dynamic_gbps": g_d,
            "pauses_static": st_s["pfc_pauses"], "pauses_dynamic": st_d["pfc_pauses"]}
