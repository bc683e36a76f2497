"""One flow specification and one validation of ``send``, identical on every backend.

:class:`SendContract` turns the arguments of ``Backend.send(src, dst,
size_bytes, tag, cc=, priority=)`` into a :class:`SendSpec` or raises one
:class:`~netsim.errors.InputError` whose message is the same whichever backend
was called. The rules, checked in this order:

1. ``src`` then ``dst``: a node of the topology, of kind ``gpu`` or ``host``
   (not a switch, NIC, NVSwitch or PCIe switch);
2. ``size_bytes``: an exact integer (``int`` or a NumPy integer; ``bool`` and
   ``float`` rejected, even 1000.0) from 1 to :data:`~.fabric.MAX_FLOW_BYTES`;
3. ``cc``: ``None`` (the backend's ``--cc``) or a registered congestion control;
4. ``priority``: ``None`` (the transport's default: ``roce_priority`` or
   ``tcp_priority``) or an integer 0..7.

A **self-send** (``src == dst``, otherwise valid) is a local copy, as NCCL
treats the own chunk of an all-to-all: it never touches the network, and every
backend completes it at once — its event succeeds at the current time with the
record of :func:`local_copy_record` (FCT 0, ideal FCT 0).

Left out: the cost of a local copy (memory bandwidth; it takes no time), and
routing (each backend's router finds the path).

>>> import networkx as nx
>>> from netsim.network.params import resolve_params
>>> g = nx.Graph(); g.add_node("a", kind="gpu"); g.add_node("s", kind="switch")
>>> c = SendContract(g, resolve_params(), "none")
>>> c.check("a", "a", 10).local
True
>>> c.check("a", "s", 10)
Traceback (most recent call last):
...
netsim.errors.InputError: flow dst: flows start and end at gpu/host nodes, not a switch (got 's'); expected a node of kind gpu or host
>>> c.check("a", "a", 10.0)
Traceback (most recent call last):
...
netsim.errors.InputError: flow size_bytes: flow size must be an integer number of bytes (got 10.0); expected an int from 1 to 2**53 = 9007199254740992 (bool and float rejected)
"""
from __future__ import annotations

import numbers
from contextlib import contextmanager
from typing import Iterator, Mapping, NamedTuple

from ..errors import InputError
from ..records import EMPTY_TAG, FlowRecord, FlowTag, make_record
from ..units import ps_to_ns
from .fabric import ENDPOINT_KINDS, MAX_FLOW_BYTES, MAX_PRIORITY


class SendSpec(NamedTuple):
    """One checked flow: what every backend is built from."""

    src: str
    dst: str
    size_bytes: int        #: payload bytes, 1 .. MAX_FLOW_BYTES
    tag: FlowTag           #: what caused the flow (operation, group, collective, step)
    cc: str                #: congestion control (registered name)
    priority: int          #: IEEE 802.1p priority 0..7 (the transport's default when none was given)
    transport: str         #: the algorithm's transport: tcp or roce
    local: bool            #: src == dst: a local copy, completed at once


def cc_registry() -> dict:
    """All congestion-control classes by name (imports every built-in module of ``netsim.transport.cc``)."""
    from ..transport.cc import load_all
    return load_all()


def default_priority(params: Mapping, transport: str) -> int:
    """Priority of a flow that names none: ``tcp_priority`` for TCP, else ``roce_priority``."""
    return int(params["tcp_priority"] if transport == "tcp" else params["roce_priority"])


class SendContract:
    """The one validation of ``send`` (see the module docstring).

    Parameters
    ----------
    graph : networkx.Graph
        The topology (its node kinds).
    params : mapping
        Resolved network parameters (``roce_priority``, ``tcp_priority``).
    default_cc : str
        The run's ``--cc``; checked here (``--cc: unknown congestion control``).
    """

    def __init__(self, graph, params: Mapping, default_cc: str):
        from ..transport.cc import CLASSES, cc_names, cc_transport
        self.graph = graph
        #: every known algorithm's class by name, each imported on first read (checking a name imports nothing)
        self.registry = CLASSES
        self._names = cc_names()
        self._transport = {name: cc_transport(name) for name in self._names}
        self.default_cc = self.check_cc(default_cc or "none", "--cc")
        self._prio = {name: default_priority(params, t) for name, t in self._transport.items()}
        self._endpoints = {n for n, k in graph.nodes(data="kind") if k in ENDPOINT_KINDS}
        self._paths_ok: set = set()     # (cc, nodes, base RTT) that :meth:`check_path` accepted
        self._cc_resolved: dict = {}    # cc -> its resolved parameters (for check_path)

    def priority_of(self, cc: str) -> int:
        """The default priority of a flow of registered algorithm ``cc`` (its transport's)."""
        return self._prio[cc]

    def check_path(self, cc: str, path, cc_params: Mapping | None, src, dst) -> None:
        """Refuse a send of algorithm ``cc`` on ``path`` (a :class:`netsim.network.path.Path`) it cannot
        run on: the class's ``check_path`` hook (e.g. Swift when the base RTT is at or above its
        fabric target), under ``cc_params`` ``{cc: {key: value}}`` (other keys ignored), once per
        algorithm, path and base RTT. Raises :class:`InputError` naming the flow's path."""
        key = (cc, path.nodes, path.base_rtt_ns)
        if key in self._paths_ok:
            return
        cls = self.registry[cc]
        params = self._cc_resolved.get(cc)
        if params is None:
            over = {k: v for k, v in ((cc_params or {}).get(cc) or {}).items() if k in cls.PARAMS}
            params = self._cc_resolved[cc] = cls.PARAMS.resolve(over)
        refusal = cls.check_path(path.base_rtt_ns, len(path.hops), params)
        if refusal is not None:
            raise InputError(refusal.what, where=f"flow {src} -> {dst}, --cc {cc}", value=refusal.value,
                             accepted=refusal.accepted)
        self._paths_ok.add(key)

    def check_cc(self, name, where: str) -> str:
        """``name`` if it is a registered congestion control, else an :class:`InputError` naming ``where``."""
        if not isinstance(name, str) or name not in self._transport:
            raise InputError("unknown congestion control", where=where, value=name,
                             accepted="one of " + ", ".join(self._names))
        return name

    def _endpoint(self, node, role: str) -> None:
        try:
            if node in self._endpoints:
                return
            known = node in self.graph
        except TypeError:               # unhashable: not a node name
            known = False
        if not known:
            raise InputError("unknown node", where=f"flow {role}", value=node,
                             accepted="a gpu or host node of the topology")
        kind = self.graph.nodes[node].get("kind")
        raise InputError(f"flows start and end at gpu/host nodes, not a {kind}", where=f"flow {role}",
                         value=node, accepted="a node of kind gpu or host")

    @contextmanager
    def in_network(self, src, dst) -> Iterator[None]:
        """Admit, for the ``send`` calls inside, a transfer whose one end is a reducing switch.

        That end must be a node with ``nvls: true`` or ``sharp: true`` (an
        NVSwitch or switch that reduces / replicates in-network, issue 20) and the
        other a gpu or host — or both ends reducing switches (the inner hop of a
        SHARP aggregation tree); anything else is the usual one-line
        :class:`InputError`. Outside the ``with`` block switch endpoints are
        rejected as always.
        """
        nodes = self.graph.nodes

        def reducing(x) -> bool:
            return x in nodes and any(nodes[x].get(f) is True for f in ("nvls", "sharp"))
        if reducing(src) and reducing(dst):
            ends = (src, dst)
        else:
            sw = dst if src in self._endpoints else src
            if not reducing(sw):
                raise InputError("an in-network transfer ends at a switch with nvls: true or sharp: true",
                                 where="in-network flow", value=f"{src}->{dst}",
                                 accepted="a gpu/host and a reducing switch it links to, or two reducing switches")
            self._endpoint(dst if sw == src else src, "dst" if sw == src else "src")
            ends = (sw,)
        self._endpoints.update(ends)
        try:
            yield
        finally:
            self._endpoints.difference_update(ends)

    def check(self, src, dst, size_bytes, tag: FlowTag = EMPTY_TAG, cc: str | None = None,
              priority: int | None = None) -> SendSpec:
        """The :class:`SendSpec` of one ``send``, or :class:`InputError` (one line, same on every backend)."""
        eps = self._endpoints
        try:
            ok = src in eps and dst in eps
        except TypeError:               # unhashable: reported by _endpoint
            ok = False
        if not ok:
            self._endpoint(src, "src")
            self._endpoint(dst, "dst")
        if type(size_bytes) is not int or not 0 < size_bytes <= MAX_FLOW_BYTES:
            size_bytes = self._size(size_bytes)
        name = self.default_cc if cc is None else self.check_cc(cc, "flow cc")
        prio = self._prio[name] if priority is None else self._priority(priority)
        local = src == dst
        # tuple.__new__ directly: what SendSpec(...) does, without its Python-level __new__
        return _new(SendSpec, (src, dst, size_bytes, tag, name, prio, self._transport[name], local))

    @staticmethod
    def _size(size_bytes) -> int:
        if isinstance(size_bytes, bool) or not isinstance(size_bytes, numbers.Integral):
            raise InputError("flow size must be an integer number of bytes", where="flow size_bytes",
                             value=size_bytes, accepted=_SIZES)
        if not 0 < size_bytes <= MAX_FLOW_BYTES:
            raise InputError("flow size out of range", where="flow size_bytes", value=size_bytes,
                             accepted=_SIZES)
        return int(size_bytes)

    @staticmethod
    def _priority(priority) -> int:
        if isinstance(priority, bool) or not isinstance(priority, numbers.Integral):
            raise InputError("flow priority must be an integer", where="flow priority", value=priority,
                             accepted=_PRIOS)
        if not 0 <= priority <= MAX_PRIORITY:
            raise InputError("flow priority out of range", where="flow priority", value=priority,
                             accepted=_PRIOS)
        return int(priority)


_new = tuple.__new__
_SIZES = f"an int from 1 to 2**53 = {MAX_FLOW_BYTES} (bool and float rejected)"
_PRIOS = f"None (the transport's default) or an int 0..{MAX_PRIORITY}"


def local_copy_record(flow_id: int, spec: SendSpec, now_ps: int) -> FlowRecord:
    """The record of a self-send: starts and ends now, FCT 0, ideal FCT 0 (slowdown empty)."""
    now_ns = ps_to_ns(int(now_ps))
    return make_record(flow_id, str(spec.src), str(spec.dst), spec.size_bytes, now_ns, now_ns, 0, spec.tag,
                       cc=spec.cc, priority=spec.priority)
