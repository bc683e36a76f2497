"""Simulation defaults of the packet-level backend (``--set KEY=VALUE``).

Every default is a named :class:`~netsim.params.Param` with its unit and
source. The same names work as node attributes in a topology (a switch's
``buffer_bytes``, ``ecn_kmin_bytes`` ...) and then override the run's value
for that node only. Per-priority forms append ``.P`` (P = 802.1p priority
0..7): ``ecn_kmin_bytes.3=100KB`` sets Kmin of priority 3 only; the plain name
sets every priority. Per-priority keys: :data:`PER_PRIORITY`.

Left out: what the values do (each backend models them, or rejects those it
cannot honour); the flow backend's own parameters (``flow/settings.py``).

>>> p = resolve_params({"ecn_kmin_bytes.3": "100KB", "pfc": "off"})
>>> p["ecn_kmin_bytes.3"], p["pfc"]
(100000, False)
>>> resolve_params({"bufer_bytes": 1})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
netsim.errors.InputError: --set: unknown packet-network parameter (got 'bufer_bytes'); expected one of: ...; did you mean buffer_bytes...
"""
from __future__ import annotations

from typing import Any, Mapping

from ..errors import InputError
from ..params import Param, ParamTable
from .fabric import DATA_PRIORITIES, MAX_PRIORITY

_HDR = ("RoCEv2 per IBTA Annex A17: Ethernet 14 + FCS 4 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 62 B "
        "(preamble/IFG not modelled)")

SIM_PARAMS = ParamTable("packet-network", [
    Param("mtu_bytes", 1500, "size", "largest packet on the wire, headers included",
          "IEEE 802.3 standard Ethernet MTU (1500 B); HPCC's ns-3 runs use 1000 B payload + headers",
          minimum=64),
    Param("header_bytes", 62, "size", "header bytes per data packet (payload = mtu - header)", _HDR, minimum=0),
    Param("ack_bytes", 64, "size", "size of an ACK/NACK/CNP on the wire", "IEEE 802.3 minimum frame (64 B)",
          minimum=1),
    Param("nvlink_ack_bytes", 16, "size", "size of an ACK/NACK on a path made only of NVLink links (no Ethernet "
          "frame: NVLink's smallest packet, one header flit)",
          "Foley & Danskin, Ultra-Performance Pascal GPU and NVLink Interconnect, IEEE Micro 2017 "
          "(128-bit flits; a packet is 1 to 18 flits, a header-only one 16 B)", minimum=1),
    Param("buffer_bytes", 32_000_000, "size", "packet buffer of a switch (shared) or its total (static)",
          "HPCC ns-3 configs (32 MB switch buffer; Broadcom Tomahawk-class)", minimum=0),
    Param("buffer_mode", "shared", "choice",
          "shared: dynamic threshold alpha*free per egress queue; static: buffer/ports per egress port",
          "Choudhury & Hahne, IEEE/ACM ToN 1998 (dynamic threshold, Broadcom-style MMU)",
          choices=("shared", "static")),
    Param("buffer_alpha", 1.0, "float", "dynamic-threshold alpha: a queue may hold alpha*free bytes",
          "Choudhury & Hahne 1998 (alpha = 1 is their reference setting)", minimum=0),
    Param("ecn", True, "bool", "ECN marking at switch egress (ECT packets only)", "RFC 3168"),
    Param("ecn_kmin_bytes", 5_000, "size", "RED Kmin on the instantaneous egress queue",
          "DCQCN, Zhu et al. SIGCOMM 2015 (Kmin = 5 KB)", minimum=0),
    Param("ecn_kmax_bytes", 200_000, "size", "RED Kmax (Kmin = Kmax gives step marking)",
          "DCQCN, Zhu et al. SIGCOMM 2015 (Kmax = 200 KB)", minimum=0),
    Param("ecn_pmax", 0.01, "float", "marking probability at Kmax (1 above Kmax)",
          "DCQCN, Zhu et al. SIGCOMM 2015 (Pmax = 1 %)", minimum=0, maximum=1),
    Param("ecn_mark_at", "enqueue", "choice", "mark on the queue seen at enqueue or at dequeue",
          "RFC 3168 leaves it open; DCTCP marks at enqueue, DCQCN CP at egress (dequeue)",
          choices=("enqueue", "dequeue")),
    Param("pfc", True, "bool", "PFC (802.1Qbb) on the lossless priorities",
          "IEEE 802.1Qbb; RoCEv2 deployments run lossless (Guo et al. SIGCOMM 2016)"),
    Param("lossless_priorities", "3", "priorities", "comma list of 802.1p priorities that are lossless under PFC",
          "RoCEv2 practice: priority 3 lossless (NVIDIA/Mellanox RoCE configuration guides)"),
    Param("pfc_xoff_bytes", 0, "size",
          "ingress bytes (per link, per priority) above which PAUSE is sent (0 = auto: 2 x XON)",
          "netsim choice: XOFF - XON of one XON's worth keeps PAUSE/RESUME cycles few", minimum=0),
    Param("pfc_xon_bytes", 0, "size",
          "ingress bytes at or below which RESUME is sent (0 = auto: 2 x delay x rate + 2 x MTU of the link)",
          "802.1Qbb headroom reasoning: the bytes left must cover the RESUME round trip so the egress never "
          "idles (congestion-control.md)", minimum=0),
    Param("pfc_xoff_above_ecn", "auto", "choice",
          "raise automatic PFC thresholds of a switch ingress above the largest ECN Kmax of the switch "
          "(XOFF = Kmax + auto XON, XON = Kmax) so ECN, not PFC, rate-controls; auto = when --cc is "
          "ECN-capable (dcqcn, dctcp); explicit pfc_xoff/xon values are never changed",
          "DCQCN, Zhu et al. SIGCOMM 2015 (ECN must be triggered before PFC: Kmax below the PFC threshold); "
          "HPCC ns-3 gets the same ordering from a dynamic alpha*free PFC threshold (switch-mmu.cc)",
          choices=("auto", "on", "off")),
    Param("pfc_headroom_bytes", 0, "size",
          "headroom above XOFF for bytes in flight (0 = auto: 2 x delay x rate + 2 x MTU)",
          "congestion-control.md / 802.1Qbb headroom formula (2 x link delay x rate + MTUs)", minimum=0),
    Param("internal_xoff_bytes", 0, "size",
          "backpressure threshold of lossless NVLink/PCIe/NIC hops, all priorities (0 = auto as pfc_xoff)",
          "netsim model of credit-based flow control (NVLink/PCIe credits): never drops", minimum=0),
    Param("internal_xon_bytes", 0, "size",
          "backpressure release threshold of NVLink/PCIe/NIC hops (0 = auto as pfc_xon)",
          "netsim choice: enough credit for one round trip, as PCIe credit sizing guidance", minimum=0),
    # -- PFC as switches do it (issue 19): dynamic XOFF, deadlock report, watchdog -------------------------
    Param("pfc_threshold", "static", "choice",
          "XOFF of a switch ingress priority group: static (pfc_xoff_bytes / automatic) or dynamic "
          "(pfc_dynamic_alpha x the free shared pool, re-evaluated on every packet)",
          "Choudhury & Hahne, IEEE/ACM ToN 1998 (dynamic threshold); Broadcom MMU / SONiC BUFFER_PROFILE "
          "dynamic_th; static is netsim's earlier model and stays the default",
          choices=("static", "dynamic")),
    Param("pfc_dynamic_alpha", 1.0, "float",
          "alpha of the dynamic XOFF: a group may hold alpha x (free shared pool) bytes before PAUSE",
          "SONiC dynamic buffer model: default_dynamic_th = 0, alpha = 2^0 = 1 (sonic-buildimage "
          "buffer templates); bounds = SAI dynamic_th -7..6 (alpha 1/128..64); HPCC ns-3 uses 1/8 "
          "(pfc_a_shift = 3 at NIC-rate ports)", minimum=0.0078125, maximum=64),
    Param("pfc_dynamic_xon_offset_bytes", 0, "size",
          "dynamic thresholds: RESUME once the group holds at most max(pfc_xon_bytes, dynamic XOFF - this), "
          "headroom empty (0 = auto: 2 x delay x rate + 2 x MTU of the link, the static automatic XON)",
          "SAI saibuffer.h SAI_BUFFER_PROFILE_ATTR_XON_OFFSET_TH (XON when usage <= max(XON_TH, limit - "
          "XON_OFFSET_TH)); SONiC BUFFER_PROFILE xon_offset; HPCC ns-3 resume_offset (3 KB); the automatic "
          "value covers the RESUME round trip as the static XON does", minimum=0),
    Param("pfc_deadlock_detect_ns", 200_000_000, "time",
          "report a PFC deadlock when every port of a cycle of the pause graph has been paused (so has "
          "dequeued nothing of that priority) for this long; 0 = off. The run continues",
          "SONiC pfcwd DEFAULT_DETECTION_TIME = 200 ms (sonic-utilities pfcwd/main.py), the time a switch "
          "OS takes a paused, non-draining queue as stuck", minimum=0),
    Param("pfc_watchdog", False, "bool",
          "PFC watchdog on switch egress queues (SONiC pfcwd): a queue paused with packets for "
          "pfc_watchdog_detection_ns is stormed; its action applies until restoration",
          "SONiC PFC watchdog design (sonic-net/SONiC wiki); off by default so lossless stays lossless"),
    Param("pfc_watchdog_detection_ns", 200_000_000, "time", "pfcwd detection_time",
          "SONiC pfcwd DEFAULT_DETECTION_TIME = 200 ms (sonic-utilities pfcwd/main.py)", minimum=1),
    Param("pfc_watchdog_restoration_ns", 200_000_000, "time",
          "pfcwd restoration_time: a stormed queue is restored once this long has passed and its peer "
          "no longer pauses it (else re-checked every restoration time)",
          "SONiC pfcwd DEFAULT_RESTORATION_TIME = 200 ms (sonic-utilities pfcwd/main.py)", minimum=1),
    Param("pfc_watchdog_action", "drop", "choice",
          "pfcwd action on a stormed queue: drop (PAUSE ignored, the queue's packets discarded) or "
          "forward (PAUSE ignored, packets sent on)",
          "SONiC pfcwd DEFAULT_ACTION = 'drop' (sonic-utilities pfcwd/main.py)", choices=("drop", "forward")),
    Param("scheduler", "dwrr", "choice",
          "egress scheduling among data priorities (control class always served first)",
          "HPCC ns-3 qbb: control queue strict, data queues round robin", choices=("strict", "dwrr")),
    Param("dwrr_quantum_bytes", 0, "size", "DWRR quantum per priority (at least one MTU; 0 = one MTU); weights = quantum ratios",
          "Shreedhar & Varghese, SIGCOMM 1995 (quantum >= max packet)", minimum=0),
    Param("roce_priority", 3, "int", "default priority of RoCE-transport flows (lossless class)",
          "RoCEv2 practice: priority 3", minimum=0, maximum=7),
    Param("tcp_priority", 0, "int", "default priority of TCP-transport flows (lossy class)",
          "802.1p best effort = 0", minimum=0, maximum=7),
    Param("window_bytes", 0, "size", "fixed window of --cc none (0 = one BDP of the path at its bottleneck)",
          "netsim issue #2", minimum=0),
    Param("roce_ack_every_packets", 1, "int", "RoCE receiver: ACK every N in-order packets (coalescing)",
          "HPCC ns-3 default ack per packet (ack interval 1)", minimum=1),
    Param("tcp_delayed_ack_segments", 1, "int", "TCP receiver: ACK every N in-order segments (1 = no delay)",
          "RFC 5681 4.2 / RFC 1122 (ACK at least every second full-sized segment)", minimum=1),
    Param("tcp_delayed_ack_timeout_ns", 40_000, "time", "TCP delayed-ACK timer (when delayed ACKs are on)",
          "netsim choice: datacenter scale (Linux TCP_DELACK_MIN is 40 ms; RFC 5681 allows up to 500 ms)",
          minimum=0),
    Param("cnp_interval_ns", 50_000, "time", "NP: at most one CNP per flow per interval (if the CC has no own)",
          "DCQCN, Zhu et al. SIGCOMM 2015 (50 us)", minimum=0),
    Param("min_rto_ns", 1_000_000, "time", "minimum retransmission timeout (if the CC has no min_rto_ns)",
          "Vasudevan et al. SIGCOMM 2009 and DC studies use 1-10 ms RTOmin (Linux: 200 ms)", minimum=0),
    Param("initial_rto_ns", 0, "time",
          "RTO before the first RTT sample (0 = max(min RTO, initial_rto_rtts x the path's base RTT))",
          "RFC 6298 2.1 says 1 s, far too long for datacenter RTTs of microseconds; netsim starts at "
          "RTOmin but never below a few base RTTs, so a long path (RTT > RTOmin) has no spurious timeout",
          minimum=0),
    Param("initial_rto_rtts", 3.0, "float", "automatic initial RTO in base RTTs (with initial_rto_ns = 0)",
          "netsim choice: RFC 6298's RTO = SRTT + 4 RTTVAR with RTTVAR = SRTT/2 gives 3 x RTT "
          "after the first sample", minimum=1),
    Param("max_rto_ns", 1_000_000_000, "time", "upper bound of the backed-off RTO",
          "RFC 6298 2.5 (a maximum of at least 60 s may be placed; netsim uses 1 s)", minimum=1),
    Param("max_timeouts", 15, "int", "consecutive retransmit timeouts after which a flow is abandoned (failed)",
          "Linux tcp_retries2 = 15 (RoCE NICs: retry_cnt up to 7)", minimum=0),
    Param("host_stack", False, "bool",
          "apply the host-stack cost model (netsim.hoststack: per-message delay, per-connection rate cap "
          "of kernel TCP) to flows that leave through a NIC; on by itself when a host.KEY is --set",
          "APNet'24 RoCE-vs-TCP gap; Cai et al. SIGCOMM 2021 (see netsim.hoststack)"),
    Param("random_seed", -1, "int",
          "seed of the packet backend's random draws (RED/ECN marks, random loss, per-packet spray); "
          "-1 = the run's --seed. ECMP hashing always follows --seed, so this varies the draws on fixed paths",
          "netsim choice: separates marking randomness from path choice (docs/flow-backend.md, DCQCN agreement)",
          minimum=-1),
    Param("routing", "ecmp", "choice", "ecmp: one hashed path per flow; spray: random next hop per packet",
          "netsim issue #2", choices=("ecmp", "spray")),
    Param("queue_sample_ns", 10_000, "time", "period of queues.csv samples (0 = off)",
          "netsim choice (trace size vs resolution)", minimum=0),
    Param("cc_sample_ns", 10_000, "time", "period of cc.csv samples (0 = off)",
          "netsim choice (trace size vs resolution)", minimum=0),
    Param("jain_start_ns", 0, "time", "start of the Jain's-fairness window", "netsim issue #3", minimum=0),
    Param("jain_window_ns", 0, "time",
          "length of the Jain's-fairness window (0 = over whole flows: size/fct of each flow)",
          "Jain, Chiu & Hawe, DEC-TR-301 1984 (index definition)", minimum=0),
    Param("fast_forward", False, "bool",
          "skip the packet network's steady states (netsim.backends.packet.fastforward; packet backend only, "
          "run-wide; --fast-forward on|off sets it)",
          "netsim issue #21, after Wormhole (NSDI'26); off (default) simulates every packet"),
    Param("memo", False, "bool",
          "replay a collective repeated from an empty packet network from its stored run, exactly "
          "(netsim.backends.packet.memo; packet backend only, run-wide; --memo on|off sets it)",
          "netsim issue #21 (exact memoisation); off (default) simulates every collective"),
    Param("fast_forward_tolerance", 0.01, "float",
          "for the network to count as steady: largest relative standard error of each flow's measured rate "
          "(mean delivery per detection window) and queue drift per byte a port sent",
          "netsim issue #21 accuracy target (per-flow FCT median error <= 1 %)", minimum=1e-6, maximum=0.5),
    Param("fast_forward_cycle_tolerance", 0.03, "float",
          "the same test for a limit cycle (DCQCN, Cubic, flows sharing a marking queue): largest relative "
          "standard error of each flow's bytes per cycle, and mean-queue drift per byte a port sent",
          "netsim issue #21 accuracy target where random draws are involved (DCQCN and Cubic FCT by size "
          "bucket within 3 %)", minimum=1e-6, maximum=0.5),
])

#: parameters that accept a per-priority ``.P`` suffix
PER_PRIORITY = ("ecn_kmin_bytes", "ecn_kmax_bytes", "ecn_pmax", "pfc_xoff_bytes", "pfc_xon_bytes",
                "pfc_headroom_bytes", "dwrr_quantum_bytes")


def _split_key(key: str) -> tuple[str, int | None]:
    if "." in key:
        base, _, suffix = key.rpartition(".")
        if base in PER_PRIORITY and suffix.isdigit() and 0 <= int(suffix) <= MAX_PRIORITY:
            return base, int(suffix)
        if base in PER_PRIORITY:
            raise InputError("bad priority suffix", where="--set", value=key,
                             accepted=f"{base}.P with P in 0..{MAX_PRIORITY}")
    return key, None


def parse_override(key: str, value, *, source: str | None = None, where: str | None = None):
    """Check and convert one ``KEY=VALUE`` (``KEY`` may carry a ``.P`` suffix)."""
    base, _ = _split_key(key)
    if base not in SIM_PARAMS:
        raise SIM_PARAMS.unknown(key, source=source, where=where or "--set")
    return SIM_PARAMS[base].parse(value, source=source, where=where or f"parameter {key}")


def resolve_params(overrides: Mapping[str, Any] | None = None, *, source: str | None = None) -> dict:
    """Defaults overlaid with checked ``overrides`` (per-priority keys kept as given)."""
    out: dict = SIM_PARAMS.defaults()
    for key, value in (overrides or {}).items():
        out[key] = parse_override(key, value, source=source)
    check_red_band(out, overrides or {}, where="--set")
    return out


def check_red_band(values: Mapping[str, Any], given: Mapping[str, Any], *, where: str, source=None) -> None:
    """RED needs Kmin <= Kmax: a pair both written by the user the other way round is an error.

    ``given``: the keys the user wrote (``NAME`` or ``NAME.P``); defaults and a
    congestion control's own thresholds fill the rest and are not checked here.
    """
    for suffix in [""] + [f".{p}" for p in DATA_PRIORITIES]:
        lo, hi = f"ecn_kmin_bytes{suffix}", f"ecn_kmax_bytes{suffix}"
        if lo in given and hi in given and values[lo] > values[hi]:
            raise InputError("RED needs Kmin <= Kmax", source=source, where=f"{where} {lo}/{hi}",
                             value=f"{values[lo]} > {values[hi]} bytes",
                             accepted="ecn_kmin_bytes <= ecn_kmax_bytes (equal gives step marking)")


def node_overrides(attrs: Mapping[str, Any], node: str | None = None) -> dict:
    """Node attributes that override simulation parameters (unknown attributes are ignored).

    ``node`` names the node in error messages.
    """
    out = {}
    for key, value in attrs.items():
        if not isinstance(key, str):
            continue
        try:
            base, _ = _split_key(key)
        except InputError:
            continue
        if base in SIM_PARAMS:
            where = f"node {node}, attribute {key}" if node is not None else f"node attribute {key}"
            out[key] = parse_override(key, value, where=where)
    check_red_band(out, out, where=f"node {node}, attributes" if node is not None else "node attributes")
    return out


def per_priority(params: Mapping[str, Any], name: str) -> list:
    """Values of ``name`` for priorities 0..7 (``name.P`` wins over ``name``)."""
    base = params[name]
    return [params.get(f"{name}.{p}", base) for p in DATA_PRIORITIES]


def lossless_set(params: Mapping[str, Any]) -> frozenset[int]:
    """The lossless priorities (empty when ``pfc`` is off)."""
    if not params["pfc"]:
        return frozenset()
    text = str(params["lossless_priorities"]).strip()
    out = set()
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) > MAX_PRIORITY:
            raise InputError("bad priority list", where="parameter lossless_priorities", value=text,
                             accepted="comma-separated priorities 0..7, e.g. 3 or 3,4")
        out.add(int(part))
    return frozenset(out)
