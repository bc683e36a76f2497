"""Congestion control as a fluid model: efficiency, per-flow caps, start-up ramp.

The flow backend does not simulate windows, ACKs or marks. A congestion-control
algorithm shows up as three numbers per flow, each a named :class:`Param`
whose default was calibrated against the packet backend by
``tools/flow_calibrate.py`` in a checkout (numbers and method in
docs/flow-backend.md):

* ``efficiency`` — the fraction of a *shared* link's payload capacity the
  algorithm's flows achieve together (queue oscillation, rate cuts below the
  fair share, retransmitted bytes). Applied only to links carrying two flows
  or more, so a lone flow is never slowed.
* ``rate_cap_frac`` — a per-flow cap as a fraction of the sender's first-hop
  (NIC) line rate; DCQCN starts at, and never exceeds, line rate.
* the start-up ramp — window-based algorithms that slow-start from an initial
  window of ``init_cwnd_pkts`` segments, doubling per RTT, lose
  ``ramp_scale`` × (the time the ramp costs a lone flow against line rate:
  ``RTT - window / rate`` for every window-limited round but the last),
  added to the flow's latency term. Rate-based DCQCN has no ramp.

With ``dynamic`` (DCQCN's default) the algorithm's own rate law runs instead
of the efficiency: :mod:`.dcqcnfluid`.

Lossy behaviour (which flow loses a packet and waits a retransmit timeout) is
not predictable by a fluid model; ``efficiency`` absorbs its average cost.

Left out: windows, ACK clocking, loss and retransmission (only their average
cost, as ``efficiency``), per-algorithm dynamics other than DCQCN's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import InputError
from ...params import Param, ParamTable

_SRC = "calibrated against the packet backend (tools/flow_calibrate.py; docs/flow-backend.md)"


def _table(name: str, efficiency: float, ramp_scale: float, init_cwnd: int,
           eff_src: str = _SRC, dynamic: bool = False) -> ParamTable:
    return ParamTable(f"flow model of {name}", [
        Param("efficiency", efficiency, "float",
              "fraction of a shared link's payload capacity achieved by this algorithm's flows",
              eff_src, minimum=0.05, maximum=1.0),
        Param("rate_cap_frac", 1.0, "float",
              "per-flow rate cap as a fraction of the sender NIC line rate",
              "DCQCN starts at and never exceeds line rate (Zhu et al., SIGCOMM 2015)",
              minimum=0.0, maximum=1.0),
        Param("init_cwnd_pkts", init_cwnd, "int",
              "initial window in segments for the slow-start ramp (0 = no ramp)",
              "RFC 6928 (IW10) for TCP; 0 for rate-based RoCE (starts at line rate)", minimum=0),
        Param("ramp_scale", ramp_scale, "float",
              "multiplier on the modelled slow-start time penalty", _SRC, minimum=0.0),
        Param("dynamic", dynamic, "bool",
              "run the algorithm's own rate law on fluid queues (dcqcnfluid.py) instead of a fixed efficiency",
              "DCQCN fluid model, Zhu et al. SIGCOMM 2015 / CoNEXT 2016"),
    ])


#: the model of each algorithm known to the packet backend
MODEL_TABLES: dict[str, ParamTable] = {
    "none": _table("none", 1.0, 0.0, 0,
                   eff_src="fixed BDP window on a lossless class keeps the bottleneck busy (netsim issue #2)"),
    # tools/flow_calibrate.py (then in the package), 2026-11-29 11:16 UTC, packet backend defaults, dumbbell 100 Gbps, N = 2, 4, 8 x 4 MB:
    # dcqcn 0.940 / 0.329 / 0.348 (mean 0.539); cubic 0.992 / 0.999 / 1.000 (mean 0.997);
    # dctcp 0.992 / 0.999 / 1.000 (mean 0.997). Lone-flow slow-start penalty of cubic and dctcp:
    # 9.2 / 10.7 / 10.7 us measured at 0.1 / 1 / 10 MB vs 9.2 / 10.7 / 10.7 us modelled at scale 1 -> 1.00
    # (0 at 10 kB, inside IW10; 5.0-5.2 us at 15 / 30 kB, one window-limited round; QA re-run, ramp per round).
    # with dynamic=True (default) the efficiency is not used: the DCQCN law runs on fluid queues
    "dcqcn": _table("dcqcn", 1.0, 0.0, 0, dynamic=True,
                    eff_src="the fluid DCQCN law loses capacity by itself; 0.54 was the static calibration"),
    "cubic": _table("cubic", 1.0, 1.0, 10),
    "dctcp": _table("dctcp", 1.0, 1.0, 10),
    # tools/flow_calibrate.py --cc hpcc,swift,timely, 2026-12-02 01:40 UTC, packet backend defaults, same dumbbell:
    # hpcc 0.913 / 0.911 / 0.911 (mean 0.911: eta = 0.95 less the 42-byte INT header per packet);
    # swift 1.000 / 1.000 / 1.000; both start at line rate (W_init = BDP), no ramp measured (scale 0).
    # timely 1.000 / 1.000 / 0.059: no single efficiency (see UNMODELLED)
    "hpcc": _table("hpcc", 0.911, 0.0, 0),
    "swift": _table("swift", 1.0, 0.0, 0),
}

#: algorithms the fluid model cannot represent: the flow backend rejects them (with this reason)
UNMODELLED: dict[str, str] = {
    "timely": "its throughput on a shared link is not one efficiency (calibration: 1.00 at N = 2 and 4, "
              "0.06 at N = 8; the RTT-gradient law has no unique fixed point); use --backend packet",
}
_FALLBACK = "none"


@dataclass(frozen=True, slots=True)
class CCModel:
    """Resolved fluid-model parameters of one algorithm."""

    name: str
    efficiency: float
    rate_cap_frac: float
    init_cwnd_pkts: int
    ramp_scale: float
    dynamic: bool = False

    def rate_cap(self, line_rate: float) -> float:
        """Per-flow cap in the unit of ``line_rate`` (``inf`` when not limiting)."""
        return math.inf if self.rate_cap_frac >= 1.0 else self.rate_cap_frac * line_rate

    def ramp_ps(self, wire_bytes: float, rate_bytes_per_ps: float, rtt_ps: float, mss_wire: float) -> float:
        """Extra time (ps) slow start costs a flow that would otherwise run at ``rate``.

        Fluid slow start: the window starts at ``init_cwnd_pkts`` segments and
        doubles every RTT. A round whose window is below the bandwidth-delay
        product ``rate·RTT`` and that is not the flow's last sends its window
        and then waits for the ACKs: it costs ``RTT - window / rate`` more than
        sending at ``rate``. The last round (the rest of the flow fits in the
        window) and every round after the window covers the BDP cost nothing
        extra, so a flow that fits in the initial window pays nothing.

        >>> m = resolve_model("cubic")
        >>> m.ramp_ps(10 * 1500, 1.0, 100_000.0, 1500)          # fits in IW10: no penalty
        0.0
        >>> m.ramp_ps(10 * 1500 + 1, 1.0, 100_000.0, 1500)      # one full round of 15,000 ps, then the rest
        85000.0
        """
        if self.init_cwnd_pkts <= 0 or self.ramp_scale <= 0.0 or rtt_ps <= 0.0:
            return 0.0
        window = self.init_cwnd_pkts * mss_wire
        bdp = rate_bytes_per_ps * rtt_ps
        left, extra = wire_bytes, 0.0
        while window < bdp and left > window:   # a window-limited round that is not the last
            extra += rtt_ps - window / rate_bytes_per_ps
            left -= window
            window *= 2.0
        return extra * self.ramp_scale


def resolve_model(name: str, cc_params: dict | None = None) -> CCModel:
    """The :class:`CCModel` of algorithm ``name``.

    ``cc_params[name]`` may override any model parameter by name with a
    ``flow_`` prefix (``--cc-param flow_efficiency=0.9``); other keys belong
    to the packet-level algorithm and are ignored here.
    """
    if name in UNMODELLED:
        raise InputError("congestion control has no flow-backend model", where="--cc", value=name,
                         accepted=f"{', '.join(sorted(MODEL_TABLES))} on --backend flow ({UNMODELLED[name]})")
    table = MODEL_TABLES.get(name)
    if table is None:
        from ...transport.cc import cc_names
        if name not in cc_names():
            known = sorted(set(cc_names()) | set(MODEL_TABLES))
            raise InputError("unknown congestion control", where="--cc", value=name,
                             accepted="one of " + ", ".join(known))
        table = MODEL_TABLES[_FALLBACK]
    over = {k[len("flow_"):]: v for k, v in ((cc_params or {}).get(name) or {}).items()
            if k.startswith("flow_")}
    if name == "hpcc" and "rate_cap_frac" not in over:      # alone, HPCC runs at eta less its INT header
        from ...network.params import SIM_PARAMS
        from .hpccflow import hpcc_lone_rate_frac
        d = SIM_PARAMS.defaults()
        over["rate_cap_frac"] = hpcc_lone_rate_frac((cc_params or {}).get(name),
                                                    int(d["mtu_bytes"]) - int(d["header_bytes"]))
    vals = table.resolve(over, source=f"--cc-param ({name})")
    return CCModel(name=name, **vals)
