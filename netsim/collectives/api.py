"""Public entry points: :func:`run_collective` (a SimPy process) and :func:`collective` (a generator).

Both validate their arguments up front (bad input -> :class:`~netsim.errors.InputError`
listing what is accepted), then dispatch to the algorithm modules (each imported
on the first call that uses it, :data:`ALGORITHM_MODULES`), which only ever call
``backend.send`` and wait on events of ``backend.env``.
"""
from __future__ import annotations

import importlib
from typing import Generator

import simpy

from ..errors import InputError
from ..records import EMPTY_TAG, FlowTag
from . import protocol as _proto
from .engine import COLLECTIVE_PARAMS, Run
from .steps import CollectiveResult
from .tuning import PROTOCOLS

#: kind -> accepted algorithms (first = what ``"ring"`` means where ring does not apply)
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "allreduce": ("ring", "tree", "halving_doubling", "hierarchical"),
    "reducescatter": ("ring", "halving_doubling"),
    "allgather": ("ring", "halving_doubling"),
    "broadcast": ("ring", "tree"),
    "reduce": ("ring", "tree"),
    "alltoall": ("direct", "pairwise"),
    "sendrecv": ("direct",),
}
KINDS: tuple[str, ...] = tuple(ALGORITHMS)
#: algorithms a caller may also name: ``auto`` (NCCL's tuning model) and the in-network ones (on backends
#: declaring ``in_network``: nvls, :mod:`.nvls`; collnet, :mod:`.collnet`)
EXTRA_ALGORITHMS = ("auto",) + _proto.IN_NETWORK
SW_LATENCY_CHOICES = ("off", "nccl")
#: algorithm -> the module of this package that runs it, imported on the first call that needs it
ALGORITHM_MODULES: dict[str, str] = {
    "ring": "ring", "tree": "tree", "halving_doubling": "halving_doubling", "hierarchical": "hierarchical",
    "direct": "alltoall", "pairwise": "alltoall", "nvls": "nvls", "collnet": "collnet",
}


_LOADED: dict = {}   # algorithm -> its module, once imported (a dict lookup per collective call)


def _alg(algorithm: str):
    """The module of ``algorithm`` (:data:`ALGORITHM_MODULES`), imported on first use."""
    mod = _LOADED.get(algorithm)
    if mod is None:
        mod = _LOADED[algorithm] = importlib.import_module(f"{__package__}.{ALGORITHM_MODULES[algorithm]}")
    return mod


def _fail(msg: str, where: str, value, accepted: str):
    raise InputError(msg, where=where, value=value, accepted=accepted)


def _validate(backend, kind, nodes, size_bytes, algorithm, channels, chunk_bytes, root, sizes, node_groups):
    if isinstance(kind, str):  # accept all_reduce / all-reduce / AllReduce
        kind = kind.lower().replace("_", "").replace("-", "")
    if isinstance(algorithm, str):  # accept halving-doubling
        algorithm = algorithm.lower().replace("-", "_")
    if kind not in ALGORITHMS:
        _fail("unknown collective", "collective kind", kind, "one of " + ", ".join(KINDS))
    accepted = ALGORITHMS[kind]
    if algorithm == "ring" and "ring" not in accepted:
        algorithm = accepted[0]
    if algorithm not in accepted and algorithm not in EXTRA_ALGORITHMS:
        _fail(f"unknown algorithm for {kind}", "collective algorithm", algorithm,
              "one of " + ", ".join(accepted + EXTRA_ALGORITHMS))
    nodes = list(nodes)
    if not nodes or not all(isinstance(x, str) for x in nodes):
        _fail("nodes must be a non-empty list of node names", "collective nodes", nodes, "e.g. ['s0.gpu0', 's0.gpu1']")
    if len(set(nodes)) != len(nodes):
        _fail("nodes must be distinct", "collective nodes", nodes, "each rank's node once")
    graph = backend.graph
    if graph is not None:
        missing = [x for x in nodes if x not in graph]
        if missing:
            _fail("node not in the topology", "collective nodes", missing[0], "a node of the graph")
    if kind == "sendrecv" and len(nodes) != 2:
        _fail("sendrecv takes nodes=[src, dst]", "collective nodes", nodes, "exactly two nodes")
    if not isinstance(size_bytes, int) or isinstance(size_bytes, bool) or size_bytes < 0:
        _fail("size must be a non-negative integer of bytes", "collective size_bytes", size_bytes, "an int >= 0")
    if not isinstance(channels, int) or channels < 1:
        _fail("channels must be a positive integer", "collective channels", channels, "an int >= 1")
    if chunk_bytes is not None and (not isinstance(chunk_bytes, int) or chunk_bytes < 1):
        _fail("chunk_bytes must be a positive integer or None", "collective chunk_bytes", chunk_bytes,
              "an int >= 1 or None")
    n = len(nodes)
    if kind in ("broadcast", "reduce") and not (isinstance(root, int) and 0 <= root < n):
        _fail("root must index nodes", "collective root", root, f"an int in 0..{n - 1}")
    if sizes is not None:
        if kind != "alltoall":
            _fail("sizes is only for alltoall", "collective sizes", "given", "sizes=None")
        ok = len(sizes) == n and all(len(row) == n for row in sizes)
        if not ok or not all(isinstance(v, int) and v >= 0 for row in sizes for v in row):
            _fail("sizes must be an n x n matrix of byte counts", "collective sizes", sizes,
                  f"{n} rows of {n} non-negative ints")
    if algorithm == "hierarchical":
        node_groups = _groups(graph, nodes, node_groups)
    elif algorithm == "halving_doubling" and kind != "allreduce" and not _alg(algorithm).is_pow2(n):
        algorithm = "ring"  # documented fallback
    return kind, algorithm, nodes, node_groups


def _check_protocol(protocol, sw_latency):
    if isinstance(protocol, str):
        protocol = protocol.lower()
    if protocol not in PROTOCOLS + ("auto",):
        _fail("unknown protocol", "collective protocol", protocol, "one of auto, " + ", ".join(PROTOCOLS))
    if isinstance(sw_latency, _proto.SwLatency):
        vals = (sw_latency.launch_ns, sw_latency.step_ns, sw_latency.step_inter_ns)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e15 for v in vals):
            _fail("software latency must be finite and >= 0 ns", "collective sw_latency", sw_latency,
                  "SwLatency(launch_ns, step_ns, step_inter_ns) with values in [0, 1e15) ns")
    elif sw_latency not in SW_LATENCY_CHOICES:
        _fail("unknown software latency", "collective sw_latency", sw_latency,
              "off, nccl or a netsim.collectives.SwLatency")
    return protocol


def _groups(graph, nodes, node_groups):
    if node_groups is None:
        if graph is None:
            _fail("hierarchical needs node_groups", "collective node_groups", None, "a list of lists of nodes")
        from ..topology.domains import domain_keys, hierarchical_groups
        node_groups = hierarchical_groups(nodes, domain_keys(graph))   # server attribute, else scale-up domain
    groups = [list(g) for g in node_groups]
    flat = [x for g in groups for x in g]
    if sorted(flat) != sorted(nodes):
        _fail("node_groups must partition nodes", "collective node_groups", node_groups,
              "every node in exactly one group")
    if len({len(g) for g in groups}) != 1:
        _fail("every server group must have the same number of ranks", "collective node_groups",
              [len(g) for g in groups], "equal group sizes")
    return groups


def collective(backend, kind: str, nodes: list[str], size_bytes: int, *, algorithm: str = "ring",
               channels: int = 1, chunk_bytes: int | None = None, tag: FlowTag = EMPTY_TAG, root: int = 0,
               sizes: list[list[int]] | None = None, node_groups: list[list[str]] | None = None,
               window: int | None = None, protocol: str = "simple",
               sw_latency="off") -> Generator[simpy.Event, object, CollectiveResult]:
    """Generator form of :func:`run_collective`; use as ``result = yield from collective(...)``.

    Arguments are validated when the generator first runs. On a backend with a memo
    (``backend.memo``, ``--memo on``) the call is one segment of it: replayed exactly when it
    repeats one already simulated, else simulated (:mod:`netsim.backends.packet.memo`).
    """
    kw = dict(algorithm=algorithm, channels=channels, chunk_bytes=chunk_bytes, tag=tag, root=root, sizes=sizes,
              node_groups=node_groups, window=window, protocol=protocol, sw_latency=sw_latency)
    memo = backend.memo
    if memo is None:
        return (yield from _collective(backend, kind, nodes, size_bytes, **kw))
    key = (kind, tuple(nodes), size_bytes, algorithm, channels, chunk_bytes, root,
           None if sizes is None else tuple(map(tuple, sizes)),
           None if node_groups is None else tuple(map(tuple, node_groups)), window, protocol, repr(sw_latency))
    return (yield from memo.segment(key, lambda b: _collective(b, kind, nodes, size_bytes, **kw), tag))


def _collective(backend, kind, nodes, size_bytes, *, algorithm, channels, chunk_bytes, tag, root, sizes,
                node_groups, window, protocol, sw_latency):
    """The body of :func:`collective` on ``backend``."""
    kind, algorithm, nodes, node_groups = _validate(backend, kind, nodes, size_bytes, algorithm, channels,
                                                    chunk_bytes, root, sizes, node_groups)
    protocol = _check_protocol(protocol, sw_latency)
    graph = backend.graph
    pl = _proto.plan(graph, kind, nodes, size_bytes, algorithm, protocol, sw_latency,
                     backend.name, _in_network(backend))
    algorithm = pl.algorithm
    switch = _nvls_checked(graph, kind, nodes, pl) if algorithm == "nvls" else None
    sharp = _collnet_checked(graph, kind, nodes, pl, node_groups) if algorithm == "collnet" else None
    if algorithm == "halving_doubling" and kind != "allreduce" and not _alg(algorithm).is_pow2(len(nodes)):
        algorithm = "ring"  # documented fallback (auto never picks it)
    env = backend.env
    lat = pl.latency
    window = window or COLLECTIVE_PARAMS["connection_window_chunks"].default
    domain_of = _proto.domains(graph) if lat.step_inter_ns != lat.step_ns and graph is not None else None
    run_in = None
    if switch is not None or sharp is not None:
        _nvls = _alg("nvls")
        in_chunk = chunk_bytes or _nvls.NVLS_PARAMS["nvls_chunk_bytes"].default     # NCCL's in-network chunk
        run_in = Run(_nvls.InNetworkPort(backend), kind, tag, in_chunk, window, latency=lat,
                     wire_factor=pl.wire_factor)
    run = run_in if switch is not None else Run(backend, kind, tag, chunk_bytes, window, latency=lat,
                                                 wire_factor=pl.wire_factor, domain_of=domain_of)
    start = env.now
    n = len(nodes)
    total = size_bytes if sizes is None else sum(map(sum, sizes))
    if n > 1 and total > 0:
        if lat.launch_ns:
            yield env.timeout(round(lat.launch_ns * 1000))
        if switch is not None:
            yield from _alg("nvls").run_nvls(run, kind, nodes, size_bytes, channels, switch)
        elif sharp is not None:
            yield from _alg("collnet").allreduce(run, run_in, size_bytes, channels, *sharp)
        else:
            yield from _dispatch(run, kind, algorithm, nodes, size_bytes, channels, root, sizes, node_groups)
    flows, sent = run.flows, run.bytes_sent
    if run_in is not None and run_in is not run:
        flows, sent = flows + run_in.flows, sent + run_in.bytes_sent
    return CollectiveResult(kind, algorithm, n, size_bytes, start, env.now, flows, sent, pl.protocol)


def _in_network(backend) -> tuple[str, ...]:
    """In-network algorithms ``backend`` runs: nvls and collnet when it declares the ``in_network`` capability."""
    from ..backends.base import IN_NETWORK
    return ("nvls", "collnet") if IN_NETWORK in backend.capabilities else ()


def _nvls_checked(graph, kind, nodes, pl) -> str | None:
    """The NVSwitch an NVLS call runs through (None when nothing is sent); InputError when it cannot run."""
    if len(nodes) < 2:
        return None
    _nvls = _alg("nvls")
    _nvls.check_kind(kind)
    if pl.protocol != "simple":
        _fail("nvls runs the Simple protocol only (NCCL enables no LL/LL128 for NVLS)", "collective protocol",
              pl.protocol, "simple or auto")
    return _nvls.nvls_switch(graph, nodes)


def _collnet_checked(graph, kind, nodes, pl, node_groups):
    """``(server groups, SHARP switch per rail)`` of a CollNet call (None when nothing is sent)."""
    if len(nodes) < 2:
        return None
    _collnet = _alg("collnet")
    _collnet.check_kind(kind)
    if pl.protocol != "simple":
        _fail("collnet runs the Simple protocol only (NCCL enables no LL/LL128 for CollNet)",
              "collective protocol", pl.protocol, "simple or auto")
    groups = _groups(graph, nodes, node_groups)
    _collnet.check_groups(groups)
    return groups, _collnet.rail_switches(graph, groups)


def _dispatch(run, kind, algorithm, nodes, size, channels, root, sizes, node_groups):
    mod = _alg(algorithm)
    if kind == "alltoall":
        m = sizes if sizes is not None else mod.uniform_matrix(len(nodes), size)
        return (mod.direct if algorithm == "direct" else mod.pairwise)(run, nodes, m, channels)
    if kind == "sendrecv":
        return mod.sendrecv(run, nodes, size, channels)
    if algorithm == "hierarchical":
        return mod.allreduce(run, nodes, size, channels, node_groups)
    fn = getattr(mod, kind)
    if kind in ("broadcast", "reduce"):
        return fn(run, nodes, size, channels, root=root)
    return fn(run, nodes, size, channels)


def run_collective(backend, kind: str, nodes: list[str], size_bytes: int, *, algorithm: str = "ring",
                   channels: int = 1, chunk_bytes: int | None = None, tag: FlowTag = EMPTY_TAG, root: int = 0,
                   sizes: list[list[int]] | None = None, node_groups: list[list[str]] | None = None,
                   window: int | None = None, protocol: str = "simple", sw_latency="off") -> simpy.Process:
    """Start a collective on ``backend`` now; return its SimPy process.

    The process's value is a :class:`~netsim.collectives.steps.CollectiveResult`.
    Arguments are validated before the process starts (an
    :class:`~netsim.errors.InputError` is raised here, not inside the
    simulation). See :mod:`netsim.collectives` for every argument.
    """
    kind_n, algo_n, nodes_n, _ = _validate(backend, kind, nodes, size_bytes, algorithm, channels, chunk_bytes,
                                           root, sizes, node_groups)
    if algo_n in _proto.IN_NETWORK:   # fail here, not inside the simulation
        _proto.plan(None, kind_n, nodes_n, size_bytes, algo_n, "simple", "off", backend.name,
                    _in_network(backend))
        if algo_n == "nvls" and len(nodes_n) > 1:
            _nvls = _alg("nvls")
            _nvls.check_kind(kind_n)
            _nvls.nvls_switch(backend.graph, nodes_n)
        if algo_n == "collnet" and len(nodes_n) > 1:
            _collnet = _alg("collnet")
            _collnet.check_kind(kind_n)
            groups = _groups(backend.graph, nodes_n, node_groups)
            _collnet.check_groups(groups)
            _collnet.rail_switches(backend.graph, groups)
    _check_protocol(protocol, sw_latency)
    return backend.env.process(collective(backend, kind, nodes, size_bytes, algorithm=algorithm,
                                          channels=channels, chunk_bytes=chunk_bytes, tag=tag, root=root,
                                          sizes=sizes, node_groups=node_groups, window=window,
                                          protocol=protocol, sw_latency=sw_latency))
