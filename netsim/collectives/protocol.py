"""Protocols, software latency and the resolution of ``algorithm="auto"`` for one collective call.

Modelled, on every backend (the collectives layer applies it, so packet, flow
and analytic see the same terms):

* **software latency** (:class:`SwLatency`): ``launch_ns`` once per call
  before the first send (NCCL's ``baseLat``) and ``step_ns`` on every message
  of every algorithm step, between its arrival and the dependant send (NCCL's
  ``hwLat``: the flag/FIFO handshake of one step); a message between two
  scale-up domains pays ``step_inter_ns`` instead. ``sw_latency="nccl"`` takes
  the three from NCCL's tuning table (:mod:`.tuning`) for the algorithm and
  protocol that run; ``"off"`` (the default) is zero;
* **protocols**: ``simple`` sends the data; ``ll`` sends 8-byte lines of 4
  data + 4 flag bytes (2x the bytes); ``ll128`` 128-byte lines with 8 flag
  bytes (128/120 x) — :data:`WIRE_FACTOR`;
* ``algorithm="auto"``: NCCL's tuning model (:func:`.tuning.choose`) on the
  facts of the ranks' topology (:func:`topology_facts`); when it picks NVLS
  (``nvls: true`` NVSwitch) or CollNet (``sharp: true`` switches) on a
  backend that cannot run them (packet), that is an error;
  ``protocol="auto"`` picks the
  cheapest protocol for the given algorithm the same way.

Left out: the GPU-side bandwidth limits of LL/LL128 (NCCL's ``llMaxBw`` and
per-channel caps enter the choice, not the simulated transfer), reduction
compute; NVLS and CollNet run in :mod:`.nvls` and :mod:`.collnet`.
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

from ..errors import InputError
from ..params import Param, ParamTable
from . import tuning

#: wire bytes per data byte of each protocol (NCCL src/device/prims_ll.h: 8-byte lines, 4 B flag;
#: prims_ll128.h: 128-byte lines, 8 B flag)
WIRE_FACTOR = {"ll": 2.0, "ll128": 128 / 120, "simple": 1.0}
IN_NETWORK = ("nvls", "collnet")

TUNING_PARAMS = ParamTable("nccl tuning", [
    Param("nccl_channels", 16, "int", "NCCL channels the tuning model assumes (its per-channel bandwidth caps "
          "scale with it); the per-channel bandwidth is the GPU's link rate / channels",
          "NCCL environment variable docs: NCCL_NVLS_NCHANNELS default 16 on H100 NVSwitch", minimum=1,
          maximum=64),
    Param("ll128", True, "bool", "LL128 enabled where NCCL enables it by default (NVLink inside the node)",
          "NCCL tuning.cc: LL128 on by default on Volta/Ampere/Hopper with NVLink (one compute capability)"),
])
_TUNE = TUNING_PARAMS.defaults()


@dataclass(frozen=True)
class SwLatency:
    """Software latency of a collective call, ns: once per call, per intra-domain and per inter-domain message."""

    launch_ns: float = 0.0
    step_ns: float = 0.0
    step_inter_ns: float = 0.0


OFF = SwLatency()


@dataclass(frozen=True)
class Plan:
    """How one call runs: algorithm and protocol actually used, software latency, wire factor."""

    algorithm: str
    protocol: str
    latency: SwLatency
    wire_factor: float


def nccl_latency(kind: str, algorithm: str, protocol: str, intra_hw: str = "nvlink") -> SwLatency:
    """NCCL's ``baseLat`` and ``hwLat`` (intra and net) for a call, as a :class:`SwLatency`.

    Algorithms outside NCCL's model (halving_doubling, hierarchical, alltoall's)
    take the ring's entries.
    """
    algo = algorithm if algorithm in tuning.BASE_LAT_US else "ring"
    p = tuning.PROTOCOLS.index(protocol)
    if algo == "nvls":      # NCCL: NVLS latency = intraLat (+ interLat) once per call, no per-step term
        return SwLatency(tuning.HW_LAT_US[intra_hw][algo][p] * 1e3, 0.0, 0.0)
    if algo == "collnet":   # NCCL: CollNet latency is per call too; netsim: intra + net hwLat once
        return SwLatency((tuning.HW_LAT_US[intra_hw][algo][p] + tuning.HW_LAT_US["net"][algo][p]) * 1e3, 0.0, 0.0)
    base = tuning.BASE_LAT_US[algo][p]
    return SwLatency(base * 1e3, tuning.HW_LAT_US[intra_hw][algo][p] * 1e3, tuning.HW_LAT_US["net"][algo][p] * 1e3)


_DOMAINS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_FACTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def domains(graph) -> dict:
    """Node -> scale-up domain key (:func:`netsim.topology.domains.domain_keys`), cached per graph."""
    keys = _DOMAINS.get(graph)
    if keys is None:
        from ..topology.domains import domain_keys
        keys = _DOMAINS[graph] = domain_keys(graph)
    return keys


def _domain_of(graph, nodes):
    keys = domains(graph)
    return {x: keys.get(x, x) for x in nodes}


def _first_rate_bps(graph, node) -> float:
    rates = [d.get("rate_bps", 0.0) for _, _, d in graph.edges(node, data=True)]
    return float(max(rates)) if rates else 0.0


def topology_facts(graph, nodes: list[str], params: dict | None = None) -> tuning.TopologyFacts:
    """NCCL-tuner facts of the communicator ``nodes`` on ``graph`` (see :class:`.tuning.TopologyFacts`).

    Nodes = scale-up domains (:func:`netsim.topology.domains.domain_keys`); intra
    hardware NVLink when a rank's links include NVLink; per-channel bandwidth =
    the GPU's fastest link (intra) or the slowest link between the first two
    domains (inter), over ``nccl_channels``; NVLS when every rank links to one
    node of kind ``nvswitch`` with ``nvls: true``; CollNet when the ranks span
    several domains and every node of kind ``switch`` has ``sharp: true``.
    """
    p = dict(_TUNE, **(params or {}))
    dom = _domain_of(graph, nodes)
    domains = list(dict.fromkeys(dom[x] for x in nodes))
    kinds = {d.get("kind") for x in nodes for _, _, d in graph.edges(x, data=True)}
    intra_hw = "nvlink" if "nvlink" in kinds else "pci"
    ch = p["nccl_channels"]
    intra = min(_first_rate_bps(graph, x) for x in nodes) / 8e9
    inter = intra
    if len(domains) > 1:
        other = next(x for x in nodes if dom[x] != dom[nodes[0]])
        import networkx as nx              # only for a group over several domains; not at import
        path = nx.shortest_path(graph, nodes[0], other)
        inter = min(graph.edges[a, b].get("rate_bps", math.inf) for a, b in zip(path, path[1:])) / 8e9
    nvs = [{y for y in graph.neighbors(x) if graph.nodes[y].get("kind") == "nvswitch"} for x in nodes]
    common = set.intersection(*nvs) if nvs else set()
    nvls = len(domains) == 1 and any(graph.nodes[s].get("nvls") is True for s in common)
    switches = [s for s, k in graph.nodes(data="kind") if k == "switch"]
    collnet = len(domains) > 1 and bool(switches) and all(graph.nodes[s].get("sharp") is True for s in switches)
    return tuning.TopologyFacts(len(nodes), len(domains), intra_hw, ch, intra / ch, inter / ch, nvls, collnet,
                                bool(p["ll128"]) and intra_hw == "nvlink")


def plan(graph, kind: str, nodes: list[str], size_bytes: int, algorithm: str, protocol: str,
         sw_latency, backend_name: str = "this backend", in_network: tuple[str, ...] = ()) -> Plan:
    """Resolve ``auto`` choices and the software latency of one call; see the module docstring.

    ``algorithm`` is already validated for ``kind`` (or ``auto``); ``protocol``
    is ``auto`` or one of :data:`.tuning.PROTOCOLS`; ``sw_latency`` is ``"off"``,
    ``"nccl"`` or a :class:`SwLatency`; ``in_network``: the in-network algorithms
    the backend runs (:mod:`.nvls`), the others are an error.
    """
    if algorithm in IN_NETWORK and algorithm not in in_network:
        raise InputError(f"{algorithm} reduces in the switch, which the {backend_name} backend cannot model",
                         where="collective algorithm", value=algorithm,
                         accepted="ring or tree (or auto on switches without nvls/sharp); nvls and collnet "
                         "on --backend analytic or flow")
    facts = None
    if len(nodes) < 2 and (algorithm == "auto" or protocol == "auto"):   # nothing is sent: no choice to make
        algorithm = "ring" if algorithm == "auto" and kind in tuning.MODEL_KINDS else \
            "direct" if algorithm == "auto" else algorithm
        protocol = "simple" if protocol == "auto" else protocol
    if (algorithm == "auto" or protocol == "auto") and graph is None:
        raise InputError("auto needs the backend's topology graph", where="collective algorithm/protocol",
                         value="auto", accepted="an explicit algorithm and protocol on a backend without a graph")
    if algorithm == "auto" or protocol == "auto":
        cache = _FACTS.setdefault(graph, {})
        facts = cache.get(tuple(nodes))
        if facts is None:
            facts = cache[tuple(nodes)] = topology_facts(graph, nodes)
    if algorithm == "auto":
        if kind in tuning.MODEL_KINDS:
            best = tuning.choose(kind, max(size_bytes, 1), facts)
            if best.algorithm in IN_NETWORK and best.algorithm not in in_network:
                raise InputError(f"NCCL's tuning model picks {best.algorithm} for this {kind} of {size_bytes} bytes "
                                 f"(the topology enables it), but the {backend_name} backend cannot model "
                                 "in-network reduction", where="collective algorithm auto", value=best.algorithm,
                                 accepted="nvls/sharp: false on the switches, or algorithm ring or tree")
            algorithm = best.algorithm
            protocol = best.protocol if protocol == "auto" else protocol
        else:
            algorithm = "direct"
    if protocol == "auto":
        protocol = "simple"
        if kind in tuning.MODEL_KINDS and algorithm in tuning.MODEL_KINDS[kind]:
            protos = [pr for a, pr in tuning.enabled(kind, facts) if a == algorithm]
            protocol = min(protos, key=lambda pr: tuning.cost(kind, algorithm, pr, facts).time_us(
                max(size_bytes, 1))) if protos else "simple"
    if isinstance(sw_latency, SwLatency):
        lat = sw_latency
    elif sw_latency == "nccl":
        hw = facts.intra_hw if facts is not None else _intra_hw(graph, nodes)
        lat = nccl_latency(kind, algorithm, protocol, hw)
    else:
        lat = OFF
    return Plan(algorithm, protocol, lat, WIRE_FACTOR[protocol])


#: largest software latency term accepted from a file: one day, ns (netsim choice: more is a unit mistake)
MAX_SW_LATENCY_NS = 86_400 * 10**9


def parse_sw_latency(value, default, fail):
    """A ``sw_latency`` setting from a file: ``off``, ``nccl`` or ``{launch_ns, step_ns, step_inter_ns}``.

    Durations take units (``3.4us``; a bare number is ns); ``step_inter_ns``
    defaults to ``step_ns``. ``fail(subpath, message, value, accepted)`` reports
    a bad value (it must raise); ``None`` gives ``default``.
    """
    from ..units import UnitError, parse_time_ns
    if value is None:
        return default
    if isinstance(value, str) and value in ("off", "nccl"):
        return value
    keys = ("launch_ns", "step_ns", "step_inter_ns")
    if not isinstance(value, dict):
        fail("", "unknown value", value, "off, nccl or a mapping with " + ", ".join(keys))
    unknown = [k for k in value if k not in keys]
    if unknown:
        fail(f".{unknown[0]}", "unknown field", unknown[0], "one of " + ", ".join(keys))
    out = {}
    for k in keys:
        v = value.get(k)
        if v is None:
            out[k] = out["step_ns"] if k == "step_inter_ns" else 0
            continue
        try:
            out[k] = parse_time_ns(v, default_unit="ns")
        except UnitError:
            fail(f".{k}", "bad duration", v, "a duration such as 3.4us or 3400 (ns)")
        if not 0 <= out[k] <= MAX_SW_LATENCY_NS:
            fail(f".{k}", "out of range", v, "a duration from 0 to 1 day")
    return SwLatency(**out)


def _intra_hw(graph, nodes) -> str:
    if graph is None:
        return "nvlink"
    kinds = {d.get("kind") for x in nodes for _, _, d in graph.edges(x, data=True)}
    return "nvlink" if "nvlink" in kinds else "pci"
